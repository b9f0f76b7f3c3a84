/** Kong's own error answers: kong.response.error and the error handler nginx hands its refusals to. */
import { readFileSync } from 'node:fs';

/** A response a plugin sends instead of proxying (Kong's kong.response.exit / kong.response.error). */
export interface Exit {
  status: number;
  body: string;
  headers: Record<string, string>;
  /** nginx's own refusals close the connection after the answer. */
  close?: boolean;
}

export function loadErrorTemplate(file: string | undefined): string {
  // Kong's built-in template when error_template_json is not set.
  if (!file) return '{\n  "message":"%s",\n  "request_id":"%s"\n}';
  const template = readFileSync(file, 'utf8');
  if ((template.match(/%s/g) ?? []).length !== 2)
    throw new Error(`${file}: the JSON error template needs exactly two %s (message, request id)`);
  return template;
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** What kong.response.error is given: the status, the message and any headers. */
export interface KongErrorAnswer {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

export function kongError(
  template: string,
  requestId: string,
  { status, message, headers = {} }: KongErrorAnswer,
): Exit {
  const values = [message, requestId].map((s) => JSON.stringify(s).slice(1, -1));
  return {
    status,
    body: template.replace(/%s/g, () => values.shift() ?? ''),
    headers: { ...headers, 'Content-Type': JSON_TYPE },
  };
}

/** kong/error_handlers.lua BODIES, for the statuses nginx_kong.lua routes to it. */
const BODIES: Record<number, string> = {
  400: 'Bad request',
  405: 'Method not allowed',
  413: 'Payload too large',
  414: 'URI too long',
  494: 'Request header or cookie too large',
};

/** 501 and 505 have no error_page in Kong's template, 431 is ours: gateway/kong/nginx-proxy-jobs.conf answers them. */
const JOBS_PAGES: Record<number, string> = {
  431: 'Too many request headers: send at most 100',
  501: 'Transfer-Encoding not supported: send a body with Content-Length or Transfer-Encoding: chunked',
  505: 'HTTP version not supported: use HTTP/1.1',
};

/** nginx's answer to a request it refuses itself; the connection is closed after it, but after a 431 (a `return`, not a parse error). */
export function nginxAnswer(template: string, status: number, requestId: string): Exit {
  const page = JOBS_PAGES[status];
  if (page)
    return {
      status,
      body: JSON.stringify({ error: page, request_id: requestId }),
      headers: { 'Content-Type': JSON_TYPE },
      close: status !== 431,
    };
  return {
    ...kongError(template, requestId, {
      status: status === 494 ? 400 : status,
      message: BODIES[status] ?? 'Bad request',
    }),
    close: true,
  };
}
