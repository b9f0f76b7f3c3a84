/**
 * npm run bench's load generator (bench/measure.ts, wrk with bench/wrk.lua) against a real
 * HTTP server: what it sends, what it counts, and what it says about its own cost.
 */
import { generatorBusy, runLoad, saturated } from '../../bench/measure';
import { serve, type Served } from '../helpers/http';

let server: Served;
const seen: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];

beforeAll(async () => {
  server = await serve((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      // Every third id is refused, so the counts by status can be checked.
      res.statusCode = req.url!.endsWith('/3') ? 503 : 201;
      res.end('{}');
    });
  });
});
afterAll(() => server.close());

test('sends every path with the headers and the exact body, and counts the answers by status', async () => {
  const body = JSON.stringify({ title: 'Ingénieur "plateforme"', note: 'line\nbreak\\' });
  const result = await runLoad({
    origin: server.url,
    method: 'POST',
    paths: ['/api/v1/jobs/1', '/api/v1/jobs/2', '/api/v1/jobs/3'],
    headers: { 'X-Consumer-ID': 'bench-writer', 'Content-Type': 'application/json' },
    body,
    connections: 3,
    threads: 1,
    seconds: 1,
    timeoutSeconds: 5,
  });

  expect(new Set(seen.map((r) => r.url))).toEqual(new Set(['/api/v1/jobs/1', '/api/v1/jobs/2', '/api/v1/jobs/3']));
  expect(
    seen.every((r) => r.method === 'POST' && r.body === body && r.headers['x-consumer-id'] === 'bench-writer'),
  ).toBe(true);
  expect(result.statuses['201']! + result.statuses['503']!).toBe(result.requests);
  // The connections cycle through the paths, so about a third of the answers are refusals.
  expect(result.statuses['503']! / result.requests).toBeGreaterThan(0.2);
  expect(result.statuses['503']! / result.requests).toBeLessThan(0.45);
  expect(result.requests).toBeGreaterThanOrEqual(seen.length - 3);
  expect(result.p50).toBeGreaterThan(0);
  expect(result.p99).toBeGreaterThanOrEqual(result.p50);
  expect(result.seconds).toBeGreaterThan(0.9);
  // Its own CPU time, read from /proc by wrk itself: above zero, below the wall time of its thread.
  expect(result.generator.cpuMicros).toBeGreaterThan(0);
  expect(generatorBusy(result)).toBeLessThanOrEqual(1.05);
});

test("a generator on a CPU 80% of its threads' time or more is saturated", () => {
  const window = { seconds: 5, generator: { threads: 2, cpuMicros: 0 } };
  expect(saturated({ ...window, generator: { threads: 2, cpuMicros: 7.9e6 } })).toBe(false);
  expect(saturated({ ...window, generator: { threads: 2, cpuMicros: 8e6 } })).toBe(true);
  expect(saturated({ ...window, generator: { threads: 1, cpuMicros: 4.5e6 } })).toBe(true);
});

test('runs wrk on the CPUs it is given', async () => {
  const result = await runLoad({
    origin: server.url,
    method: 'GET',
    paths: ['/api/v1/jobs/1'],
    headers: {},
    connections: 2,
    threads: 1,
    seconds: 1,
    timeoutSeconds: 5,
    cpus: '0',
  });
  expect(result.requests).toBeGreaterThan(0);
  expect(result.generator.cpuMicros).toBeGreaterThan(0);
});

test("a server that is not there is a failure with wrk's reason, not a result", async () => {
  const closed = await serve((_req, res) => res.end());
  const origin = closed.url;
  await closed.close();
  await expect(
    runLoad({
      origin,
      method: 'GET',
      paths: ['/'],
      headers: {},
      connections: 1,
      threads: 1,
      seconds: 1,
      timeoutSeconds: 1,
    }),
  ).rejects.toThrow(/^wrk failed: unable to connect to 127\.0\.0\.1:\d+ Connection refused/);
});
