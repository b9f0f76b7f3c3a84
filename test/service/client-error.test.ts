import net from 'node:net';
import { runService, type RunningService } from '../../service/server';
import { json, writer } from '../helpers/consumers';
import { freshDatabase, jobRowCount, type TestDatabase } from '../helpers/database';
import { head, rawExchange } from '../faults/raw-client';

// Requests Node's HTTP parser refuses never reach Koa; service/client-error.ts answers them on
// the real server that runService starts. Before it, Node wrote an empty 400/431.

let database: TestDatabase;
let service: RunningService;
let port: number;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent before closing, for "exactly one response" checks. */
  raw: string;
}

/** Writes raw bytes on a new connection and reads until the server closes it. */
function rawRequest(...chunks: string[]): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      for (const chunk of chunks) socket.write(chunk);
    });
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (raw += data));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), raw });
    });
  });
}

/** The JSON error answer every refused request must get. */
function expectJsonError(res: RawResponse, status: number, error: string | RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers.connection).toBe('close');
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
  expect(JSON.parse(res.body)).toEqual({ error: expect.stringMatching(error) });
}

beforeAll(async () => {
  database = await freshDatabase('client_error');
  service = await runService({
    databaseUrl: database.url,
    port: 0,
    logLevel: 'silent',
    clientErrorLingerMs: 500,
    headersTimeoutMs: 1000,
    bodyReadTimeoutMs: 1000,
  });
  port = Number(new URL(service.url).port);
});
afterAll(async () => {
  await service.stop();
  await database.close();
});

const get = (headers: string) => `GET /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\n${headers}\r\n`;

