import net from 'node:net';
import { runService, type RunningService } from '../service/server';
import { freshDatabase, type TestDatabase } from './helpers/database';

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
  service = await runService({ databaseUrl: database.url, port: 0, logLevel: 'silent', clientErrorLingerMs: 500 });
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
  ['Content-Length twice', 'POST /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', /Content-Length sent more than once/],
  ['Content-Length with Transfer-Encoding', 'POST /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /Transfer-Encoding with Content-Length/],
  ['a Content-Length that is not a number', 'POST /api/v1/jobs HTTP/1.1\r\nHost: jobs\r\nContent-Length: ten\r\n\r\n', /invalid Content-Length/],
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
  expect(res.raw.endsWith('{"error":"Malformed HTTP request: invalid character or folded line in a header"}')).toBe(true);
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
