/**
 * nginx's client_body_timeout (KONG_NGINX_PROXY_CLIENT_BODY_TIMEOUT, kong.conf
 * nginx_proxy_client_body_timeout; nginx's default 60 s): the longest pause between two reads of a
 * request body. When it passes nginx closes the connection without an answer
 * (ngx_http_finalize_request terminates on NGX_HTTP_REQUEST_TIME_OUT), and nothing is proxied.
 */
import type { IncomingMessage } from 'node:http';

const UNITS: Record<string, number> = { ms: 1, '': 1000, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** An nginx time ("10s", "60", "500ms", "1m") in milliseconds. */
export function parseNginxTime(value: string, setting: string): number {
  const m = /^\s*(\d+)(ms|s|m|h|d)?\s*$/.exec(value);
  if (!m) throw new Error(`${setting}: "${value}" is not an nginx time (e.g. 10s, 500ms, 1m)`);
  return Number(m[1]) * (UNITS[m[2] ?? ''] ?? 1000);
}

export function loadBodyTimeout(env: NodeJS.ProcessEnv): number {
  const raw = env.KONG_NGINX_PROXY_CLIENT_BODY_TIMEOUT;
  return raw === undefined || raw === '' ? 60_000 : parseNginxTime(raw, 'nginx_proxy_client_body_timeout');
}

/** Closes the client's connection once its body pauses for `ms`; call the result when the body is read. */
export function closeWhenBodyStalls(req: IncomingMessage, ms: number): () => void {
  const socket = req.socket;
  const onTimeout = (): void => {
    socket.destroy();
  };
  socket.setTimeout(ms, onTimeout);
  return () => {
    socket.setTimeout(0);
    socket.off('timeout', onTimeout);
  };
}
