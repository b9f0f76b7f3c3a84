/**
 * What Kong 3.9.1 answers when nginx itself refuses a request. nginx_kong.lua routes these statuses
 * to Kong's error handler (`error_page 400 404 405 408 411 412 413 414 417 /kong_error_handler`,
 * `error_page 494 =494 ...`, `error_page 500 502 503 504 ...`), which answers through the error
 * template with kong/error_handlers.lua's BODIES messages (494 is turned into 400). Any other
 * status gets nginx's own HTML page, as Kong's patched
 * OpenResty writes it (build/openresty/patches/nginx-1.25.3_02-remove-server-tokens-from-special-
 * responses-output.patch removes the "openresty" line), except 501 (an unknown Transfer-Encoding)
 * and 505 (HTTP/2.0 and above on the request line), which gateway/kong/nginx-proxy-jobs.conf
 * answers in the API's error shape.
 */
import type { ErrorTemplate } from '../error-template';
import { renderError } from '../error-template';
import type { Exit } from '../plugins/definition';

/** kong/error_handlers.lua BODIES. */
const BODIES: Record<number, string> = {
  400: 'Bad request',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  411: 'Length required',
  412: 'Precondition failed',
  413: 'Payload too large',
  414: 'URI too long',
  417: 'Expectation failed',
  494: 'Request header or cookie too large',
  500: 'An unexpected error occurred',
  502: 'An invalid response was received from the upstream server',
  503: 'The upstream server is currently unavailable',
  504: 'The upstream server is timing out',
};

const ERROR_PAGE = new Set([400, 404, 405, 408, 411, 412, 413, 414, 417, 494, 500, 502, 503, 504]);

const REASONS: Record<number, string> = {};

/** The two nginx answers gateway/kong/nginx-proxy-jobs.conf gives the API's error shape (same messages). */
const JOBS_PAGES: Record<number, string> = {
  501: 'Transfer-Encoding not supported: send a body with Content-Length or Transfer-Encoding: chunked',
  505: 'HTTP version not supported: use HTTP/1.1',
};

/** nginx's answer to a request it refuses itself; the connection is closed after it. */
export function specialResponse(template: ErrorTemplate, status: number, requestId: string): Exit {
  const page = JOBS_PAGES[status];
  if (page !== undefined) {
    const body = JSON.stringify({ error: page, request_id: requestId });
    return { status, body, headers: { 'Content-Type': 'application/json; charset=utf-8' }, close: true };
  }
  if (ERROR_PAGE.has(status)) {
    const message = BODIES[status] ?? `The upstream server responded with ${status}`;
    return { ...renderError(template, status === 494 ? 400 : status, message, requestId), close: true };
  }
  const title = `${status} ${REASONS[status] ?? ''}`.trim();
  const body = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`;
  return { status, body, headers: { 'Content-Type': 'text/html' }, close: true };
}
