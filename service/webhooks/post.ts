import http from 'node:http';
import https from 'node:https';
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
  /** Keep-alive agents, one per scheme, shared by a dispatcher's deliveries. */
  agents?: { http: http.Agent; https: https.Agent };
}

export function keepAliveAgents(): { http: http.Agent; https: https.Agent } {
  return { http: new http.Agent({ keepAlive: true, maxSockets: 4 }), https: new https.Agent({ keepAlive: true, maxSockets: 4 }) };
}

/** A subscription's URL, parsed and its literal address and scheme checked once: a walk posts many events to it. */
export type Target = { url: URL; secure: boolean } | { refused: PostOutcome };

export function deliveryTarget(raw: string, policy: UrlPolicy): Target {
  try {
    const url = checkUrlForm(raw, policy);
    return { url, secure: url.protocol === 'https:' };
  } catch (error) {
    if (error instanceof UrlRefused) return { refused: { ok: false, refused: true, error: `not contacted: ${error.message}` } };
    throw error;
  }
}

/** POSTs one event to checked addresses only, no redirects, the answer read to 64 KB within the timeout; only a 2xx delivers. */
export function postEvent(to: string | Target, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostOutcome> {
  const target = typeof to === 'string' ? deliveryTarget(to, options.policy) : to;
  if ('refused' in target) return Promise.resolve(target.refused);
  const { url, secure } = target;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = (secure ? https : http).request(url, {
      method: 'POST',
      agent: options.agents?.[secure ? 'https' : 'http'],
      lookup: guardedLookup(options.policy, options.lookup) as unknown as typeof import('node:dns').lookup,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'job-listings-webhooks/1' },
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ ok: false, error: `no answer within ${timeoutMs / 1000} s` });
    }, timeoutMs);
    request.on('error', (error) => {
      if (error instanceof UrlRefused) return finish({ ok: false, refused: true, error: `not contacted: ${error.message}` });
      finish({ ok: false, error: `connection failed: ${(error as NodeJS.ErrnoException).code ?? error.message}` });
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Past the limit the answer is dropped with its connection; the status already decided.
        if (read > ANSWER_LIMIT_BYTES) {
          response.destroy();
          settle();
        }
      });
      const settle = () =>
        finish(
          status >= 200 && status < 300
            ? { ok: true, status }
            : { ok: false, status, error: status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}` },
        );
      response.on('end', settle);
      response.on('error', () => settle());
      response.on('close', () => (read <= ANSWER_LIMIT_BYTES && !response.complete ? finish({ ok: false, status, error: `HTTP ${status}, answer cut off` }) : settle()));
    });
    request.end(body);
  });
}
