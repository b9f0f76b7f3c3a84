/**
 * Kong's own error answers: kong.response.error and the error handler nginx hands its refusals to
 * (nginx_kong.lua error_page -> kong/error_handlers.lua), rendered through the JSON error template
 * (error_template_json: a format string with two %s, the message and the request id).
 */
import { readFileSync } from 'node:fs';
import type { Exit } from './plugins/definition';

export function loadErrorTemplate(file: string | undefined): string {
  // Kong's built-in template when error_template_json is not set.
  if (!file) return '{\n  "message":"%s",\n  "request_id":"%s"\n}';
  const template = readFileSync(file, 'utf8');
  if ((template.match(/%s/g) ?? []).length !== 2) throw new Error(`${file}: the JSON error template needs exactly two %s (message, request id)`);
  return template;
}

export function kongError(template: string, status: number, message: string, requestId: string, headers: Record<string, string> = {}): Exit {
  const values = [message, requestId].map((s) => JSON.stringify(s).slice(1, -1));
  const body = template.replace(/%s/g, () => values.shift() ?? '');
  return { status, body, headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' } };
}

/** kong/error_handlers.lua BODIES, for the statuses nginx_kong.lua routes to it. */
const BODIES: Record<number, string> = { 400: 'Bad request', 405: 'Method not allowed', 413: 'Payload too large', 414: 'URI too long', 494: 'Request header or cookie too large' };

/**
 * nginx's answer to a request it refuses itself; the connection is closed after it. 501 (an
 * unknown Transfer-Encoding) has no error_page: nginx's own HTML page, without its server line.
 */
export function nginxAnswer(template: string, status: number, requestId: string): Exit {
  const message = BODIES[status];
  if (message) return { ...kongError(template, status === 494 ? 400 : status, message, requestId), close: true };
  const title = '501 Not Implemented';
  const body = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`;
  return { status: 501, body, headers: { 'Content-Type': 'text/html' }, close: true };
}
