/**
 * The requests nginx refuses itself, before any Kong code runs (ngx_http_request.c,
 * ngx_http_process_request_header, and the find-config phase of ngx_http_core_module.c), in
 * nginx's order. Each refusal is answered by Kong's error handler (special-response.ts) and closes
 * the connection, as nginx does for these errors.
 */
import type { IncomingMessage } from 'node:http';
import type { HeaderMap } from '../request-context';
import { HEADER_LINE_LIMIT, HEADER_TOTAL_LIMIT, type NginxLimits } from './limits';

/** The status nginx answers with, or null when the request goes on to Kong. */
export function nginxRefusal(req: IncomingMessage, headers: HeaderMap, limits: NginxLimits): number | null {
  // "client sent invalid request" (a CONNECT's authority-form target), "HTTP version not supported"
  if (!/^(\/|[a-z][a-z0-9+.-]*:\/\/)/i.test(req.url ?? '')) return 400;
  if (req.httpVersionMajor > 1) return 505;
  const requestLine = `${req.method ?? ''} ${req.url ?? ''} HTTP/${req.httpVersion}`;
  // "client sent too long URI"
  if (requestLine.length + 2 > HEADER_LINE_LIMIT) return 414;
  // "client sent too large request or too long header line"
  let total = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const line = (req.rawHeaders[i] ?? '').length + 2 + (req.rawHeaders[i + 1] ?? '').length + 2;
    if (line > HEADER_LINE_LIMIT) return 494;
    total += line;
  }
  if (total > HEADER_TOTAL_LIMIT) return 494;

  const host = headers.get('host') ?? [];
  // "client sent HTTP/1.1 request without "Host" header", "client sent duplicate host header"
  if ((host.length === 0 && req.httpVersion !== '1.0') || host.length > 1) return 400;

  const te = headers.get('transfer-encoding');
  if (te) {
    // "client sent HTTP/1.0 request with "Transfer-Encoding" header"
    if (req.httpVersion === '1.0') return 400;
    // "client sent duplicate header line" (a unique header since nginx 1.23)
    if (te.length > 1) return 400;
    // only exactly "chunked" is understood: "client sent unknown "Transfer-Encoding""
    if ((te[0] ?? '').trim().toLowerCase() !== 'chunked') return 501;
  }

  // "client sent CONNECT method", "client sent TRACE method"
  if (req.method === 'CONNECT' || req.method === 'TRACE') return 405;

  // find-config phase: "client intended to send too large body"
  const length = headers.get('content-length')?.[0];
  if (length !== undefined && limits.maxBodyBytes !== null && Number(length) > limits.maxBodyBytes) return 413;
  return null;
}
