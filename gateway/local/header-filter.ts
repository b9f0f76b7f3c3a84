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

function set(headers: HeaderPairs, name: string, value: string | null): void {
  const lower = name.toLowerCase();
  for (let i = headers.length - 1; i >= 0; i--) if (headers[i]![0].toLowerCase() === lower) headers.splice(i, 1);
  if (value !== null) headers.push([name, value]);
}

function get(headers: HeaderPairs, name: string): string | undefined {
  const lower = name.toLowerCase();
  return headers.find(([n]) => n.toLowerCase() === lower)?.[1];
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

export function headerFilter(input: HeaderFilterInput): HeaderPairs {
  const { ctx, kongHeaders, timing } = input;
  const headers: HeaderPairs = input.headers.map(([n, v]) => [n, v]);
  for (const plugin of input.plugins) plugin.definition.headerFilter?.(ctx, plugin.config);
  for (const [name, value] of ctx.responseHeaders) set(headers, name, value);

  const enabled = kongHeaders.downstream;
  const now = Date.now();
  if (input.proxied) {
    const upstreamStart = timing.upstreamStart ?? now;
    const upstreamHeaders = timing.upstreamHeaders ?? now;
    if (enabled.has('X-Kong-Upstream-Latency')) set(headers, 'X-Kong-Upstream-Latency', String(upstreamHeaders - upstreamStart));
    if (enabled.has('X-Kong-Proxy-Latency')) set(headers, 'X-Kong-Proxy-Latency', String(upstreamStart - timing.started));
    if (enabled.has('Via')) {
      const via = get(headers, 'Via');
      set(headers, 'Via', via ? `${via}, 1.1 ${SERVER_TOKENS}` : `1.1 ${SERVER_TOKENS}`);
    }
    if (get(headers, 'Server') === undefined && enabled.has('Server')) set(headers, 'Server', SERVER_TOKENS);
  } else {
    if (enabled.has('X-Kong-Response-Latency')) set(headers, 'X-Kong-Response-Latency', String(now - timing.started));
    if (!(enabled.has('Via') && get(headers, 'Via') === SERVER_TOKENS)) {
      set(headers, 'Server', enabled.has('Server') ? SERVER_TOKENS : null);
    }
  }
  if (enabled.has('X-Kong-Request-Id')) set(headers, 'X-Kong-Request-Id', ctx.requestId);
  set(headers, 'Connection', input.close ? 'close' : 'keep-alive');
  return headers;
}
