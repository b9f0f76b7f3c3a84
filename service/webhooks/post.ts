import type { ConnectionOptions } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { checkUrlForm, guardedLookup, UrlRefused, type Lookup, type UrlPolicy } from './url-guard';

/** A delivery's limits (docs/decisions.md, Webhooks). */
export const DELIVERY_TIMEOUT_MS = 10_000;
export const ANSWER_LIMIT_BYTES = 64 * 1024;

export type PostOutcome =
  | { ok: true; status: number }
  | { ok: false; status?: number; error: string; refused?: boolean };

export interface PostOptions {
  policy: UrlPolicy;
  timeoutMs?: number;
  lookup?: Lookup;
  /** The dispatcher's connection pool (deliveryAgent: it has the lookup); without one, a pool is made for this delivery and closed after it. */
  agent?: Agent;
}

/**
 * Keep-alive connections to the receivers, each opened through the guarded lookup (only checked
 * addresses, no second resolution) and never following a redirect. `tls` is for tests' own CAs.
 */
export function deliveryAgent(policy: UrlPolicy, options: { lookup?: Lookup; tls?: ConnectionOptions } = {}): Agent {
  const lookup = guardedLookup(policy, options.lookup) as unknown as ConnectionOptions['lookup'];
  return new Agent({ connections: 4, pipelining: 1, connect: { ...options.tls, lookup } });
}

/** A subscription's URL, parsed and its literal address and scheme checked once: a walk posts many events to it. */
export type Target = { origin: string; path: string } | { refused: PostOutcome };

export function deliveryTarget(raw: string, policy: UrlPolicy): Target {
  try {
    const url = checkUrlForm(raw, policy);
    return { origin: url.origin, path: `${url.pathname}${url.search}` };
  } catch (error) {
    if (error instanceof UrlRefused) return { refused: { ok: false, refused: true, error: `not contacted: ${error.message}` } };
    throw error;
  }
}

const answerOf = (status: number): PostOutcome =>
  status >= 200 && status < 300
    ? { ok: true, status }
    : { ok: false, status, error: status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}` };

/** POSTs one event to checked addresses only, no redirects, the answer read to 64 KB within the timeout; only a 2xx delivers. */
export function postEvent(to: string | Target, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostOutcome> {
  const target = typeof to === 'string' ? deliveryTarget(to, options.policy) : to;
  if ('refused' in target) return Promise.resolve(target.refused);
  const agent = options.agent ?? deliveryAgent(options.policy, { lookup: options.lookup });
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  const sent = new Promise<PostOutcome>((resolve) => {
    let settled = false;
    let status: number | undefined;
    let read = 0;
    let abort: ((reason?: Error) => void) | undefined;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    // Settled first, then the connection dropped: what undici reports for the abort is not the outcome.
    const giveUp = (outcome: PostOutcome) => {
      finish(outcome);
      abort?.(new Error('delivery ended'));
    };
    const timer = setTimeout(() => giveUp({ ok: false, error: `no answer within ${timeoutMs / 1000} s` }), timeoutMs);
    const handler: Dispatcher.DispatchHandlers = {
      onConnect: (abortRequest) => {
        abort = abortRequest;
        if (settled) abortRequest(new Error('delivery ended'));
      },
      onHeaders: (statusCode) => {
        status = statusCode;
        return true;
      },
      onData: (chunk) => {
        read += chunk.length;
        // Past the limit the answer is dropped with its connection; the status already decided.
        if (read > ANSWER_LIMIT_BYTES) giveUp(answerOf(status!));
        return true;
      },
      onComplete: () => finish(answerOf(status!)),
      onError: (error) => {
        if (error instanceof UrlRefused) return finish({ ok: false, refused: true, error: `not contacted: ${error.message}` });
        if (status !== undefined) return finish({ ok: false, status, error: `HTTP ${status}, answer cut off` });
        finish({ ok: false, error: `connection failed: ${(error as NodeJS.ErrnoException).code ?? error.message}` });
      },
    };
    agent.dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'job-listings-webhooks/1' },
        body,
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      handler,
    );
  });
  return options.agent ? sent : sent.finally(() => agent.destroy());
}
