/**
 * Requests framed to hurt, sent as raw bytes through the local gateway and a real Kong 3.9 in front
 * of the real service: every one gets a prompt answer in the API's JSON error shape (a half-sent
 * body, which nginx never answers, gets its connection closed after client_body_timeout), and
 * nothing is stored.
 */
import { DEMO, raw, startBoth, type BothGateways, type RawAnswer } from './both-gateways';

let both: BothGateways;
let jobsBefore: number;
beforeAll(async () => {
  both = await startBoth('kong_hostile_framing');
  jobsBefore = await both.jobCount();
}, 120_000);
afterAll(async () => {
  await both?.close();
});

const KEY = `X-API-Key: ${DEMO.writer}\r\n`;
const JOB = JSON.stringify({
  title: 'Hostile framing',
  description: 'x',
  location: 'Remote',
  employmentType: 'full_time',
});
const post = (headers: string): string =>
  `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${KEY}Content-Type: application/json\r\n${headers}\r\n`;

/** The API's error shape, with the request id Kong's answers quote. */
function expectJsonError(answer: RawAnswer, status: number): void {
  expect({ status: answer.status, type: answer.headers['content-type'] }).toEqual({
    status,
    type: 'application/json; charset=utf-8',
  });
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(typeof body.error).toBe('string');
  expect(body.request_id).toBe(answer.headers['x-kong-request-id']);
}

const cases: Array<[string, Array<string | Buffer>, number]> = [
  [
    'CONNECT to a host and port (authority form)',
    ['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
    400,
  ],
  ['CONNECT to a path', ['CONNECT /api/v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n'], 405],
  ['two Host headers', [`GET /api/v1/jobs HTTP/1.1\r\nHost: a\r\nHost: b\r\n${KEY}\r\n`], 400],
  [
    'Transfer-Encoding: chunked, identity',
    [post('Transfer-Encoding: chunked, identity\r\n'), `${JOB.length.toString(16)}\r\n${JOB}\r\n0\r\n\r\n`],
    501,
  ],
  [
    'Transfer-Encoding: xchunked',
    [post('Transfer-Encoding: xchunked\r\n'), `${JOB.length.toString(16)}\r\n${JOB}\r\n0\r\n\r\n`],
    501,
  ],
  [
    'Transfer-Encoding: gzip, chunked, asking for HTML',
    [post('Accept: text/html\r\nTransfer-Encoding: gzip, chunked\r\n'), '0\r\n\r\n'],
    501,
  ],
  ['Transfer-Encoding twice', [post('Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n'), '0\r\n\r\n'], 400],
  [
    'Content-Length with Transfer-Encoding',
    [
      post(`Content-Length: ${JOB.length}\r\nTransfer-Encoding: chunked\r\n`),
      `${JOB.length.toString(16)}\r\n${JOB}\r\n0\r\n\r\n`,
    ],
    400,
  ],
  ['a chunk size that is not hex', [post('Transfer-Encoding: chunked\r\n'), `zz\r\n${JOB}\r\n0\r\n\r\n`], 400],
  ['HTTP/2.0 on the request line', ['GET /api/v1/jobs HTTP/2.0\r\nHost: x\r\n\r\n'], 505],
  ['a declared body over the 100 KB limit', [post('Content-Length: 200000\r\n'), JOB], 413],
  [
    'a chunked body over the 100 KB limit',
    [
      post('Transfer-Encoding: chunked\r\n'),
      ...Array.from({ length: 8 }, () => `4000\r\n${'a'.repeat(0x4000)}\r\n`),
      '0\r\n\r\n',
    ],
    413,
  ],
];

describe.each(['local gateway', 'real Kong'] as const)('through the %s', (name) => {
  const gateway = () => both.gateways.find((g) => g.name === name)!;

  test.each(cases)('%s: a prompt JSON error', async (_what, parts, status) => {
    const answer = await raw(gateway().port, parts, 1500);
    expectJsonError(answer, status);
    expect(answer.answeredMs).not.toBeNull();
  });

  test.each(['text/html', 'text/plain', 'application/xml', 'text/html;q=0.9, application/json;q=0.1'])(
    "a client that asks for %s still gets JSON errors: no route, a refused method, a missing key, nginx's own 400",
    async (accept) => {
      for (const parts of [
        [`GET /api/v9/nothing HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\n\r\n`],
        [`TRACE /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\n\r\n`],
        [`GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\n\r\n`],
        [`GET /api/v1/jobs HTTP/1.1\r\nHost: a\r\nHost: b\r\nAccept: ${accept}\r\n\r\n`],
      ]) {
        const answer = await raw(gateway().port, parts, 1500);
        expect([parts[0]!.split('\r\n')[0], answer.headers['content-type']]).toEqual([
          parts[0]!.split('\r\n')[0],
          'application/json; charset=utf-8',
        ]);
        expect(typeof (JSON.parse(answer.body) as { error?: unknown }).error).toBe('string');
      }
    },
  );

  test('a 20 KB chunk extension on a body that is not a job: a prompt JSON 4xx (the gateway or the service refuses it)', async () => {
    const answer = await raw(gateway().port, [
      post('Transfer-Encoding: chunked\r\n'),
      `5;${'e'.repeat(20_000)}\r\nhello\r\n0\r\n\r\n`,
    ]);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(typeof (JSON.parse(answer.body) as { error?: unknown }).error).toBe('string');
  });

  test('a half-sent body (Content-Length 500, 17 bytes, then silence): the connection is closed after the 10 s body timeout, and the service never hears of it', async () => {
    const before = both.service.received.length;
    const answer = await raw(gateway().port, [post('Content-Length: 500\r\n'), '{"title":"short"}'], 20_000);
    expect({ closed: answer.closed, text: answer.text }).toEqual({ closed: true, text: '' });
    expect(answer.ms).toBeGreaterThanOrEqual(9_000);
    expect(answer.ms).toBeLessThan(15_000);
    expect(both.service.received.slice(before).filter((r) => r.method === 'POST')).toEqual([]);
  }, 30_000);
});

test('nothing any of them sent was stored', async () => {
  expect(await both.jobCount()).toBe(jobsBefore);
});
