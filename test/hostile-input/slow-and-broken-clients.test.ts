/**
 * Hostile input on the wire: the service as a crowd of bad clients meets it, on a real process: half-sent uploads, broken
 * chunked bodies and clients that send a byte at a time, all at once, while ordinary partners
 * keep calling. The bad ones are answered (or let go) without holding an admission turn, the
 * ordinary ones are served promptly meanwhile, and nothing is left behind once the crowd leaves.
 */
import http from 'node:http';
import { writer, reader } from '../helpers/consumers';
import { freshDatabase, jobRowCount, type TestDatabase } from '../helpers/database';
import { startServiceProcess, type ServiceProcess } from '../helpers/processes';
import { head, rawExchange, type RawAnswer } from '../faults/raw-client';
import { sleep } from '../faults/support';

const BODY_READ_TIMEOUT_MS = 3000;
const HEADERS_TIMEOUT_MS = 1500;

let database: TestDatabase;
let service: ServiceProcess;
let port: number;
let metricsUrl: string;

beforeAll(async () => {
  database = await freshDatabase('faults_hostile_clients');
  service = startServiceProcess({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    BODY_READ_TIMEOUT_MS: String(BODY_READ_TIMEOUT_MS),
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    CLIENT_ERROR_LINGER_MS: '500',
  });
  const outcome = await service.listening;
  if (!('url' in outcome)) throw new Error(`the service exited at start-up: ${outcome.stderr}`);
  port = Number(new URL(outcome.url).port);
  // The JSON log line may reach stdout after the console line that said it listens.
  const logLine = () =>
    service
      .stdout()
      .split('\n')
      .find((entry) => entry.includes('"jobs service listening"'));
  for (let tries = 0; !logLine() && tries < 50; tries++) await sleep(100);
  metricsUrl = JSON.parse(logLine()!).metrics;
}, 30_000);
afterAll(async () => {
  await service.stop();
  await database.close();
});

/** The current value of each unlabelled metric named. */
async function gauges(...names: string[]): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl, { headers: { Connection: 'close' } })).text();
  return Object.fromEntries(names.map((name) => [name, Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])]));
}

/** GET on a connection of its own (no keep-alive socket stays open on the service). */
function ordinaryRequest(): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get(
      { port, host: '127.0.0.1', path: '/api/v1/jobs', headers: { ...reader, Connection: 'close' }, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, ms: Date.now() - started }));
      },
    );
    req.on('error', reject);
  });
}

const post = (headers: Record<string, string>) =>
  head('POST /api/v1/jobs HTTP/1.1', { ...writer, 'Content-Type': 'application/json', ...headers });
const partial = '{"title":"short"}';
const trickle = (text: string, everyMs: number) => [...text].flatMap((char) => [char, everyMs]);

function expectJsonError(answer: RawAnswer, status: number | number[]) {
  expect([status].flat()).toContain(answer.status);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String) });
}

test('50 half-sent bodies, 50 broken chunked bodies and 50 slow clients: each answered or let go, partners served meanwhile, nothing left behind', async () => {
  const halfSentStaying = Array.from({ length: 25 }, () =>
    rawExchange(port, [post({ 'Content-Length': '500' }), partial]),
  );
  const halfSentLeaving = Array.from({ length: 25 }, () =>
    rawExchange(port, [post({ 'Content-Length': '500' }), partial], { hangUpAfterMs: 300 }),
  );
  const brokenChunks: Array<[Promise<RawAnswer>, number | number[]]> = Array.from({ length: 50 }, (_, i) => {
    const chunked = post({ 'Transfer-Encoding': 'chunked' });
    switch (i % 5) {
      case 0:
        return [rawExchange(port, [chunked, 'zz\r\nhello\r\n0\r\n\r\n']), 400];
      case 1:
        return [rawExchange(port, [chunked, `5;${'x'.repeat(20_000)}\r\nhello\r\n0\r\n\r\n`]), 413];
      case 2:
        return [rawExchange(port, [post({ 'Transfer-Encoding': 'xchunked' }), '5\r\nhello\r\n0\r\n\r\n']), [400, 501]];
      case 3:
        return [
          rawExchange(port, [post({ 'Transfer-Encoding': 'chunked, identity' }), '5\r\nhello\r\n0\r\n\r\n']),
          [400, 501],
        ];
      default:
        // Chunk data longer than its size says, then silence.
        return [rawExchange(port, [chunked, '5\r\nhelloXXXX']), 400];
    }
  });
  const slowHeaders = Array.from({ length: 25 }, () =>
    rawExchange(port, trickle(post({ 'Content-Length': '2' }), 200)),
  );
  const slowBodies = Array.from({ length: 25 }, () =>
    rawExchange(port, [post({ 'Content-Length': '60' }), ...trickle(`{"title":"${'s'.repeat(40)}"}`, 200)]),
  );
  const crowd = Promise.all([
    ...halfSentStaying,
    ...halfSentLeaving,
    ...brokenChunks.map(([answer]) => answer),
    ...slowHeaders,
    ...slowBodies,
  ]);

  // Four partners calling back to back while the crowd is connected.
  let crowdGone = false;
  void crowd.then(() => (crowdGone = true));
  const served: Array<{ status: number; ms: number }> = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (!crowdGone) served.push(await ordinaryRequest());
    }),
  );
  await crowd;

  for (const answer of await Promise.all(halfSentStaying)) {
    expectJsonError(answer, 408);
    expect(JSON.parse(answer.body).error).toBe('Request body not received in time');
    expect(answer.ms).toBeLessThan(BODY_READ_TIMEOUT_MS + 2000);
  }
  for (const [answer, status] of brokenChunks) {
    const got = await answer;
    expectJsonError(got, status);
    // Answered when the parser failed, long before the body deadline would have.
    expect(got.ms).toBeLessThan(BODY_READ_TIMEOUT_MS - 1000);
  }
  for (const answer of await Promise.all(slowHeaders)) {
    expectJsonError(answer, 408);
    expect(answer.ms).toBeLessThan(HEADERS_TIMEOUT_MS + 2000);
  }
  for (const answer of await Promise.all(slowBodies)) {
    expectJsonError(answer, 408);
    expect(answer.ms).toBeLessThan(BODY_READ_TIMEOUT_MS + 2000);
  }

  // Every partner request was served, p99 within a second.
  expect(served.length).toBeGreaterThan(20);
  expect(served.filter(({ status }) => status !== 200)).toEqual([]);
  const sorted = served.map(({ ms }) => ms).sort((a, b) => a - b);
  expect(sorted[Math.ceil(sorted.length * 0.99) - 1]).toBeLessThan(1000);

  // Once the crowd is gone: no turn held or waited for, no connection open, nothing stored.
  let left: Record<string, number> = {};
  for (let tries = 0; tries < 30; tries++) {
    left = await gauges('admission_in_use', 'admission_waiting', 'http_open_connections');
    if (Object.values(left).every((value) => value === 0)) break;
    await sleep(200);
  }
  expect(left).toEqual({ admission_in_use: 0, admission_waiting: 0, http_open_connections: 0 });
  expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
  expect(await jobRowCount(database)).toBe(0);
}, 60_000);
