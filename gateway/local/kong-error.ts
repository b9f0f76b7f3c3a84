/**
 * Kong's own error answers: kong.response.error and the error handler nginx hands its refusals to
 * (nginx_kong.lua error_page -> kong/error_handlers.lua), in the type the client's Accept header
 * asks for (kong/tools/http.lua get_response_type), JSON through error_template_json by default.
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

/** Kong's built-in templates for the other types (kong/tools/http.lua ERROR_TEMPLATES). */
const TEMPLATES: Record<string, string> = {
  'text/html': '<!doctype html>\n<html>\n  <head>\n    <meta charset="utf-8">\n    <title>Error</title>\n  </head>\n  <body>\n    <h1>Error</h1>\n    <p>%s.</p>\n    <p>request_id: %s</p>\n  </body>\n</html>\n',
  'application/xml': '<?xml version="1.0" encoding="UTF-8"?>\n<error>\n  <message>%s</message>\n  <requestid>%s</requestid>\n</error>\n',
  'text/plain': '%s\nrequest_id: %s\n',
};
const BY_RANGE: Record<string, string> = { text: 'text/plain', application: 'application/json' };
const TOKEN = "(?:[a-z0-9][a-z0-9-!#$&^_+.]+|\\*)";
const ACCEPT_ENTRY = new RegExp(`^(${TOKEN}/${TOKEN})(?:\\s*;\\s*q=(1(?:\\.0{0,3}|)|0(?:\\.\\d{0,3}|))|\\s*;\\s*[a-z0-9][a-z0-9-!#$&^_+.]+(?:=[^;]*|))*`, 'i');

/** get_response_type: the entry with the highest q (the first of equals); an unknown type means JSON. */
export function responseType(accept: readonly string[] | undefined): string {
  let type = 'application/json';
  let best = 0;
  for (const entry of (accept ?? []).join(',').split(',')) {
    const m = ACCEPT_ENTRY.exec(entry.trim());
    const q = m ? Number(m[2] ?? 1) : 0;
    if (!m || q <= best) continue;
    best = q;
    const [range, sub] = m[1]!.split('/');
    type = sub === '*' ? (BY_RANGE[range!] ?? 'application/json') : TEMPLATES[m[1]!] ? m[1]! : 'application/json';
  }
  return type;
}

export function kongError(json: string, accept: readonly string[] | undefined, status: number, message: string, requestId: string, headers: Record<string, string> = {}): Exit {
  const type = responseType(accept);
  const values = type === 'application/json' ? [message, requestId].map((s) => JSON.stringify(s).slice(1, -1)) : [message, requestId];
  const body = (TEMPLATES[type] ?? json).replace(/%s/g, () => values.shift() ?? '');
  return { status, body, headers: { ...headers, 'Content-Type': `${type}; charset=utf-8` } };
}

/** kong/error_handlers.lua BODIES, for the statuses nginx_kong.lua routes to it. */
const BODIES: Record<number, string> = { 400: 'Bad request', 405: 'Method not allowed', 413: 'Payload too large', 414: 'URI too long', 494: 'Request header or cookie too large' };

/**
 * nginx's answer to a request it refuses itself; the connection is closed after it. 501 and 505
 * have no error_page: nginx's own HTML page, without its server line.
 */
export function nginxAnswer(json: string, accept: readonly string[] | undefined, status: number, requestId: string): Exit {
  const message = BODIES[status];
  if (message) return { ...kongError(json, accept, status === 494 ? 400 : status, message, requestId), close: true };
  const title = `${status} ${status === 505 ? 'HTTP Version Not Supported' : 'Not Implemented'}`;
  const body = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`;
  return { status, body, headers: { 'Content-Type': 'text/html; charset=UTF-8' }, close: true };
}
