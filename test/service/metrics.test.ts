/**
 * The Prometheus endpoint (service/metrics.ts) on a running service: on its own port, never the
 * API's, with requests by route and status, admission, the pool and the change feed's backlog.
 */
import net from 'node:net';
import { runService, type RunningService } from '../../service/server';
import { json, reader, writer } from '../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { rawExchange } from '../faults/raw-client';

let database: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  database = await freshDatabase('metrics');
  service = await runService({ databaseUrl: database.url, port: 0, metricsPort: 0, logLevel: 'silent', dbPoolSize: 4 });
});
afterAll(async () => {
  await service.stop();
  await database.close();
});

const scrape = async () => {
  const res = await fetch(service.metricsUrl!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
};
/** The value of one series, given its full label set as Prometheus prints it. */
const value = (text: string, series: string) => {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test('the metrics listen on a port of their own; the API port does not serve them', async () => {
  expect(new URL(service.metricsUrl!).port).not.toBe(new URL(service.url).port);
  const onApi = await fetch(`${service.url}/metrics`, { headers: reader });
  expect(onApi.status).toBe(404);
  expect(await fetch(new URL('/other', service.metricsUrl)).then((res) => res.json())).toEqual({ error: 'Not found' });
  const post = await fetch(service.metricsUrl!, { method: 'POST' });
  expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
});

test('requests are counted and timed by route pattern, method and status, not by path', async () => {
  await fetch(`${service.url}/api/v1/jobs`, { headers: reader });
  await fetch(`${service.url}/api/v1/jobs/0190f5d8-0000-7000-8000-000000000000`, { headers: reader });
  await fetch(`${service.url}/api/v1/jobs/0190f5d8-0000-7000-8000-000000000001`, { headers: reader });
  await fetch(`${service.url}/no/such/path/${Date.now()}`, { headers: reader });
  await fetch(`${service.url}/healthz`);
  const text = await scrape();
  expect(value(text, 'http_requests_total{route="/healthz",method="GET",status="200"}')).toBe(1);
  expect(value(text, 'http_requests_total{route="/api/v1/jobs/:id",method="GET",status="404"}')).toBe(2);
  expect(value(text, 'http_requests_total{route="unmatched",method="GET",status="404"}')).toBeGreaterThanOrEqual(2);
  expect(text).not.toMatch(/0190f5d8|no\/such/);
  const listed = text
    .split('\n')
    .find((line) => /^http_requests_total\{route="\/api\/v1\/jobs\/?",method="GET",status="200"\}/.test(line));
  expect(listed).toBeDefined();
  expect(value(text, 'http_request_duration_seconds_count{route="/api/v1/jobs/:id",method="GET",status="404"}')).toBe(
    2,
  );
  expect(
    value(text, 'http_request_duration_seconds_bucket{le="+Inf",route="/api/v1/jobs/:id",method="GET",status="404"}'),
  ).toBe(2);
});

test('admission and the pool are visible: nothing held at rest, the pool opened its connections', async () => {
  const text = await scrape();
  expect(value(text, 'admission_in_use')).toBe(0);
  expect(value(text, 'admission_waiting')).toBe(0);
  expect(value(text, 'admission_refused_total')).toBe(0);
  expect(value(text, 'admission_timed_out_total')).toBe(0);
  expect(value(text, 'admission_service_seconds')).toBeGreaterThan(0);
  expect(value(text, 'db_pool_connections_open')).toBeGreaterThanOrEqual(1);
  expect(value(text, 'db_pool_connections_open')).toBeLessThanOrEqual(4);
  expect(value(text, 'db_pool_connections_in_use')).toBe(0);
  expect(value(text, 'db_pool_waiting')).toBe(0);
  expect(value(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
});

test("the change feed's pending rows: a create waits for a number until the feed is read", async () => {
  const body = JSON.stringify({
    title: 'Counted',
    department: 'Ops',
    type: 'contract',
    description: 'Seen by Prometheus.',
  });
  for (let i = 0; i < 2; i++) {
    expect(
      (await fetch(`${service.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json }, body })).status,
    ).toBe(201);
  }
  expect(value(await scrape(), 'jobs_change_feed_pending_rows')).toBe(2);
  expect((await fetch(`${service.url}/api/v1/jobs/changes`, { headers: reader })).status).toBe(200);
  expect(value(await scrape(), 'jobs_change_feed_pending_rows')).toBe(0);
});

test('requests refused before the app (parser errors, CONNECT) are counted by status', async () => {
  const port = Number(new URL(service.url).port);
  await rawExchange(port, ['FOO / HTTP/1.1\r\n\r\n']);
  await rawExchange(port, ['CONNECT jobs:443 HTTP/1.1\r\nHost: jobs:443\r\n\r\n']);
  const text = await scrape();
  expect(value(text, 'http_malformed_requests_total{status="400"}')).toBe(1);
  expect(value(text, 'http_malformed_requests_total{status="405"}')).toBe(1);
});

test('a taken metrics port is one clear line, and the service does not start', async () => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as net.AddressInfo).port;
  try {
    await expect(
      runService({ databaseUrl: database.url, port: 0, metricsPort: port, logLevel: 'silent' }),
    ).rejects.toThrow(`Cannot listen for metrics on 127.0.0.1:${port} (EADDRINUSE)`);
  } finally {
    taken.close();
  }
});

test('without METRICS_PORT there is no metrics listener', async () => {
  const plain = await runService({ databaseUrl: database.url, port: 0, logLevel: 'silent' });
  try {
    expect(plain.metricsUrl).toBeUndefined();
    expect((await fetch(`${plain.url}/healthz`)).status).toBe(200);
  } finally {
    await plain.stop();
  }
});
