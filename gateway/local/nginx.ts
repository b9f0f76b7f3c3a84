/** What nginx does before and around Kong for our configuration (ngx_http_request.c, ngx_http_parse.c, nginx_kong.lua). */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The request's headers as nginx keeps them: lower-cased names, every value in arrival order. */
export type HeaderMap = Map<string, readonly string[]>;

export function headerMap(raw: readonly string[]): HeaderMap {
  const map = new Map<string, string[]>();
  for (let i = 0; i < raw.length; i += 2)
    map.set(raw[i]!.toLowerCase(), [...(map.get(raw[i]!.toLowerCase()) ?? []), raw[i + 1]!]);
  return map;
}

/** large_client_header_buffers 4 8k. */
export const HEADER_LINE_LIMIT = 8 * 1024;
export const HEADER_TOTAL_LIMIT = 4 * HEADER_LINE_LIMIT;
/** gateway/kong/nginx-proxy-jobs.conf: more request headers than Kong's plugins read is a 431. */
export const HEADER_COUNT_LIMIT = 100;
/** Kong's client_max_body_size is 0 (nginx spills to disk); this stand-in buffers in memory, so it stops here. */
export const LOCAL_MAX_BODY = 8 * 1024 * 1024;
/** kong.conf nginx_proxy_client_body_timeout. */
export const BODY_TIMEOUT_MS = 10_000;

/** The status nginx answers with, or null when the request goes on to Kong. */
export function nginxRefusal(req: IncomingMessage, headers: HeaderMap): number | null {
  if (`${req.method} ${req.url} HTTP/${req.httpVersion}`.length + 2 > HEADER_LINE_LIMIT) return 414;
  if (req.httpVersionMajor > 1) return 505;
  let total = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const line = req.rawHeaders[i]!.length + req.rawHeaders[i + 1]!.length + 4;
    if (line > HEADER_LINE_LIMIT) return 494;
    total += line;
  }
  if (total > HEADER_TOTAL_LIMIT) return 494;
  const host = headers.get('host') ?? [];
  if ((host.length === 0 && req.httpVersion !== '1.0') || host.length > 1) return 400;
  const te = headers.get('transfer-encoding');
  if (te) {
    if (req.httpVersion === '1.0') return 400;
    // a second Transfer-Encoding line is a duplicate header (400), as with Content-Length
    if (te.length > 1) return 400;
    if (te[0]!.trim().toLowerCase() !== 'chunked') return 501;
  }
  // nginx parses a target that is neither a path nor an absolute URI (CONNECT's host:port) as a bad request line.
  if (!/^(\/|[a-z][a-z0-9+.-]*:\/\/)/i.test(req.url ?? '')) return 400;
  if (req.method === 'CONNECT' || req.method === 'TRACE') return 405;
  // Counted in nginx's server rewrite phase: after the header checks above, before the body's size.
  if (req.rawHeaders.length / 2 > HEADER_COUNT_LIMIT) return 431;
  const length = headers.get('content-length')?.[0];
  if (length !== undefined && Number(length) > LOCAL_MAX_BODY) return 413;
  return null;
}

export type ParserError = Error & { code?: string; reason?: string; rawPacket?: Buffer };

/** nginx's status for bytes Node's parser refused, or null to close the connection silently. */
export function parserErrorStatus(err: ParserError): number | null {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const lineEnd = err.rawPacket?.toString('latin1').indexOf('\n') ?? -1;
    return lineEnd === -1 || lineEnd + 1 > HEADER_LINE_LIMIT ? 414 : 494;
  }
  if (err.code === 'HPE_INVALID_TRANSFER_ENCODING') {
    const lines = err.rawPacket?.toString('latin1').match(/^transfer-encoding[ \t]*:/gim) ?? [];
    return /content-length/i.test(err.reason ?? '') || lines.length > 1 ? 400 : 501;
  }
  // Node reads versions up to 2.x; nginx answers every major version above 1 with 505.
  if (
    err.code === 'HPE_INVALID_VERSION' &&
    /^\S+ \S+ HTTP\/[1-9]\d*\.\d+\r?\n/.test(err.rawPacket?.toString('latin1') ?? '')
  )
    return 505;
  return err.code?.startsWith('HPE_') && err.code !== 'HPE_HEADERS_TIMEOUT' ? 400 : null;
}

export const hasBody = (headers: HeaderMap): boolean =>
  headers.has('content-length') || headers.has('transfer-encoding');

/** Kong answers a lone `Expect: 100-continue` before routing (measured: on its 404s and 401s too). */
export function continueIfExpected(headers: HeaderMap, res: ServerResponse): void {
  if (hasBody(headers) && headers.get('expect')?.join(', ').trim().toLowerCase() === '100-continue')
    res.writeContinue();
}

export type BodyResult = { body: Buffer | null } | { tooLarge: true };

/** The whole body (null when the request has none), or tooLarge past LOCAL_MAX_BODY. */
export function readBody(req: IncomingMessage, headers: HeaderMap): Promise<BodyResult> {
  if (!hasBody(headers)) return Promise.resolve({ body: null });
  const stalled = setTimeout(() => req.socket.destroy(), BODY_TIMEOUT_MS);
  const body = new Promise<BodyResult>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      stalled.refresh();
      if (size <= LOCAL_MAX_BODY) chunks.push(chunk);
      else {
        req.off('data', onData);
        req.resume();
        resolve({ tooLarge: true });
      }
    };
    req.on('data', onData);
    req.once('end', () => resolve({ body: Buffer.concat(chunks) }));
    req.once('error', reject);
    req.once('aborted', () => reject(new Error('client closed the request')));
  });
  return body.finally(() => clearTimeout(stalled));
}
