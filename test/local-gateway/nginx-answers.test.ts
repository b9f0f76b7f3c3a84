/**
 * What Kong 3.9.1 answers before any plugin runs, byte-level where it matters:
 * - nginx refuses TRACE and CONNECT itself (measured against Kong 3.9.1 by test/kong/differential.test.ts) (ngx_http_process_request_header) and Kong's error
 *   handler (kong/error_handlers.lua through error_page) shapes the 405;
 * - Kong's no-route 404 runs the global plugins' header_filter (kong/runloop/plugins_iterator.lua
 *   get_collected_iterator falls back to the global iterator);
 * - every answer carries X-Request-ID: the client's, else $kong_request_id (nginx-proxy-jobs.conf);
 * - malformed requests get nginx's status through Kong's error handler, never an empty body
 *   (raw sockets, since no HTTP client sends these);
 * - no Keep-Alive header, ever.
 */
import net from 'node:net';
import { LOCAL_MAX_BODY } from '../../gateway/local/nginx';
import { DEMO, gatewayOverStub, send } from './support';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The gateway closed the connection after answering. */
  closed: boolean;
}

/** Sends raw bytes on a fresh connection; parses the first answer. */
function raw(port: number, bytes: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = Buffer.alloc(0);
    let closed = false;
    const finish = (): void => {
      const text = data.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, body: text.slice(end + 4), closed });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, 1000);
    socket.on('data', (d: Buffer) => {
      data = Buffer.concat([data, d]);
    });
    socket.on('end', () => {
      closed = true;
      clearTimeout(timer);
      socket.destroy();
      finish();
    });
    socket.on('error', reject);
  });
}

const stack = gatewayOverStub();
const key = `X-API-Key: ${DEMO.reader}\r\n`;

function expectKongError(answer: RawAnswer, status: number, message: string): void {
  expect(answer.status).toBe(status);
  expect(JSON.parse(answer.body)).toEqual({ error: message, request_id: answer.headers['x-kong-request-id'] });
  expect(answer.headers['x-kong-request-id']).toMatch(/^[0-9a-f]{32}$/);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.headers['keep-alive']).toBeUndefined();
}

describe('methods nginx refuses itself', () => {
  test('TRACE on a jobs path: 405 "Method not allowed" through the error template, X-Request-ID echoed, connection closed, never proxied', async () => {
    const before = stack.upstream.received.length;
    const answer = await raw(
      stack.gateway.port,
      `TRACE /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}X-Request-ID: trace-me\r\n\r\n`,
    );
    expectKongError(answer, 405, 'Method not allowed');
    expect(answer.headers['x-request-id']).toBe('trace-me');
    expect(answer.headers.connection).toBe('close');
    expect(answer.closed).toBe(true);
    expect(stack.upstream.received.length).toBe(before);
  });

  test('TRACE anywhere, without a key: the same 405 with X-Request-ID = the request id the body quotes (no route, no plugin ran)', async () => {
    const answer = await raw(stack.gateway.port, 'TRACE /nowhere HTTP/1.1\r\nHost: x\r\n\r\n');
    expectKongError(answer, 405, 'Method not allowed');
    expect(answer.headers['x-request-id']).toBe(answer.headers['x-kong-request-id']);
  });

  test('CONNECT: 405 with a path; its usual authority form is a bad request line to nginx (400); never a dropped connection', async () => {
    const withPath = await raw(stack.gateway.port, 'CONNECT /api/v1/jobs HTTP/1.1\r\nHost: example.com\r\n\r\n');
    expectKongError(withPath, 405, 'Method not allowed');
    expect(withPath.closed).toBe(true);
    const authority = await raw(
      stack.gateway.port,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
    );
    expectKongError(authority, 400, 'Bad request');
    expect(authority.closed).toBe(true);
  });
});

