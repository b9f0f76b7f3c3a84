/**
 * Forwards a request to the route's service as Kong 3.9.1's nginx does, over undici (which
 * frames every body it sends): the body read whole and sent with its Content-Length, whatever
 * framing the client used; the URI is the normalized path escaped, plus the query as the plugins
 * left it; request headers minus hop-by-hop ones, then Kong's proxy_set_header list
 * (nginx_kong.lua); response headers minus hop-by-hop ones; 502/503/504 as Kong answers them.
 */
import type { ServerResponse } from 'node:http';
import { Pool, errors, type Dispatcher } from 'undici';
import type { RequestContext } from '../request-context';
import { escapeUri } from '../router';
import { resolveHost, type HostsTable } from './resolve';

/** Never forwarded as the client sent them; Kong sets its own or drops them. */
const HOP_BY_HOP_REQUEST = new Set(
  'connection keep-alive proxy proxy-connection proxy-authenticate te trailer transfer-encoding upgrade expect content-length host via x-forwarded-for x-forwarded-proto x-forwarded-host x-forwarded-port x-forwarded-path x-forwarded-prefix x-real-ip'.split(' '),
);
/** nginx's upstream module never passes these response headers on. */
const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

const csv = (values: readonly string[]): string[] => values.join(',').split(',').map((t) => t.trim().toLowerCase()).filter(Boolean);
/** The names a Connection header lists, except the three Kong keeps. */
const connectionListed = (values: readonly string[]): Set<string> => new Set(csv(values).filter((t) => !['keep-alive', 'close', 'upgrade'].includes(t)));
const wantsTrailers = (ctx: RequestContext): boolean => csv(ctx.headers.get('te') ?? []).includes('trailers');

export function upstreamUri(ctx: RequestContext): string {
  const uri = escapeUri(ctx.path);
  return ctx.args || ctx.req.url?.endsWith('?') ? `${uri}?${ctx.args ?? ''}` : uri;
}

function upstreamHeaders(ctx: RequestContext, listenPort: number): Record<string, string | string[]> {
  const { host, port } = ctx.route!.service;
  const listed = connectionListed(ctx.headers.get('connection') ?? []);
  const out: Record<string, string | string[]> = {};
  for (const [name, values] of ctx.headers) if (!HOP_BY_HOP_REQUEST.has(name) && !listed.has(name)) out[name] = values.length === 1 ? values[0]! : [...values];
  out.host = port === 80 ? host : `${host}:${port}`;
  if (wantsTrailers(ctx)) out.te = 'trailers';
  // Lua prints ngx.req.http_version() 1.0 as 1.
  const via = `${ctx.req.httpVersion === '1.0' ? '1' : ctx.req.httpVersion} kong/3.9.1`;
  const clientVia = ctx.getFirstHeader('via');
  out.via = clientVia ? `${clientVia}, ${via}` : via;
  const forwardedFor = ctx.getFirstHeader('x-forwarded-for');
  out['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${ctx.clientIp}` : ctx.clientIp;
  out['x-forwarded-proto'] = 'http';
  out['x-forwarded-host'] = (ctx.getFirstHeader('host') ?? '').replace(/:\d+$/, '');
  out['x-forwarded-port'] = String(listenPort);
  out['x-forwarded-path'] = ctx.rawPath;
  out['x-real-ip'] = ctx.clientIp;
  out['x-kong-request-id'] = ctx.requestId;
  return out;
}

/** Kept-alive connection pools, one per address, port and connect timeout, with Kong's upstream keepalive defaults. */
export class Upstreams {
  private readonly pools = new Map<string, Pool>();
  constructor(private readonly connections: number | null = null) {}

  pool(address: string, port: number, connectTimeout: number): Dispatcher {
    const key = `${address}|${port}|${connectTimeout}`;
    let pool = this.pools.get(key);
    if (!pool) {
      const origin = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
      const keepAlive = { keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000, maxRequestsPerClient: 10_000 };
      pool = new Pool(origin, { connections: this.connections, pipelining: 1, connect: { timeout: connectTimeout }, strictContentLength: true, ...keepAlive });
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
  /** The request body, read whole; null when the request has none. */
  body: Buffer | null;
  /** Kong's header_filter on the service's response headers, flat for writeHead. */
  headerFilter(headers: Array<[string, string]>): string[];
  fail(status: 502 | 503 | 504, message: string): void;
}

const isTimeout = (err: unknown): boolean => err instanceof errors.ConnectTimeoutError || err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError;

/** One exchange: the service's response goes from undici's parser straight into the client's, with backpressure. */
class Exchange implements Dispatcher.DispatchHandler {
  private abortUpstream: (() => void) | null = null;
  private clientGone = false;
  private resume: (() => void) | null = null;

  constructor(
    private readonly ctx: RequestContext,
    private readonly res: ServerResponse,
    private readonly deps: ProxyDeps,
  ) {
    res.once('close', this.onClientClose);
  }

  private readonly onClientClose = (): void => {
    if (this.res.writableFinished) return;
    this.clientGone = true;
    this.abortUpstream?.();
  };

  onConnect(abort: () => void): void {
    if (this.clientGone) abort();
    else this.abortUpstream = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx answers are nginx's business with the service.
    if (statusCode < 200) return true;
    const headers: Array<[string, string]> = [];
    for (let i = 0; i < rawHeaders.length; i += 2) headers.push([rawHeaders[i]!.toString(), rawHeaders[i + 1]!.toString()]);
    const listed = connectionListed(headers.filter(([n]) => n.toLowerCase() === 'connection').map(([, v]) => v));
    const dropTrailer = !wantsTrailers(this.ctx);
    const kept = headers.filter(([name]) => {
      const lower = name.toLowerCase();
      return !HOP_BY_HOP_RESPONSE.has(lower) && !listed.has(lower) && !(dropTrailer && lower === 'trailer');
    });
    this.res.writeHead(statusCode, this.deps.headerFilter(kept));
    this.resume = resume;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.res.write(chunk)) return true;
    this.res.once('drain', this.resume!);
    return false;
  }

  onComplete(): void {
    this.res.end();
  }

  onError(err: Error): void {
    if (this.clientGone) return;
    if (this.res.headersSent) return void this.res.destroy(err);
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
    return deps.fail(503, 'name resolution failed');
  }
  const request = { method: ctx.method, path: upstreamUri(ctx), headers: upstreamHeaders(ctx, deps.listenPort), body: deps.body };
  // reset: false: nginx keeps the connection after a body on any method (it framed it).
  const timeouts = { reset: false, headersTimeout: service.readTimeout, bodyTimeout: service.readTimeout };
  deps.upstreams.pool(address, service.port, service.connectTimeout).dispatch({ ...request, ...timeouts }, new Exchange(ctx, res, deps));
}
