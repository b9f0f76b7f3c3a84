import { readFileSync } from 'node:fs';
import type { Exit } from './plugins/definition';

/**
 * Kong's error responses (kong.response.error and the proxy's own 404/502/504) are rendered
 * through the JSON error template: `error_template_json` in kong.conf, KONG_ERROR_TEMPLATE_JSON in
 * the environment, a format string with two `%s`, the message and the request id. Without it, Kong's
 * built-in template applies.
 */

export const KONG_DEFAULT_JSON_TEMPLATE = '{\n  "message":"%s",\n  "request_id":"%s"\n}';

export type ErrorTemplate = string;

export function loadErrorTemplate(env: NodeJS.ProcessEnv): ErrorTemplate {
  const file = env.KONG_ERROR_TEMPLATE_JSON;
  if (!file) return KONG_DEFAULT_JSON_TEMPLATE;
  const template = readFileSync(file, 'utf8');
  if ((template.match(/%s/g) ?? []).length !== 2) {
    throw new Error(`${file}: the JSON error template needs exactly two %s (message, request id)`);
  }
  return template;
}

function jsonEscape(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

export function renderError(
  template: ErrorTemplate,
  status: number,
  message: string,
  requestId: string,
  headers: Record<string, string> = {},
): Exit {
  const values = [jsonEscape(message), jsonEscape(requestId)];
  const body = template.replace(/%s/g, () => values.shift() ?? '');
  return { status, body, headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' } };
}
