/**
 * Forwards a request to the route's service the way Kong 3.9.1's nginx does, over undici (a
 * maintained HTTP/1.1 client that frames every body it sends), never by hand:
 * - the body is read whole first (nginx_kong.lua: `proxy_request_buffering on`) and sent with its
 *   Content-Length, whatever framing the client used (chunked included); a request without a
 *   body is sent without one, so a body can never leak into the next request on a kept-alive
 *   connection;
 * - the URI is the normalized path, escaped (kong.tools.uri.escape), plus `?` and ngx.var.args as
 *   the plugins left them (kong/runloop/handler.lua access.after);
 * - request headers: the client's, as the plugins left them, minus hop-by-hop ones, those the
 *   client's Connection header names, Proxy/Proxy-Connection, Expect and Keep-Alive (nginx's proxy
 *   module drops these); then Kong's proxy_set_header list (nginx_kong.lua): Host (the service's
 *   unless preserve_host), Connection: keep-alive, TE: trailers when the client asked for them,
 *   Via (the client's, then "<http version> kong/3.9.1"), X-Forwarded-For/-Proto/-Host/-Port/-Path,
 *   X-Real-IP and X-Kong-Request-Id (headers_upstream);
 * - response headers: hop-by-hop ones and those the service's Connection header names are dropped,
 *   Trailer too unless the client asked for trailers (handler.lua header_filter.before);
 * - failures as Kong answers them: 502 when the service cannot be reached or answers garbage, 504
 *   on a connect or read timeout, 503 when the name does not resolve.
 */
import type { ServerResponse } from 'node:http';
import type { Gzip } from 'node:zlib';
import { Pool, errors, type Dispatcher } from 'undici';
import { luaHttpVersion, SERVER_TOKENS, type KongHeaders } from '../kong-headers';
import type { RequestContext } from '../request-context';
import { escapeUri } from '../router';
import { gzipResponse, type GzipSettings } from './compress';
import { resolveHost, type HostsTable } from './resolve';

/** Never forwarded as the client sent them; Kong sets its own or drops them. */
const HOP_BY_HOP_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'content-length',
  'host',
  'via',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-path',
  'x-forwarded-prefix',
  'x-real-ip',
]);

/** nginx's upstream module never passes these response headers on. */
const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

function csv(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const joined = typeof value === 'string' ? value : value.join(',');
  return joined.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean);
}

/** The names a Connection header lists, except the three Kong keeps (keep-alive, close, upgrade). */
function connectionListed(value: string | readonly string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  const listed = new Set(csv(value).filter((t) => t !== 'keep-alive' && t !== 'close' && t !== 'upgrade'));
  return listed.size === 0 ? null : listed;
}

/** Whether the client asked for trailers (TE: trailers, alone or in a list). */
function wantsTrailers(ctx: RequestContext): boolean {
  return csv(ctx.getHeader('te')).includes('trailers');
}

/** The Host header without its port (X-Forwarded-Host). */
function hostName(host: string): string {
  const colon = host.lastIndexOf(':');
  if (colon === -1 || colon === host.length - 1) return host;
  for (let i = colon + 1; i < host.length; i++) {
    const c = host.charCodeAt(i);
    if (c < 48 || c > 57) return host;
  }
  return host.slice(0, colon);
}

export function upstreamUri(ctx: RequestContext, servicePath: string | null): string {
  const base = servicePath ?? '/';
  let uri = base.endsWith('/') ? base + ctx.path.slice(1) : ctx.path === '/' ? base : base + ctx.path;
  uri = escapeUri(uri);
  if (ctx.args) return `${uri}?${ctx.args}`;
  return (ctx.req.url ?? '').endsWith('?') ? `${uri}?` : uri;
}