describe("Kong's no-route 404", () => {
  test("carries the request id: the client's echoed, else the one the body quotes", async () => {
    const echoed = await send(stack.gateway.url, {
      path: '/api/v2/nothing',
      headers: { 'X-Request-ID': 'partner-42' },
    });
    expect(echoed.status).toBe(404);
    expect(echoed.headers['x-request-id']).toBe('partner-42');
    const generated = await raw(stack.gateway.port, 'GET /api/v2/nothing HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(generated.status).toBe(404);
    expect(generated.headers['x-request-id']).toBe(generated.headers['x-kong-request-id']);
    expect(generated.headers['keep-alive']).toBeUndefined();
    expect(generated.headers.connection).toBe('keep-alive');
    expect(generated.closed).toBe(false);
  });
});

describe("malformed requests: nginx's status through Kong's error handler, never an empty body", () => {
  const cases: Array<[string, string, number, string]> = [
    [
      'duplicate Content-Length',
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}`,
      400,
      'Bad request',
    ],
    [
      'Content-Length with Transfer-Encoding',
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      400,
      'Bad request',
    ],
    ...['1x', '', 'abc', '1e3', '0x10'].map((length): [string, string, number, string] => [
      `Content-Length: ${JSON.stringify(length)} (so request-size-limiting never sees one that is not a number)`,
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}Content-Length: ${length}\r\n\r\n`,
      400,
      'Bad request',
    ]),
    [
      'a NUL byte in a header value',
      `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}X-A: a\u0000b\r\n\r\n`,
      400,
      'Bad request',
    ],
    [
      'a control byte in a header value (nginx would accept it; Node cannot)',
      `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}X-A: a\u0001b\r\n\r\n`,
      400,
      'Bad request',
    ],
    [
      'a folded header line (nginx would ignore the line; Node cannot)',
      `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}X-A: 1\r\n  folded\r\n\r\n`,
      400,
      'Bad request',
    ],
    [
      'a bad chunk size in a body being read',
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-API-Key: ${DEMO.writer}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n`,
      400,
      'Bad request',
    ],
    ['a lower-case method', 'get /api/v1/jobs HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'Bad request'],
    ['HTTP/1.1 without Host', `GET /api/v1/jobs HTTP/1.1\r\n${key}\r\n`, 400, 'Bad request'],
    ['two Host headers', `GET /api/v1/jobs HTTP/1.1\r\nHost: a\r\nHost: b\r\n${key}\r\n`, 400, 'Bad request'],
    [
      'Transfer-Encoding on HTTP/1.0',
      `POST /api/v1/jobs HTTP/1.0\r\n${key}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      400,
      'Bad request',
    ],
    [
      'a header line over 8 KiB (494, answered as 400)',
      `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}X-Big: ${'a'.repeat(9000)}\r\n\r\n`,
      400,
      'Request header or cookie too large',
    ],
    [
      'headers over 32 KiB in all (494, answered as 400)',
      `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}${Array.from({ length: 5 }, (_, i) => `X-Big-${i}: ${'a'.repeat(7000)}\r\n`).join('')}\r\n`,
      400,
      'Request header or cookie too large',
    ],
    [
      "headers Node's own parser cannot hold",
      `GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}${Array.from({ length: 8 }, (_, i) => `X-Big-${i}: ${'a'.repeat(7000)}\r\n`).join('')}\r\n`,
      400,
      'Request header or cookie too large',
    ],
    [
      'a request line over 8 KiB',
      `GET /api/v1/jobs?q=${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\n${key}\r\n`,
      414,
      'URI too long',
    ],
    [
      "a request line Node's own parser cannot hold",
      `GET /api/v1/jobs?q=${'a'.repeat(40000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      414,
      'URI too long',
    ],
  ];
  test.each(cases)('%s', async (_name, bytes, status, message) => {
    const before = stack.upstream.received.length;
    const answer = await raw(stack.gateway.port, bytes);
    expectKongError(answer, status, message);
    expect(answer.headers['x-request-id']).toBe(answer.headers['x-kong-request-id']);
    expect(answer.headers.connection).toBe('close');
    expect(answer.closed).toBe(true);
    expect(stack.upstream.received.length).toBe(before);
  });

  test('a Transfer-Encoding other than "chunked": 501 in the API\'s error shape (gateway/kong/nginx-proxy-jobs.conf), not nginx\'s HTML page', async () => {
    for (const te of ['gzip', 'gzip, chunked', 'chunked, identity', 'xchunked']) {
      const answer = await raw(
        stack.gateway.port,
        `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${key}Transfer-Encoding: ${te}\r\n\r\n0\r\n\r\n`,
      );
      expect([te, answer.status, answer.headers['content-type']]).toEqual([te, 501, 'application/json; charset=utf-8']);
      expect(JSON.parse(answer.body)).toEqual({
        error: 'Transfer-Encoding not supported: send a body with Content-Length or Transfer-Encoding: chunked',
        request_id: answer.headers['x-kong-request-id'],
      });
      expect(answer.closed).toBe(true);
    }
  });
});

describe('the local body limit (8 MiB: Kong has none, but buffers to disk where this buffers in memory)', () => {
  test('a larger body is 413 "Payload too large" (by Content-Length before any plugin, or while reading a chunked one)', async () => {
    const before = stack.upstream.received.length;
    const declared = await raw(
      stack.gateway.port,
      `PUT /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\nContent-Length: ${LOCAL_MAX_BODY + 1}\r\n\r\n`,
    );
    expectKongError(declared, 413, 'Payload too large');
    expect(declared.closed).toBe(true);
    const put = (size: number) =>
      send(stack.gateway.url, {
        method: 'PUT',
        path: '/api/v1/jobs/1',
        headers: { 'X-API-Key': DEMO.writer },
        body: Buffer.alloc(size, 'x'),
        chunked: true,
      });
    const chunked = await put(LOCAL_MAX_BODY + 1);
    expect([chunked.status, chunked.json?.error]).toEqual([413, 'Payload too large']);
    expect((await put(LOCAL_MAX_BODY)).status).toBe(200);
    expect(stack.upstream.received.length).toBe(before + 1);
  });
});

describe("request lines nginx reads and Node's parser refuses (rewritten for Node, restored for Kong's logic)", () => {
  test('raw UTF-8 bytes in the path are routed and proxied escaped; X-Forwarded-Path keeps them as sent', async () => {
    const answer = await raw(
      stack.gateway.port,
      Buffer.from(`GET /api/v1/jobs/\xc3\xa9 HTTP/1.1\r\nHost: x\r\n${key}\r\n`, 'latin1'),
    );
    expect(answer.status).toBe(200);
    const got = stack.upstream.received.at(-1)!;
    expect(got.url).toBe('/api/v1/jobs/%C3%A9');
    expect(
      Buffer.from(got.rawHeaders[got.rawHeaders.findIndex((h) => /^x-forwarded-path$/i.test(h)) + 1]!, 'latin1'),
    ).toEqual(Buffer.from('/api/v1/jobs/\xc3\xa9', 'latin1'));
  });

  test('a path that is not UTF-8 matches no route (404), as in Kong', async () => {
    const answer = await raw(
      stack.gateway.port,
      Buffer.from(`GET /api/v1/jobs/\xe9 HTTP/1.1\r\nHost: x\r\n${key}\r\n`, 'latin1'),
    );
    expect([answer.status, JSON.parse(answer.body).error]).toEqual([404, 'no Route matched with those values']);
  });

  test('HTTP/1.2 is served; the service sees Via without a version, as Kong sends it', async () => {
    const answer = await raw(stack.gateway.port, `GET /api/v1/jobs HTTP/1.2\r\nHost: x\r\n${key}\r\n`);
    expect(answer.status).toBe(200);
    expect(stack.upstream.received.at(-1)!.headers.via).toBe('kong/3.9.1');
  });
});
