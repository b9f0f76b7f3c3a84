/**
 * Kong's header_filter phase (kong/init.lua Kong.header_filter), for every response the gateway
 * sends: the plugins' header_filter handlers (the plugins collected for the route, or the global
 * ones when nothing was routed: kong/runloop/plugins_iterator.lua get_collected_iterator), then
 * the runloop's own headers (kong/runloop/handler.lua header_filter.after), as the `headers`
 * setting allows them: X-Kong-Upstream-Latency, X-Kong-Proxy-Latency and Via on proxied
 * responses, X-Kong-Response-Latency on Kong's own, Server, X-Kong-Request-Id.
 *
 * nginx writes `Connection: keep-alive` or `Connection: close` and never a `Keep-Alive` header
 * (keepalive_timeout has no header timeout in Kong's template); Node would add
 * `Keep-Alive: timeout=N` unless the Connection header is set explicitly, so it always is.
 */
import { SERVER_TOKENS, type KongHeaders } from './kong-headers';
import type { RequestContext } from './request-context';
import type { PluginInstance } from './types';

export type HeaderPairs = Array<[string, string]>;

export interface Timing {
  started: number;
  /** When the request was sent to the service (proxied responses only). */
  upstreamStart?: number;
  /** When the service's response headers arrived. */
  upstreamHeaders?: number;
}

/**
 * The response headers while the phase rewrites them: names, their lower-case forms (computed
 * once, so each set or get compares strings instead of lower-casing every name again) and values.
 */
class ResponseHeaders {
  readonly names: string[] = [];
  readonly lowers: string[] = [];
  readonly values: string[] = [];

  constructor(pairs: HeaderPairs) {
    for (const [name, value] of pairs) this.push(name, name.toLowerCase(), value);
  }

  private push(name: string, lower: string, value: string): void {
    this.names.push(name);
    this.lowers.push(lower);
    this.values.push(value);
  }

  /** Replaces every header of that name (any case) with one, or removes them (null). */
  set(name: string, value: string | null, lower = name.toLowerCase()): void {
    for (let i = this.lowers.length - 1; i >= 0; i--) {
      if (this.lowers[i] !== lower) continue;
      this.names.splice(i, 1);
      this.lowers.splice(i, 1);
      this.values.splice(i, 1);
    }
    if (value !== null) this.push(name, lower, value);
  }

  get(lower: string): string | undefined {
    const i = this.lowers.indexOf(lower);
    return i === -1 ? undefined : this.values[i];
  }

  /** name, value, name, value...: what writeHead takes. */
  flat(): string[] {
    const out = new Array<string>(this.names.length * 2);
    for (let i = 0; i < this.names.length; i++) {
      out[2 * i] = this.names[i]!;
      out[2 * i + 1] = this.values[i]!;
    }
    return out;
  }
}

export interface HeaderFilterInput {
  ctx: RequestContext;
  plugins: readonly PluginInstance[];
  kongHeaders: KongHeaders;
  /** The response headers so far: the service's, or those of Kong's answer. */
  headers: HeaderPairs;
  proxied: boolean;
  timing: Timing;
  /** The connection ends after this response. */
  close: boolean;
}

/** The headers to send, flat (name, value, name, value...). */
export function headerFilter(input: HeaderFilterInput): string[] {
  const { ctx, kongHeaders, timing } = input;
  const headers = new ResponseHeaders(input.headers);
  for (const plugin of input.plugins) plugin.definition.headerFilter?.(ctx, plugin.config);
  for (const [name, value] of ctx.responseHeaders) headers.set(name, value);

  const enabled = kongHeaders.downstream;
  const now = Date.now();
  if (input.proxied) {
    const upstreamStart = timing.upstreamStart ?? now;
    const upstreamHeaders = timing.upstreamHeaders ?? now;
    if (enabled.has('X-Kong-Upstream-Latency')) headers.set('X-Kong-Upstream-Latency', String(upstreamHeaders - upstreamStart), 'x-kong-upstream-latency');
    if (enabled.has('X-Kong-Proxy-Latency')) headers.set('X-Kong-Proxy-Latency', String(upstreamStart - timing.started), 'x-kong-proxy-latency');
    if (enabled.has('Via')) {
      const via = headers.get('via');
      headers.set('Via', via ? `${via}, 1.1 ${SERVER_TOKENS}` : `1.1 ${SERVER_TOKENS}`, 'via');
    }
    if (headers.get('server') === undefined && enabled.has('Server')) headers.set('Server', SERVER_TOKENS, 'server');
  } else {
    if (enabled.has('X-Kong-Response-Latency')) headers.set('X-Kong-Response-Latency', String(now - timing.started), 'x-kong-response-latency');
    if (!(enabled.has('Via') && headers.get('via') === SERVER_TOKENS)) {
      headers.set('Server', enabled.has('Server') ? SERVER_TOKENS : null, 'server');
    }
  }
  if (enabled.has('X-Kong-Request-Id')) headers.set('X-Kong-Request-Id', ctx.requestId, 'x-kong-request-id');
  headers.set('Connection', input.close ? 'close' : 'keep-alive', 'connection');
  return headers.flat();
}
