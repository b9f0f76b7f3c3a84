/**
 * Kong's `headers` and `headers_upstream` settings (KONG_HEADERS, KONG_HEADERS_UPSTREAM): which
 * headers Kong adds on its own. Parsed as kong/conf_loader/init.lua does (a comma list,
 * case-insensitive; `off` alone disables all; `server_tokens` means Server and Via,
 * `latency_tokens` the X-Kong-*-Latency headers), names from kong/conf_loader/constants.lua
 * HEADER_KEY_TO_NAME, defaults from kong/templates/kong_defaults.lua.
 */

/** meta._SERVER_TOKENS of Kong 3.9.1 (kong/meta.lua). */
export const SERVER_TOKENS = 'kong/3.9.1';

export const KONG_DEFAULT_HEADERS = 'server_tokens, latency_tokens, x-kong-request-id';
export const KONG_DEFAULT_HEADERS_UPSTREAM = 'x-kong-request-id';

const DOWNSTREAM: Record<string, string[]> = {
  server_tokens: ['Server', 'Via'],
  latency_tokens: ['X-Kong-Proxy-Latency', 'X-Kong-Response-Latency', 'X-Kong-Admin-Latency', 'X-Kong-Upstream-Latency'],
  via: ['Via'],
  server: ['Server'],
  'x-kong-proxy-latency': ['X-Kong-Proxy-Latency'],
  'x-kong-response-latency': ['X-Kong-Response-Latency'],
  'x-kong-admin-latency': ['X-Kong-Admin-Latency'],
  'x-kong-upstream-latency': ['X-Kong-Upstream-Latency'],
  'x-kong-upstream-status': ['X-Kong-Upstream-Status'],
  'x-kong-request-id': ['X-Kong-Request-Id'],
};
const UPSTREAM: Record<string, string[]> = { 'x-kong-request-id': ['X-Kong-Request-Id'] };

export interface KongHeaders {
  /** Headers Kong adds to responses (names as Kong writes them). */
  downstream: ReadonlySet<string>;
  /** Headers Kong adds to the request the service receives. */
  upstream: ReadonlySet<string>;
}

function parse(value: string, known: Record<string, string[]>, setting: string): Set<string> {
  const tokens = value.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean);
  const enabled = new Set<string>();
  if (tokens[0] === 'off') return enabled;
  for (const token of tokens) {
    if (token === 'off') continue;
    const names = known[token];
    if (!names) throw new Error(`${setting}: invalid header value: ${token}`);
    for (const name of names) enabled.add(name);
  }
  return enabled;
}

export function loadKongHeaders(env: NodeJS.ProcessEnv): KongHeaders {
  return {
    downstream: parse(env.KONG_HEADERS ?? KONG_DEFAULT_HEADERS, DOWNSTREAM, 'headers'),
    upstream: parse(env.KONG_HEADERS_UPSTREAM ?? KONG_DEFAULT_HEADERS_UPSTREAM, UPSTREAM, 'headers_upstream'),
  };
}

/** ngx.req.http_version() concatenated as Lua prints numbers: 1.1 -> "1.1", 1.0 -> "1", 2.0 -> "2". */
export function luaHttpVersion(httpVersion: string): string {
  const n = Number(httpVersion);
  return Number.isFinite(n) ? String(n) : httpVersion;
}
