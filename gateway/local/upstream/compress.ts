/**
 * nginx's gzip filter on proxied responses, as gateway/kong/kong.conf sets it for Kong
 * (nginx_proxy_gzip*). Read in nginx 1.25 src/http/modules/ngx_http_gzip_filter_module.c
 * (ngx_http_gzip_header_filter) and src/http/ngx_http_core_module.c (ngx_http_gzip_ok,
 * ngx_http_gzip_accept_encoding, ngx_http_gzip_quantity, ngx_http_weak_etag):
 * - a response is compressible when gzip is on, its status is 200, 403 or 404, it has no
 *   Content-Encoding, its Content-Length (if any) is at least gzip_min_length, its media type is in
 *   gzip_types (text/html always is). Only then does gzip_vary add
 *   `Vary: Accept-Encoding`, whether or not this client asked;
 * - it is compressed when, in addition, the request is at least gzip_http_version (1.1), its
 *   Accept-Encoding names gzip with a q above 0, and gzip_proxied allows it (off: not when the
 *   request has a Via header; any: always). Then Content-Length and Accept-Ranges go, the body is
 *   sent chunked with Content-Encoding: gzip, and a strong ETag becomes weak (W/"..."); an ETag
 *   that is not a quoted string is dropped. A HEAD answer gets the same headers as the GET would
 *   (nginx marks it header-only after the gzip filter has run).
 * Kong's own answers (exits, errors) are all under 1 KiB here, so only proxied responses pass this.
 */
import zlib from 'node:zlib';
import type { RequestContext } from '../request-context';

export interface GzipSettings {
  on: boolean;
  types: ReadonlySet<string>;
  minLength: number;
  level: number;
  /** gzip_proxied: only `off` and `any` are modelled (the others depend on caching headers). */
  proxiedAny: boolean;
  vary: boolean;
  /** gzip_http_version as major * 10 + minor: 11 or 10. */
  httpVersion: number;
}

function setting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[`KONG_NGINX_PROXY_${name}`]?.trim();
  return value === '' ? undefined : value;
}

function onOff(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'off') return false;
  if (value === 'on') return true;
  throw new Error(`nginx_proxy_${name.toLowerCase()}: expected on or off, got "${value}"`);
}

function whole(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new Error(`nginx_proxy_${name.toLowerCase()}: expected a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

/** The gzip settings from KONG_NGINX_PROXY_GZIP* (kong.conf's nginx_proxy_gzip*), with nginx's defaults. */
export function loadGzipSettings(env: NodeJS.ProcessEnv): GzipSettings {
  const proxied = setting(env, 'GZIP_PROXIED') ?? 'off';
  if (proxied !== 'off' && proxied !== 'any') throw new Error(`nginx_proxy_gzip_proxied: only off and any are supported here, got "${proxied}"`);
  const version = setting(env, 'GZIP_HTTP_VERSION') ?? '1.1';
  if (version !== '1.0' && version !== '1.1') throw new Error(`nginx_proxy_gzip_http_version: expected 1.0 or 1.1, got "${version}"`);
  const types = new Set(['text/html', ...(setting(env, 'GZIP_TYPES') ?? '').toLowerCase().split(/\s+/).filter(Boolean)]);
  return {
    on: onOff(setting(env, 'GZIP'), 'GZIP'),
    types,
    minLength: whole(setting(env, 'GZIP_MIN_LENGTH'), 'GZIP_MIN_LENGTH', 20, 0, Number.MAX_SAFE_INTEGER),
    level: whole(setting(env, 'GZIP_COMP_LEVEL'), 'GZIP_COMP_LEVEL', 1, 1, 9),
    proxiedAny: proxied === 'any',
    vary: onOff(setting(env, 'GZIP_VARY'), 'GZIP_VARY'),
    httpVersion: version === '1.0' ? 10 : 11,
  };
}

/** ngx_http_gzip_quantity: "0", "1" or either with up to three decimals, as thousandths; invalid is 0. */
function quantity(text: string): number {
  const m = /^([01])(?:\.(\d{0,3}))?$/.exec(text);
  if (!m) return 0;
  const q = Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0'));
  return q > 1000 ? 0 : q;
}

/** ngx_http_gzip_accept_encoding: a "gzip" token (at the start or after "," or " ") with no q or q > 0. */
export function acceptsGzip(header: string): boolean {
  const lower = header.toLowerCase();
  let at = -1;
  for (let from = 0; ; from = at + 4) {
    at = lower.indexOf('gzip', from);
    if (at === -1) return false;
    if (at === 0 || lower[at - 1] === ',' || lower[at - 1] === ' ') break;
  }
  const rest = lower.slice(at + 4);
  const m = /^ *(?:$|,|;)/.exec(rest);
  if (!m) return false;
  if (!m[0].endsWith(';')) return true;
  const params = rest.slice(m[0].length).split(',')[0]!;
  if (params.trim() === '') return true;
  const q = /^ *q=(.+)$/.exec(params);
  return q !== null && quantity(q[1]!.trimEnd()) > 0;
}

function findHeader(headers: readonly string[], lower: string): number {
  for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() === lower) return i;
  return -1;
}

function removeHeader(headers: string[], lower: string): void {
  for (let i = headers.length - 2; i >= 0; i -= 2) if (headers[i]!.toLowerCase() === lower) headers.splice(i, 2);
}

function compressible(ctx: RequestContext, status: number, headers: readonly string[], settings: GzipSettings): boolean {
  if (!settings.on || (status !== 200 && status !== 403 && status !== 404)) return false;
  const encoding = findHeader(headers, 'content-encoding');
  if (encoding !== -1 && headers[encoding + 1] !== '') return false;
  const length = findHeader(headers, 'content-length');
  if (length !== -1 && Number(headers[length + 1]) < settings.minLength) return false;
  const type = findHeader(headers, 'content-type');
  if (type === -1) return false;
  return settings.types.has((headers[type + 1] ?? '').split(';')[0]!.trim().toLowerCase());
}

/**
 * nginx's gzip header filter on a proxied response's headers (a flat name, value list, changed in
 * place): the gzip stream the body is to be written through, or null to send it as it is.
 */
export function gzipResponse(ctx: RequestContext, status: number, headers: string[], settings: GzipSettings): zlib.Gzip | null {
  if (!compressible(ctx, status, headers, settings)) return null;
  if (settings.vary) headers.push('Vary', 'Accept-Encoding');
  const [major, minor] = ctx.req.httpVersion.split('.').map(Number);
  if ((major ?? 0) * 10 + (minor ?? 0) < settings.httpVersion) return null;
  if (!acceptsGzip(ctx.getFirstHeader('accept-encoding') ?? '')) return null;
  if (!settings.proxiedAny && ctx.getFirstHeader('via') !== undefined) return null;

  removeHeader(headers, 'content-length');
  removeHeader(headers, 'accept-ranges');
  const etag = findHeader(headers, 'etag');
  if (etag !== -1) {
    const value = headers[etag + 1]!;
    if (value.startsWith('"')) headers[etag + 1] = `W/${value}`;
    else if (!(value.length > 2 && value.startsWith('W/'))) headers.splice(etag, 2);
  }
  headers.push('Content-Encoding', 'gzip');
  return ctx.method === 'HEAD' ? null : zlib.createGzip({ level: settings.level });
}
