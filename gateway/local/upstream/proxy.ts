/**
 * Forwards a request to the route's service over kept-alive connections, streaming both bodies,
 * as Kong's proxy does: hop-by-hop headers dropped both ways, Host set to the service's (unless
 * preserve_host), X-Forwarded-* and X-Real-IP added, the service's connect/read timeouts applied.
 * Failures answer like Kong: 502 when the service cannot be reached or answers garbage, 504 on a
 * timeout, 503 when the name does not resolve.
 */
import http from 'node:http';
import type { ServerResponse } from 'node:http';
import type { Exit } from '../plugins/definition';
import { encodeQuery } from '../query';
import type { RequestContext } from '../request-context';
import { resolveHost, type HostsTable } from './resolve';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function connectionTokens(value: string | string[] | undefined): Set<string> {
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(joined.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean));
}

/** Characters a path may carry unescaped (RFC 3986 pchar, plus `/` and existing escapes). */
function escapePath(path: string): string {
  return path.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/g, (c) => encodeURIComponent(c));
}

function upstreamPath(ctx: RequestContext): string {
  const base = ctx.route.service.path;
  let path = escapePath(ctx.path);
  if (base) path = base.endsWith('/') && path.startsWith('/') ? base + path.slice(1) : base + path;
  const query = ctx.queryRewritten ? encodeQuery(ctx.query) : ctx.rawQuery;
  return query ? `${path}?${query}` : path;
}

function upstreamHeaders(ctx: RequestContext, listenPort: number): http.OutgoingHttpHeaders {
  const service = ctx.route.service;
  const dropped = connectionTokens(ctx.req.headers.connection);
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, values] of ctx.headers) {
    if (HOP_BY_HOP.has(name) || dropped.has(name)) continue;
    out[name] = values.length === 1 ? values[0] : values;
  }
  const remote = ctx.req.socket.remoteAddress ?? '';
  const clientHost = ctx.req.headers.host ?? '';
  if (!ctx.route.preserveHost) out.host = service.port === 80 ? service.host : `${service.host}:${service.port}`;
  const forwardedFor = ctx.req.headers['x-forwarded-for'];
  out['x-forwarded-for'] = forwardedFor ? `${forwardedFor}, ${remote}` : remote;
  out['x-forwarded-proto'] = 'http';
  out['x-forwarded-host'] = clientHost.replace(/:\d+$/, '');
  out['x-forwarded-port'] = String(listenPort);
  out['x-forwarded-path'] = ctx.path;
  out['x-real-ip'] = remote;
  out['x-kong-request-id'] = ctx.requestId;
  if (ctx.bufferedBody) {
    delete out['content-length'];
    out['content-length'] = String(ctx.bufferedBody.length);
  }
  return out;
}

export interface ProxyDeps {
  agent: http.Agent;
  hosts: HostsTable;
  listenPort: number;
  /** Called once, before the response to the client starts: Kong's header_filter phase. */
  responseHeaders(): Map<string, string>;
  sendExit(exit: Exit): void;
}

export async function proxy(ctx: RequestContext, res: ServerResponse, deps: ProxyDeps): Promise<void> {
  const service = ctx.route.service;
  let address: string;
  try {
    address = await resolveHost(service.host, deps.hosts);
  } catch {
    deps.sendExit(ctx.error(503, 'name resolution failed'));
    return;
  }

  await new Promise<void>((resolve) => {
    let settled = false;
    const done = (): void => {
      if (!settled) {
        settled = true;
        resolve();
      }
    };
    const fail = (status: 502 | 504): void => {
      if (res.headersSent) res.destroy();
      else deps.sendExit(ctx.error(status, status === 504 ? 'The upstream server is timing out' : 'An invalid response was received from the upstream server'));
      done();
    };

    const upstream = http.request({
      host: address,
      port: service.port,
      method: ctx.method,
      path: upstreamPath(ctx),
      headers: upstreamHeaders(ctx, deps.listenPort),
      agent: deps.agent,
      setHost: false,
    });
    let timedOut = false;

    upstream.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => {
        timedOut = true;
        upstream.destroy(new Error('connect timeout'));
      }, service.connectTimeout);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    upstream.setTimeout(Math.max(service.readTimeout, service.writeTimeout), () => {
      timedOut = true;
      upstream.destroy(new Error('upstream timeout'));
    });

    upstream.on('response', (upRes) => {
      const dropped = connectionTokens(upRes.headers.connection);
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(upRes.headers)) {
        if (value === undefined || HOP_BY_HOP.has(name) || dropped.has(name)) continue;
        headers[name] = value;
      }
      for (const [name, value] of deps.responseHeaders()) headers[name.toLowerCase()] = value;
      res.writeHead(upRes.statusCode ?? 502, headers);
      upRes.pipe(res);
      upRes.on('end', done);
      upRes.on('error', () => {
        res.destroy();
        done();
      });
    });
    upstream.on('error', () => fail(timedOut ? 504 : 502));

    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
      done();
    });

    if (ctx.bufferedBody) upstream.end(ctx.bufferedBody);
    else ctx.req.pipe(upstream);
  });
}