test.each([
  ['a control byte in a header value', get('X-Note: a\x01b\r\n'), /invalid character or folded line in a header/],
  ['a space in a header name', get('X Note: b\r\n'), /invalid character or folded line in a header/],
  ['a folded header (obs-fold)', get('X-Note: a\r\n  continued\r\n'), /invalid character or folded line in a header/],
  [
    'Content-Length twice',
    'POST /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
    /Content-Length sent more than once/,
  ],
  [
    'Content-Length with Transfer-Encoding',
    'POST /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    /Transfer-Encoding with Content-Length/,
  ],
  [
    'a Content-Length that is not a number',
    'POST /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\nContent-Length: ten\r\n\r\n',
    /invalid Content-Length/,
  ],
  ['an unknown method', 'FOO /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\n\r\n', /unknown method/],
  ['a TLS handshake on the plain port', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', /unknown method/],
  ['an unsupported HTTP version', 'GET /api/v1/jobs HTTP/9.9\r\nHost: jobs\r\n\r\n', /invalid HTTP version/],
  ['a space in the target', 'GET /api/v1/jobs nope HTTP/1.1\r\nHost: jobs\r\n\r\n', /^Malformed HTTP request$/],
])('%s: JSON 400', async (_label, request, error) => {
  expectJsonError(await rawRequest(request), 400, error);
});

test('headers over 16 KB: JSON 431, even while the client is still sending them', async () => {
  const res = await rawRequest(get(`X-Big: ${'a'.repeat(20_000)}\r\n`), get(`X-More: ${'b'.repeat(40_000)}\r\n`));
  expectJsonError(res, 431, 'Request headers too large');
});

test('after a good request on a keep-alive connection, a bad one still gets its own JSON answer', async () => {
  const res = await rawRequest(get(''), get('X-Note: a\x00b\r\n'));
  const answers = res.raw.match(/HTTP\/1\.1 \d{3}(?= )/g);
  expect(answers).toEqual(['HTTP/1.1 200', 'HTTP/1.1 400']);
  expect(res.raw.endsWith('{"error":"Malformed HTTP request: invalid character or folded line in a header"}')).toBe(
    true,
  );
});

test('the server carries on serving after refusing', async () => {
  await rawRequest('FOO / HTTP/1.1\r\n\r\n');
  const res = await fetch(`${service.url}/healthz`);
  expect(res.status).toBe(200);
});

test('a client that keeps its side open after the answer is cut off once CLIENT_ERROR_LINGER_MS (500 ms here) has passed', async () => {
  // allowHalfOpen: the client does not close when the server ends its side, as a client still
  // busy sending would not; the server must then close the connection itself.
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
  socket.on('error', () => undefined);
  let answer = '';
  socket.setEncoding('latin1');
  socket.on('data', (data: string) => (answer += data));
  socket.write('FOO / HTTP/1.1\r\n\r\n');
  await new Promise((resolve) => socket.once('end', resolve));
  const answered = Date.now();
  expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  // Past the linger the server has closed the connection: the client's writes are refused (the
  // first one draws the reset, a later one fails on it), which closes the client's socket.
  await new Promise((resolve) => setTimeout(resolve, 800));
  const writing = setInterval(() => socket.write('still sending'), 100);
  const at = await Promise.race([closed, new Promise<null>((resolve) => setTimeout(() => resolve(null), 3000))]);
  clearInterval(writing);
  socket.destroy();
  expect(at).not.toBeNull();
  expect(at! - answered).toBeGreaterThanOrEqual(500);
});

describe('framing and methods the app itself must refuse (every answer JSON, nothing stored)', () => {
  const post = (headers: Record<string, string>) =>
    head('POST /api/v1/jobs HTTP/1.1', { ...writer, ...json, ...headers });
  const validJob = JSON.stringify({
    title: 'Chunked',
    department: 'Framing',
    type: 'contract',
    description: 'Sent in chunks.',
  });

  /** The answer must be a JSON error with one of `statuses`, closing the connection, and nothing stored. */
  async function expectRefused(steps: Array<string | number>, statuses: number[], error?: string | RegExp) {
    const before = await jobRowCount(database);
    const res = await rawExchange(port, steps);
    expect(statuses).toContain(res.status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toEqual({ error: error ? expect.stringMatching(error) : expect.any(String) });
    expect(await jobRowCount(database)).toBe(before);
    return res;
  }

  test('CONNECT is a JSON 405 (Node would close the connection without a word)', async () => {
    for (const target of ['jobs.example:443', '/api/v1/jobs']) {
      await expectRefused(
        [`CONNECT ${target} HTTP/1.1\r\nHost: jobs.example:443\r\n\r\n`],
        [405],
        /^Method not allowed$/,
      );
    }
  });

  test('two Host headers are a 400 as nginx answers them, on every path, in any letter case', async () => {
    for (const path of ['/api/v1/jobs', '/healthz', '/nowhere']) {
      await expectRefused(
        [`GET ${path} HTTP/1.1\r\nHost: jobs\r\nhost: other\r\n\r\n`],
        [400],
        'Malformed HTTP request: Host sent more than once',
      );
    }
    await expectRefused(
      [post({ HOST: 'other', 'Content-Length': String(validJob.length) }), validJob],
      [400],
      /Host sent more than once/,
    );
  });

  test.each([
    'xchunked',
    'chunked, identity',
    'identity',
    'gzip, chunked',
    'chunked, gzip',
    'chunked, chunked',
    'gzip',
    'deflate',
    'compress',
    'chunked;q=1',
  ])('Transfer-Encoding: %s on a create is a JSON 400 or 501', async (coding) => {
    await expectRefused(
      [post({ 'Transfer-Encoding': coding }), `${validJob.length.toString(16)}\r\n${validJob}\r\n0\r\n\r\n`],
      [400, 501],
    );
  });

  test('Transfer-Encoding: xchunked on a read is a JSON error too', async () => {
    await expectRefused(
      [head('GET /api/v1/jobs HTTP/1.1', { ...writer, 'Transfer-Encoding': 'xchunked' }), '0\r\n\r\n'],
      [400, 501],
    );
  });

  test.each([
    ['a chunk size that is not hex', 'zz\r\nhello\r\n0\r\n\r\n', 400, /invalid chunk size/],
    [
      'chunk extensions over 16 KB',
      `5;${'x'.repeat(20_000)}\r\nhello\r\n0\r\n\r\n`,
      413,
      /^Chunk extensions too large$/,
    ],
    ['chunk data longer than its size', '5\r\nhelloXXXX\r\n0\r\n\r\n', 400, /^Malformed HTTP request/],
  ])('%s: a JSON answer at once', async (_label, body, status, error) => {
    const res = await expectRefused([post({ 'Transfer-Encoding': 'chunked' }), body], [status], error);
    expect(res.ms).toBeLessThan(1000);
  });

  test('a well-formed chunked create is still served', async () => {
    const half = Math.floor(validJob.length / 2);
    const [first, second] = [validJob.slice(0, half), validJob.slice(half)];
    const res = await rawExchange(port, [
      post({ 'Transfer-Encoding': 'chunked', Connection: 'close' }),
      `${first.length.toString(16)}\r\n${first}\r\n`,
      50,
      `${second.length.toString(16)}\r\n${second}\r\n0\r\n\r\n`,
    ]);
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body).data.title).toBe('Chunked');
  });

  test('a half-sent body is a JSON 408 once BODY_READ_TIMEOUT_MS (1 s here) has passed, and the connection is closed', async () => {
    const res = await expectRefused(
      [post({ 'Content-Length': '500' }), '{"title":"short"}'],
      [408],
      'Request body not received in time',
    );
    expect(res.ms).toBeGreaterThanOrEqual(950);
  });

  test('a half-sent body on a read is a JSON 408 as well', async () => {
    await expectRefused([head('GET /api/v1/jobs HTTP/1.1', { ...writer, 'Content-Length': '50' }), '{'], [408]);
  });

  test('a head sent a byte at a time is a JSON 408 once HEADERS_TIMEOUT_MS has passed', async () => {
    const slow = [...'GET /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\nX-Slow: yes\r\n\r\n'].flatMap((char) => [char, 100]);
    await expectRefused(slow, [408], 'Request not received in time');
  });

  test('a half-sent body nobody reads (a probe) is answered, then a JSON 408 once the whole request is overdue, and closed', async () => {
    const res = await rawExchange(port, ['GET /healthz HTTP/1.1\r\nHost: jobs\r\nContent-Length: 100\r\n\r\n{']);
    const answers = res.raw.match(/HTTP\/1\.1 \d{3}(?= )/g);
    expect(answers).toEqual(['HTTP/1.1 200', 'HTTP/1.1 408']);
    expect(res.raw.endsWith('{"error":"Request not received in time"}')).toBe(true);
  });

  test('a connection that never sends a byte is a JSON 408 and closed once HEADERS_TIMEOUT_MS has passed', async () => {
    const res = await expectRefused([], [408], 'Request not received in time');
    expect(res.ms).toBeGreaterThanOrEqual(950);
  });

  test('ten half-sent uploads that hang up leave every turn free: the next request needs none of theirs', async () => {
    const gone = Array.from({ length: 10 }, () =>
      rawExchange(port, [post({ 'Content-Length': '500' }), '{"title":"short"}'], { hangUpAfterMs: 200 }),
    );
    await Promise.all(gone);
    const started = Date.now();
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${service.url}/api/v1/jobs`, { headers: writer })).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
