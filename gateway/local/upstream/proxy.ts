/** Forwards a request to the service as Kong 3.9.1's nginx does. */
import http, { type ServerResponse } from 'node:http';
import type { RequestContext } from '../request-context';
import { escapeUri } from '../router';
import { gzipResponse } from './compress';
import { resolveHost, type HostsTable } from './resolve';

/** Never forwarded as the client sent them; Kong sets its own or drops them. */
const HOP_BY_HOP_REQUEST = new Set(
  'connection keep-alive proxy proxy-connection proxy-authenticate te trailer transfer-encoding upgrade expect content-length host via x-forwarded-for x-forwarded-proto x-forwarded-host x-forwarded-port x-forwarded-path x-forwarded-prefix x-real-ip'.split(
    ' ',
  ),
);
/** nginx's upstream module never passes these response headers on. */
const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

const csv = (values: readonly string[]): string[] =>
  values
    .join(',')
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
/** The names a Connection header lists, except the three Kong keeps. */
const connectionListed = (values: readonly string[]): Set<string> =>
  new Set(csv(values).filter((t) => !['keep-alive', 'close', 'upgrade'].includes(t)));
const wantsTrailers = (ctx: RequestContext): boolean => csv(ctx.headers.get('te') ?? []).includes('trailers');

export function upstreamUri(ctx: RequestContext): string {
  const uri = escapeUri(ctx.path);
  return ctx.args === null ? uri : `${uri}?${ctx.args}`;
}

function upstreamHeaders(
  ctx: RequestContext,
  listenPort: number,
  target: { host: string; port: number },
): Record<string, string | string[]> {
  // kong/runloop/balancer/init.lua: the upstream's host_header (else the target's name), with the target's port.
  const host = ctx.route!.service.hostHeader ?? target.host;
  const port = target.port;
  const listed = connectionListed(ctx.headers.get('connection') ?? []);
  const out: Record<string, string | string[]> = {};
  for (const [name, values] of ctx.headers)
    if (!HOP_BY_HOP_REQUEST.has(name) && !listed.has(name)) out[name] = values.length === 1 ? values[0]! : [...values];
  out.host = port === 80 ? host : `${host}:${port}`;
  if (wantsTrailers(ctx)) out.te = 'trailers';
  // handler.lua access.after: a websocket upgrade is passed on, any other is not.
  if (ctx.getFirstHeader('upgrade')?.toLowerCase() === 'websocket')
    Object.assign(out, { connection: 'keep-alive, Upgrade', upgrade: 'websocket' });
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
    if (!agent)
      this.agents.set(
        key,
        (agent = new http.Agent({ keepAlive: true, maxSockets: this.connections ?? Infinity, scheduling: 'lifo' })),
      );
    return agent;
  }

  close(): void {
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

/** nginx's non-idempotent methods (ngx_http_upstream_next): never sent to another instance once any of them was sent. */
const NON_IDEMPOTENT = new Set(['POST', 'LOCK', 'PATCH']);

/** The next target of each service's upstream, round-robin, as Kong's default balancer algorithm. */
const nextTarget = new Map<string, number>();

/** What one try came to: answered (or the client left), or failed before any response with whether the request had been sent. */
type Try = { done: true } | { done: false; sent: boolean; timedOut: boolean };

/**
 * Forwards the request to one of the service's targets; when a try fails before a response, the
 * next target gets it, up to the service's `retries`, as nginx's proxy_next_upstream (error
 * timeout) does under Kong's balancer (kong/init.lua balancer, set_more_tries): a POST or PATCH only
 * when none of it was sent. Health checks are not modelled (gateway/local/README.md).
 */
export async function proxy(ctx: RequestContext, res: ServerResponse, deps: ProxyDeps): Promise<void> {
  const service = ctx.route!.service;
  let last: Try = { done: false, sent: false, timedOut: false };
  for (let attempt = 0; attempt <= service.retries; attempt++) {
    const index = nextTarget.get(service.id) ?? 0;
    nextTarget.set(service.id, (index + 1) % service.targets.length);
    const target = service.targets[index % service.targets.length]!;
    let address: string;
    try {
      address = await resolveHost(target.host, deps.hosts);
    } catch {
      return deps.fail(503, 'name resolution failed');
    }
    last = await proxyOnce(ctx, res, deps, { ...target, address });
    if (last.done || (last.sent && NON_IDEMPOTENT.has(ctx.method))) break;
  }
  if (last.done) return;
  deps.fail(
    last.timedOut ? 504 : 502,
    last.timedOut ? 'The upstream server is timing out' : 'An invalid response was received from the upstream server',
  );
}

/** One exchange over node:http, which sends exactly the framing asked for. */
function proxyOnce(
  ctx: RequestContext,
  res: ServerResponse,
  deps: ProxyDeps,
  target: { host: string; port: number; address: string },
): Promise<Try> {
  const service = ctx.route!.service;
  const agent = deps.upstreams.agent(target.address, target.port);
  const req = http.request({
    host: target.address,
    port: target.port,
    method: ctx.method,
    path: upstreamUri(ctx),
    headers: upstreamHeaders(ctx, deps.listenPort, target),
    agent,
    setHost: false,
  });
  let outcome: 'timeout' | 'client gone' | null = null;
  let sent = false;
  const stop = (why: 'timeout' | 'client gone') => (): void => void req.destroy(new Error((outcome = why)));
  return new Promise<Try>((resolve) => {
    req.on('socket', (socket) => {
      const connected = () => (sent = true);
      if (!socket.connecting) return void connected();
      const timer = setTimeout(stop('timeout'), service.connectTimeout);
      socket.once('connect', () => (clearTimeout(timer), connected())).once('close', () => clearTimeout(timer));
    });
    req.setTimeout(service.readTimeout, stop('timeout'));
    const onClientClose = () => res.writableFinished || stop('client gone')();
    res.once('close', onClientClose);
    req.on('error', () => {
      res.off('close', onClientClose);
      if (outcome === 'client gone') return resolve({ done: true });
      if (res.headersSent) return (res.destroy(), resolve({ done: true }));
      resolve({ done: false, sent, timedOut: outcome === 'timeout' });
    });
    req.on('response', (upstream) => {
      resolve({ done: true });
      const headers: Array<[string, string]> = [];
      for (let i = 0; i < upstream.rawHeaders.length; i += 2)
        headers.push([upstream.rawHeaders[i]!, upstream.rawHeaders[i + 1]!]);
      const listed = connectionListed(headers.filter(([n]) => n.toLowerCase() === 'connection').map(([, v]) => v));
      if (!wantsTrailers(ctx)) listed.add('trailer');
      const kept = headers.filter(
        ([name]) => !HOP_BY_HOP_RESPONSE.has(name.toLowerCase()) && !listed.has(name.toLowerCase()),
      );
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
  });
}
