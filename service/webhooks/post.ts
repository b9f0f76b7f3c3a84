import type { ConnectionOptions } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { checkUrlForm, guardedLookup, UrlRefused, type Lookup, type UrlPolicy } from './url-guard';

/** A delivery's limits (docs/decisions.md, Webhooks). */
export const DELIVERY_TIMEOUT_MS = 10_000;
export const ANSWER_LIMIT_BYTES = 64 * 1024;

/**
 * Every way a delivery fails, as its owner reads it (lastError, attempts): one word per class, nothing about
 * our network or resolver; a refused, unreachable, unresolvable or not-allowed address is one `connection failed`.
 */
export const DELIVERY_ERRORS = {
  timeout: 'timeout',
  connection: 'connection failed',
  tls: 'TLS failed',
  tooLarge: 'answer too large',
  http: (status: number) => `HTTP ${status}` as const,
} as const;
export type DeliveryError = 'timeout' | 'connection failed' | 'TLS failed' | 'answer too large' | `HTTP ${number}`;

export type PostOutcome =
  | { ok: true; status: number }
  | {
      ok: false;
      status?: number;
      error: DeliveryError;
      /** Never contacted: the URL or its addresses are not allowed. */
      refused?: boolean;
      /** What a 429 or 503's Retry-After asked for, in ms from now. */
      retryAfterMs?: number;
      /** The cause for operators' logs (an errno code, the guard's reason); never shown to the partner. */
      detail?: string;
    };

export interface PostOptions {
  policy: UrlPolicy;
  /** From when the request is written to a connection to its whole answer. */
  timeoutMs?: number;
  lookup?: Lookup;
  /** The dispatcher's connection pool (deliveryAgent: it has the lookup); without one, a pool is made for this delivery and closed after it. */
  agent?: Agent;
  /** performance.now() after which nothing is sent and an answer is no longer waited for (the walk's lease). */
  deadline?: number;
}

/**
 * Keep-alive connections to the receivers, each opened through the guarded lookup (only checked
 * addresses, no second resolution) and never following a redirect. No limit per origin: a walk has one
 * request in flight, so subscriptions behind one host never queue for each other's connections.
 * `tls` is for tests' own CAs.
 */
export function deliveryAgent(
  policy: UrlPolicy,
  options: { lookup?: Lookup; tls?: ConnectionOptions; connectTimeoutMs?: number } = {},
): Agent {
  const lookup = guardedLookup(policy, options.lookup) as unknown as ConnectionOptions['lookup'];
  return new Agent({
    pipelining: 1,
    connect: { ...options.tls, lookup, timeout: options.connectTimeoutMs ?? DELIVERY_TIMEOUT_MS },
  });
}

/** A subscription's URL, parsed and its literal address and scheme checked once: a walk posts many events to it. */
export type Target = { origin: string; path: string } | { refused: PostOutcome };

const refusedBy = (error: UrlRefused): PostOutcome => ({
  ok: false,
  refused: true,
  error: DELIVERY_ERRORS.connection,
  detail: `not contacted: ${error.message}`,
});

export function deliveryTarget(raw: string, policy: UrlPolicy): Target {
  try {
    const url = checkUrlForm(raw, policy);
    return { origin: url.origin, path: `${url.pathname}${url.search}` };
  } catch (error) {
    if (error instanceof UrlRefused) return { refused: refusedBy(error) };
    throw error;
  }
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;
const CONNECT_TIMEOUT = 'UND_ERR_CONNECT_TIMEOUT';

/** A failure before any answer, in the vocabulary: the TLS handshake's, else the connection's. */
function failureOf(error: Error): PostOutcome {
  const code = (error as NodeJS.ErrnoException).code ?? error.name;
  if (error instanceof UrlRefused) return refusedBy(error);
  if (TLS_CODES.test(code) || /\b(SSL|TLS)\b/.test(error.message))
    return { ok: false, error: DELIVERY_ERRORS.tls, detail: code };
  return { ok: false, error: DELIVERY_ERRORS.connection, detail: code === CONNECT_TIMEOUT ? 'connect timeout' : code };
}

/** Retry-After as delay-seconds or an HTTP date (against the answer's own Date when it has one), in ms; undefined when absent or unreadable. */
export function retryAfterMs(
  value: string | undefined,
  date: string | undefined,
  now = Date.now(),
): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  const from = date !== undefined && !Number.isNaN(Date.parse(date)) ? Date.parse(date) : now;
  return Math.max(0, at - from);
}

const RETRY_AFTER_STATUSES = new Set([429, 503]);

/** POSTs one event to checked addresses only, no redirects, the answer read to 64 KB within the timeout; only a 2xx delivers. */
export function postEvent(
  to: string | Target,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<PostOutcome> {
  const target = typeof to === 'string' ? deliveryTarget(to, options.policy) : to;
  if ('refused' in target) return Promise.resolve(target.refused);
  const agent =
    options.agent ?? deliveryAgent(options.policy, { lookup: options.lookup, connectTimeoutMs: options.timeoutMs });
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  if (options.deadline !== undefined && performance.now() >= options.deadline)
    return Promise.resolve({ ok: false, error: DELIVERY_ERRORS.timeout, detail: 'lease ended before sending' });

  const sent = new Promise<PostOutcome>((resolve) => {
    let settled = false;
    let status: number | undefined;
    let retryAfter: number | undefined;
    let read = 0;
    let abort: ((reason?: Error) => void) | undefined;
    let answerTimer: NodeJS.Timeout | undefined;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(answerTimer);
      clearTimeout(leaseTimer);
      resolve(outcome);
    };
    // Settled first, then the connection dropped: what undici reports for the abort is not the outcome.
    const giveUp = (outcome: PostOutcome) => {
      finish(outcome);
      abort?.(new Error('delivery ended'));
    };
    const timedOut = () => giveUp({ ok: false, error: DELIVERY_ERRORS.timeout });
    // The lease bounds everything, waiting for a connection included; the timeout runs from the write.
    const leaseTimer =
      options.deadline === undefined
        ? undefined
        : setTimeout(timedOut, Math.max(0, options.deadline - performance.now()));
    const answerOf = (): PostOutcome => {
      const code = status!;
      if (code >= 200 && code < 300) return { ok: true, status: code };
      return {
        ok: false,
        status: code,
        error: DELIVERY_ERRORS.http(code),
        ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
      };
    };
    // undici's controller handler: the request starts on its connection, then the answer's start, data and end.
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (controller) => {
        abort = (reason) => controller.abort(reason ?? new Error('delivery ended'));
        if (settled) return controller.abort(new Error('delivery ended'));
        answerTimer = setTimeout(timedOut, timeoutMs);
      },
      onResponseStart: (_controller, statusCode, headers) => {
        status = statusCode;
        const named = (name: string) => {
          const value = headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        if (RETRY_AFTER_STATUSES.has(statusCode)) retryAfter = retryAfterMs(named('retry-after'), named('date'));
      },
      onResponseData: (_controller, chunk) => {
        read += chunk.length;
        // Past the limit the answer is dropped with its connection: an answer not read whole is not an acknowledgement.
        if (read > ANSWER_LIMIT_BYTES) giveUp({ ok: false, status, error: DELIVERY_ERRORS.tooLarge });
      },
      onResponseEnd: () => finish(answerOf()),
      onResponseError: (_controller, error) => {
        if (status !== undefined)
          return finish({ ok: false, status, error: DELIVERY_ERRORS.connection, detail: 'answer cut off' });
        finish(failureOf(error));
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
