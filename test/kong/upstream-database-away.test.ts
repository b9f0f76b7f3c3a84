/**
 * kong.yaml's upstream on a real Kong 3.9 when MariaDB is away from every instance: each answers
 * /readyz and every request with the service's 503 and Retry-After. Kong's active checks must not
 * take them out for it, or partners would get Kong's own "no healthy upstream" 503 without
 * Retry-After. The two targets are stand-ins answering exactly as the service does then.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRealKong, type RealKong } from '../../harness/real-kong';
import { DEMO } from '../local-gateway/support';

const AWAY = JSON.stringify({
  error: 'Service temporarily unavailable: the database cannot be reached. Retry after Retry-After seconds.',
});
let targets: http.Server[];
let kong: RealKong;
const probes: string[] = [];

beforeAll(async () => {
  targets = await Promise.all(
    [0, 1].map(
      () =>
        new Promise<http.Server>((resolve) => {
          const server = http.createServer((req, res) => {
            if (req.url === '/readyz') probes.push(req.url);
            res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' }).end(AWAY);
          });
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  kong = await startRealKong({
    serviceUrl: 'http://127.0.0.1:9',
    upstreamTargets: targets.map((target) => `127.0.0.1:${(target.address() as AddressInfo).port}`),
    gatewaySecret: 'database-away-secret-0001',
  });
}, 90_000);
afterAll(async () => {
  await kong?.stop();
  for (const target of targets ?? []) target.close();
});

test("past the checks that would take a target out, partners get the service's 503 with Retry-After, and Kong keeps both targets", async () => {
  // Two failed probes at one a second would eject a target that 503s count against.
  const started = Date.now();
  while (probes.length < 6 && Date.now() - started < 15_000) await new Promise((resolve) => setTimeout(resolve, 200));
  expect(probes.length).toBeGreaterThanOrEqual(6);
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${kong.proxyUrl}/api/v1/jobs?limit=1`, { headers: { 'X-API-Key': DEMO.reader } });
    expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() }).toEqual({
      status: 503,
      retryAfter: '1',
      body: AWAY,
    });
  }
  const metrics = await (await fetch(`${kong.statusUrl}/metrics`)).text();
  const states = [...metrics.matchAll(/^kong_upstream_target_health\{[^}]*state="(\w+)"[^}]*\} 1$/gm)].map((m) => m[1]);
  expect(states).toEqual(['healthy', 'healthy']);
}, 60_000);
