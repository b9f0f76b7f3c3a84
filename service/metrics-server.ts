import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { MESSAGES } from './errors';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

function reply(res: http.ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) }).end(body);
}

/** GET /metrics in Prometheus' text format, on a listener of its own: the gateway routes to the API's port only, so partners can never read it. */
export async function serveMetrics(registry: Registry, port: number, host: string): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics')
      return reply(res, 404, 'application/json; charset=utf-8', JSON.stringify({ error: MESSAGES.notFound }));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return reply(res, 405, 'application/json; charset=utf-8', JSON.stringify({ error: MESSAGES.methodNotAllowed }));
    }
    registry.metrics().then(
      (text) => reply(res, 200, registry.contentType, text),
      () => reply(res, 500, 'application/json; charset=utf-8', JSON.stringify({ error: MESSAGES.internal })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  }).catch((error: NodeJS.ErrnoException) => {
    throw new Error(`Cannot listen for metrics on ${host}:${port} (${error.code ?? error.message})`);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