function upstreamHeaders(ctx: RequestContext, listenPort: number, kongHeaders: KongHeaders): Record<string, string | string[]> {
  const service = ctx.route!.service;
  const listed = connectionListed(ctx.getHeader('connection'));
  const out: Record<string, string | string[]> = {};
  for (const [name, values] of ctx.headers) {
    if (HOP_BY_HOP_REQUEST.has(name) || listed?.has(name)) continue;
    // undici only reads the list.
    out[name] = values.length === 1 ? (values[0] ?? '') : (values as string[]);
  }
  const clientHost = ctx.getFirstHeader('host') ?? '';
  out.host = ctx.route!.preserveHost ? clientHost : service.port === 80 ? service.host : `${service.host}:${service.port}`;
  if (wantsTrailers(ctx)) out.te = 'trailers';
  const via = ctx.getFirstHeader('via');
  const kongVia = `${luaHttpVersion(ctx.req.httpVersion)} ${SERVER_TOKENS}`;
  out.via = via ? `${via}, ${kongVia}` : kongVia;
  const forwardedFor = ctx.getFirstHeader('x-forwarded-for');
  out['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${ctx.clientIp}` : ctx.clientIp;
  out['x-forwarded-proto'] = 'http';
  out['x-forwarded-host'] = hostName(clientHost);
  out['x-forwarded-port'] = String(listenPort);
  out['x-forwarded-path'] = ctx.rawPath;
  out['x-real-ip'] = ctx.clientIp;
  if (kongHeaders.upstream.has('X-Kong-Request-Id')) out['x-kong-request-id'] = ctx.requestId;
  return out;
}

/** Kept-alive connection pools to the services, one per address, port and connect timeout. */
export class Upstreams {
  private readonly pools = new Map<string, Pool>();

  /** `connections`: the most connections to one service (default: no limit, as nginx). */
  constructor(private readonly connections: number | null = null) {}

  pool(address: string, port: number, connectTimeout: number): Dispatcher {
    const key = `${address}|${port}|${connectTimeout}`;
    let pool = this.pools.get(key);
    if (!pool) {
      const host = address.includes(':') ? `[${address}]` : address;
      pool = new Pool(`http://${host}:${port}`, {
        connections: this.connections,
        pipelining: 1,
        connect: { timeout: connectTimeout },
        // Kong's upstream_keepalive_idle_timeout (60 s) and upstream_keepalive_max_requests (10000).
        keepAliveTimeout: 60_000,
        keepAliveMaxTimeout: 60_000,
        maxRequestsPerClient: 10_000,
        strictContentLength: true,
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }
}

export interface ProxyDeps {
  upstreams: Upstreams;
  hosts: HostsTable;
  listenPort: number;
  kongHeaders: KongHeaders;
  /** The request body, read whole (nginx's request buffering); null when the request has none. */
  body: Buffer | null;
  /** nginx's gzip filter on the service's response (compress.ts). */
  gzip: GzipSettings;
  /** Kong's header_filter on the service's response headers (plugins, Via, Server, ids), flat for writeHead. */
  headerFilter(headers: Array<[string, string]>): string[];
  /** Kong's own answer when proxying fails (502/503/504). */
  fail(status: 502 | 503 | 504, message: string): void;
}

function isTimeout(err: unknown): boolean {
  return err instanceof errors.ConnectTimeoutError || err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError;
}

/**
 * One proxied exchange as an undici dispatch handler: the service's response goes straight from
 * undici's parser into the client's response (no intermediate body stream, pipeline or
 * AbortController per request, which were most of the proxy's own CPU), with backpressure
 * (returning false pauses the upstream socket until the client's side drains).
 */
class Exchange implements Dispatcher.DispatchHandler {
  private abortUpstream: ((err?: Error) => void) | null = null;
  private clientGone = false;

  constructor(
    private readonly ctx: RequestContext,
    private readonly res: ServerResponse,
    private readonly deps: ProxyDeps,
  ) {
    res.once('close', this.onClientClose);
  }

  /** The client went away before the whole response was written: stop the upstream request. */
  private readonly onClientClose = (): void => {
    if (this.res.writableFinished) return;
    this.clientGone = true;
    this.gzip?.destroy();
    this.abortUpstream?.();
  };

  onConnect(abort: (err?: Error) => void): void {
    if (this.clientGone) abort();
    else this.abortUpstream = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx answers are nginx's business with the service; the client sees the final one only.
    if (statusCode < 200) return true;
    const headers: Array<{ name: string; lower: string; value: string }> = [];
    let upstreamConnection: string[] | undefined;
    let trailer = false;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString();
      const value = rawHeaders[i + 1]!.toString();
      const lower = name.toLowerCase();
      if (lower === 'connection') (upstreamConnection ??= []).push(value);
      else if (lower === 'trailer') trailer = true;
      headers.push({ name, lower, value });
    }
    // Which to drop is known only once all are read: the ones a Connection header lists.
    const listed = connectionListed(upstreamConnection);
    const dropTrailer = trailer && !wantsTrailers(this.ctx);
    const kept: Array<[string, string]> = [];
    for (const { name, lower, value } of headers) {
      if (HOP_BY_HOP_RESPONSE.has(lower) || listed?.has(lower) || (dropTrailer && lower === 'trailer')) continue;
      kept.push([name, value]);
    }
    const filtered = this.deps.headerFilter(kept);
    this.gzip = gzipResponse(this.ctx, statusCode, filtered, this.deps.gzip);
    this.res.writeHead(statusCode, filtered);
    this.gzip?.pipe(this.res);
    this.resume = resume;
    return true;
  }

  private resume: (() => void) | null = null;
  /** The compressor the body goes through, when nginx's gzip filter applies. */
  private gzip: Gzip | null = null;

  onData(chunk: Buffer): boolean {
    const sink = this.gzip ?? this.res;
    if (sink.write(chunk)) return true;
    // Backpressure: undici pauses the upstream socket until the client's side drains.
    sink.once('drain', this.resume!);
    return false;
  }

  onComplete(): void {
    (this.gzip ?? this.res).end();
  }

  onError(err: Error): void {
    if (this.clientGone) return;
    if (this.res.headersSent) {
      this.gzip?.destroy();
      this.res.destroy(err);
      return;
    }
    this.res.off('close', this.onClientClose);
    this.deps.fail(isTimeout(err) ? 504 : 502, isTimeout(err) ? 'The upstream server is timing out' : 'An invalid response was received from the upstream server');
  }
}

export async function proxy(ctx: RequestContext, res: ServerResponse, deps: ProxyDeps): Promise<void> {
  const service = ctx.route!.service;
  let address: string;
  try {
    address = await resolveHost(service.host, deps.hosts);
  } catch {
    deps.fail(503, 'name resolution failed');
    return;
  }
  deps.upstreams.pool(address, service.port, service.connectTimeout).dispatch(
    {
      method: ctx.method,
      path: upstreamUri(ctx, service.path),
      headers: upstreamHeaders(ctx, deps.listenPort, deps.kongHeaders),
      body: deps.body,
      // nginx keeps the connection after a body on any method: it framed it with Content-Length.
      reset: false,
      headersTimeout: service.readTimeout,
      bodyTimeout: service.readTimeout,
    },
    new Exchange(ctx, res, deps),
  );
}
