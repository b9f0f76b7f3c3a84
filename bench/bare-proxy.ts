/**
 * The floor for F: the cheapest proxy Node can be, so the local gateway's cost is read against
 * what any proxy process costs on the same machine, not against zero. node:http in, an undici
 * pool out (the gateway's own client), the request forwarded as it came plus the identity
 * headers the gateway would add for the bench's reader; no plugins, routing, logging or header
 * rewriting. The response goes back as the service sent it, minus hop-by-hop headers.
 *
 *   node dist/bench/bare-proxy.js   (UPSTREAM_URL, PORT, and the identity as BARE_* variables)
 */
import http from 'node:http';
import { Pool } from 'undici';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'host',
  'content-length',
]);

const upstream = new Pool(process.env.UPSTREAM_URL!, { pipelining: 1, keepAliveTimeout: 60_000 });
const identity: Record<string, string> = {
  'x-gateway-secret': process.env.BARE_GATEWAY_SECRET ?? '',
  'x-consumer-id': process.env.BARE_CONSUMER_ID ?? '',
  'x-consumer-username': process.env.BARE_CONSUMER_USERNAME ?? '',
  'x-consumer-groups': process.env.BARE_CONSUMER_GROUPS ?? '',
};

http
  .createServer((req, res) => {
    if (req.url === '/healthz') {
      res.end('ok');
      return;
    }
    const headers: Record<string, string | string[]> = { ...identity };
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name) && name !== 'x-api-key') headers[name] = value;
    upstream.request({ method: req.method as 'GET', path: req.url ?? '/', headers }).then(
      (response) => {
        const out: string[] = [];
        for (const [name, value] of Object.entries(response.headers)) {
          if (value === undefined || HOP_BY_HOP.has(name)) continue;
          for (const one of Array.isArray(value) ? value : [value]) out.push(name, one);
        }
        res.writeHead(response.statusCode, out);
        response.body.pipe(res);
      },
      () => {
        res.writeHead(502);
        res.end();
      },
    );
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
