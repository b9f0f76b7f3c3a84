/** Forwards a request to the service as Kong 3.9.1's nginx does. */
import http, { type ServerResponse } from 'node:http';
import type { RequestContext } from '../request-context';
import { escapeUri } from '../router';
import { gzipResponse } from './compress';
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
  return ctx.args === null ? uri : `${uri}?${ctx.args}`;
}

function upstreamHeaders(ctx: RequestContext, listenPort: number): Record<string, string | string[]> {
  const { host, port } = ctx.route!.service;
  const listed = connectionListed(ctx.headers.get('connection') ?? []);
  const out: Record<string, string | string[]> = {};
  for (const [name, values] of ctx.headers) if (!HOP_BY_HOP_REQUEST.has(name) && !listed.has(name)) out[name] = values.length === 1 ? values[0]! : [...values];
  out.host = port === 80 ? host : `${host}:${port}`;
  if (wantsTrailers(ctx)) out.te = 'trailers';
  // handler.lua access.after: a websocket upgrade is passed on, any other is not.
  if (ctx.getFirstHeader('upgrade')?.toLowerCase() === 'websocket') Object.assign(out, { connection: 'keep-alive, Upgrade', upgrade: 'websocket' });
  // ngx.req.http_version(): Lua prints 1.0 as 1; other versions (HTTP/1.2) have none.
  const version = ({ '1.0': '1 ', '1.1': '1.1 ' } as Record<string, string>)[ctx.req.httpVersion] ?? '';
  const after = (name: string, value: string): string => [ctx.getFirstHeader(name), value].filter(Boolean).join(', ');
  // X-Forwarded-Host is $host: the Host header without its port, else the server_name of Kong's template.
  return Object.assign(out, {
    via: after('via', `${version}kong/3.9.1`),
    'x-forwarded-for': after('x-forwarded-for', ctx.clientIp),
    'x-forwarded-proto': 'http',
    'x-forwarded-host': ctx.getFirstHeader('host')?.replace(/:\d+$/, '') || 'kong',
    'x-forwarded-port': String(listenPort),
    'x-forwarded-path': ctx.rawPath,
    'x-real-ip': ctx.clientIp,
    'x-kong-request-id': ctx.requestId,
    // kong.conf nginx_location_proxy_set_header: replaces whatever X-Request-ID lines the client sent.
    'x-request-id': ctx.correlationId,
  });
}

/** Kept-alive connections to the services, one agent per address and port. */
export class Upstreams {
  private readonly agents = new Map<string, http.Agent>();
  constructor(private readonly connections: number | null = null) {}

  agent(address: string, port: number): http.Agent {
    const key = `${address}|${port}`;
    let agent = this.agents.get(key);
    if (!agent) this.agents.set(key, (agent = new http.Agent({ keepAlive: true, maxSockets: this.connections ?? Infinity, scheduling: 'lifo' })));
    return agent;
  }

  async close(): Promise<void> {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
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

/** One exchange over node:http, which sends exactly the framing asked for. */
export async function proxy(ctx: RequestContext, res: ServerResponse, deps: ProxyDeps): Promise<void> {
  const service = ctx.route!.service;
  let address: string;
  try {
    address = await resolveHost(service.host, deps.hosts);
  } catch {
    return deps.fail(503, 'name resolution failed');
  }
  const agent = deps.upstreams.agent(address, service.port);
  const req = http.request({ host: address, port: service.port, method: ctx.method, path: upstreamUri(ctx), headers: upstreamHeaders(ctx, deps.listenPort), agent, setHost: false });
  let outcome: 'timeout' | 'client gone' | null = null;
  const stop = (why: 'timeout' | 'client gone') => (): void => void req.destroy(new Error((outcome = why)));
  req.on('socket', (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(stop('timeout'), service.connectTimeout);
    socket.once('connect', () => clearTimeout(timer)).once('close', () => clearTimeout(timer));
  });
  req.setTimeout(service.readTimeout, stop('timeout'));
  res.once('close', () => res.writableFinished || stop('client gone')());
  req.on('error', () => {
    if (outcome === 'client gone') return;
    if (res.headersSent) return void res.destroy();
    deps.fail(outcome ? 504 : 502, outcome ? 'The upstream server is timing out' : 'An invalid response was received from the upstream server');
  });
  req.on('response', (upstream) => {
    const headers: Array<[string, string]> = [];
    for (let i = 0; i < upstream.rawHeaders.length; i += 2) headers.push([upstream.rawHeaders[i]!, upstream.rawHeaders[i + 1]!]);
    const listed = connectionListed(headers.filter(([n]) => n.toLowerCase() === 'connection').map(([, v]) => v));
    if (!wantsTrailers(ctx)) listed.add('trailer');
    const kept = headers.filter(([name]) => !HOP_BY_HOP_RESPONSE.has(name.toLowerCase()) && !listed.has(name.toLowerCase()));
    // The service's Date or none: nginx adds no Date of its own to a proxied answer (measured).
    res.sendDate = false;
    const status = upstream.statusCode ?? 502;
    const filtered = deps.headerFilter(kept);
    const gzip = gzipResponse(ctx, status, filtered);
    res.writeHead(status, filtered);
    upstream.on('error', () => res.destroy());
    if (!gzip) return void upstream.pipe(res);
    res.once('close', () => gzip.destroy());
    upstream.pipe(gzip).pipe(res);
  });
  if (deps.body !== null) {
    req.setHeader('content-length', deps.body.length);
    req.end(deps.body);
  } else {
    // No body: no framing header at all (Node would add Content-Length: 0 to a bodiless POST).
    req.removeHeader('content-length');
    req.removeHeader('transfer-encoding');
    req.end();
  }
}
