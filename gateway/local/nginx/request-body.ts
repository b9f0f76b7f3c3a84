/**
 * Reading the request body the way nginx does for Kong: only when something needs it (a plugin,
 * or proxying with `proxy_request_buffering on`), answering `Expect: 100-continue` at that moment
 * (ngx_http_read_client_request_body sends "100 Continue" when it starts reading), and stopping
 * at a size limit.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HeaderMap } from '../request-context';

export type BodyResult = { body: Buffer | null } | { tooLarge: true };

/** Whether the request carries a body at all (Content-Length or Transfer-Encoding). */
export function hasBody(headers: HeaderMap): boolean {
  return headers.has('content-length') || headers.has('transfer-encoding');
}

const continued = new WeakSet<ServerResponse>();
const NO_BODY: BodyResult = Object.freeze({ body: null });

function sendContinue(headers: HeaderMap, res: ServerResponse): void {
  // Several Expect lines are joined as Node's req.headers joins them, so only a lone 100-continue counts.
  const expect = headers.get('expect')?.join(', ');
  if (expect && expect.trim().toLowerCase() === '100-continue' && !continued.has(res) && !res.headersSent) {
    continued.add(res);
    res.writeContinue();
  }
}

/**
 * The whole body, or `tooLarge` once more than `limit` bytes arrived (the rest is then drained so
 * the answer can still be delivered). `body` is null when the request has no body.
 */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number | null, headers: HeaderMap): Promise<BodyResult> {
  if (!hasBody(headers)) return Promise.resolve(NO_BODY);
  sendContinue(headers, res);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (limit !== null && size > limit) {
        cleanup();
        req.resume();
        resolve({ tooLarge: true });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve({ body: Buffer.concat(chunks) });
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onAborted = (): void => onError(new Error('client closed the request'));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('aborted', onAborted);
  });
}
