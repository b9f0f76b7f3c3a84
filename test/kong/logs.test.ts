/**
 * No API key in any line a real Kong writes, started by docs/operations.md's command (kong start
 * under the image's entrypoint and its redaction filter: harness/real-kong.ts, `recipe`): canary keys in every place a client can put
 * one, sent to a Kong whose service is down, so that nginx's error log quotes each request line.
 * test/kong-logs.test.ts shows, on plain nginx, the raw lines the filter has to clean.
 */
import { freePort, startRealKong, type RealKong } from '../../harness/real-kong';
import { DEMO } from '../local-gateway/support';
import { rawText } from '../helpers/raw-text';

const CANARY = 'CANARYKEY';
let kong: RealKong;
const answers: Record<string, string> = {};

/** Sends raw bytes to Kong's proxy and returns everything it answered before closing. */
const raw = (request: string) => rawText(Number(new URL(kong.proxyUrl).port), request);

beforeAll(async () => {
  kong = await startRealKong({
    serviceUrl: `http://127.0.0.1:${await freePort()}`,
    gatewaySecret: 'logs-secret',
    recipe: true,
  });
  const host = 'Host: kong.test\r\nConnection: close\r\n';
  const key = `X-API-Key: ${DEMO.reader}\r\n`;
  answers.query = await raw(`GET /api/v1/jobs?status=active&api_key=${CANARY}-query HTTP/1.1\r\n${host}\r\n`);
  answers.validQuery = await raw(`GET /api/v1/jobs?status=active&api_key=${DEMO.reader} HTTP/1.1\r\n${host}\r\n`);
  answers.encoded = await raw(`GET /api/v1/jobs?page=2&api%5Fkey=${CANARY}-encoded HTTP/1.1\r\n${host}${key}\r\n`);
  answers.header = await raw(`GET /api/v1/jobs/42 HTTP/1.1\r\n${host}X-API-Key: ${CANARY}-header\r\n\r\n`);
  answers.referrer = await raw(
    `GET /api/v1/jobs HTTP/1.1\r\n${host}${key}Referer: https://partner.example/search?api_key=${CANARY}-referrer\r\n\r\n`,
  );
  answers.trace = await raw(`TRACE /api/v1/jobs?api_key=${CANARY}-trace HTTP/1.1\r\n${host}\r\n`);
  answers.tooLarge = await raw(
    `POST /api/v1/jobs?api_key=${CANARY}-large HTTP/1.1\r\n${host}X-API-Key: ${DEMO.writer}\r\nContent-Type: application/json\r\nContent-Length: ${200 * 1024}\r\n\r\n${'x'.repeat(200 * 1024)}`,
  );
  answers.malformed = await raw(`GET /api/v1/jobs?api_key=${CANARY}-bad line HTTP/1.1\r\n${host}\r\n`);
  // Access lines are written after each response; give the filter a moment to pass the last ones.
  for (let i = 0; i < 100 && kong.logs().stdout.trim().split('\n').length < 8; i++)
    await new Promise((r) => setTimeout(r, 50));
}, 120_000);
afterAll(() => kong?.stop());

const status = (answer: string | undefined) => /^HTTP\/1\.1 (\d{3})/.exec(answer ?? '')?.[1];

test('Kong answered each canary request (401 for the canary keys, 502 for a valid key, 405 TRACE, 413, 400)', () => {
  expect(Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, status(v)]))).toEqual({
    query: '401',
    validQuery: '502',
    encoded: '502',
    header: '401',
    referrer: '502',
    trace: '405',
    tooLarge: '413',
    malformed: '400',
  });
});

test('neither stdout nor stderr carries a key, canary or valid', () => {
  const { stdout, stderr } = kong.logs();
  for (const text of [stdout, stderr]) {
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain(DEMO.reader);
    expect(text).not.toContain(DEMO.writer);
  }
});

test('the redacted logs keep what an operator needs: the failure, the path, statuses and request ids', () => {
  const { stdout, stderr } = kong.logs();
  expect(stderr).toContain('connect() failed');
  expect(stderr).toContain('request: "GET /api/v1/jobs?[REDACTED] HTTP/1.1"');
  const access = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(access.map((l) => [l.method, l.status])).toEqual(
    expect.arrayContaining([
      ['GET', 401],
      ['GET', 502],
      ['TRACE', 405],
      ['POST', 413],
      ['GET', 400],
    ]),
  );
  expect(access.filter((l) => l.status !== 400).every((l) => /^\/api\/v1\/jobs(\/42)?$/.test(l.path as string))).toBe(
    true,
  );
  expect(access.every((l) => /^[0-9a-f]{32}$/.test(l.request_id as string))).toBe(true);
});
