/**
 * Request bodies reach the service framed the way Kong's nginx frames them
 * (proxy_request_buffering on: read whole, sent with Content-Length), so a body can never be read
 * as the next request on a kept-alive connection. The regression of issue 7: a GET with
 * `Transfer-Encoding: chunked` and a body used to be forwarded unframed; the service read the body
 * as a second request and later responses went to the wrong client.
 */
import net from 'node:net';
import { DEMO, gatewayOverStub, send } from './support';

/** Sends raw bytes, returns everything the gateway answered until it closed or went quiet. */
function rawExchange(port: number, bytes: string, quietMs = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let out = '';
    let timer: NodeJS.Timeout | null = null;
    const done = (): void => {
      if (timer) clearTimeout(timer);
      socket.destroy();
      resolve(out);
    };
    socket.on('data', (d) => {
      out += d.toString('latin1');
      if (timer) clearTimeout(timer);
      timer = setTimeout(done, quietMs);
    });
    socket.on('end', done);
    socket.on('error', reject);
  });
}

describe('one upstream connection shared by two consumers (pool of 1)', () => {
  const stack = gatewayOverStub({
    // Each answer names the consumer it is for: a desync hands one consumer's answer to the other.
    respond: (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ for: req.headers['x-consumer-username'] ?? null, method: req.method }));
    },
    gateway: { upstreamConnections: 1 },
  });

  test("a chunked GET with a body, interleaved with another consumer's requests: everyone gets their own answer, on one connection", async () => {
    const before = stack.upstream.received.length;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? send(stack.gateway.url, {
              path: '/api/v1/jobs',
              headers: { 'X-API-Key': DEMO.reader, 'Transfer-Encoding': 'chunked' },
              body: `hello-${i}`,
              chunked: true,
            })
          : send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer } }),
      ),
    );
    expect(answers.map((a) => [a.status, a.json?.for])).toEqual([
      [200, 'demo-reader'],
      [200, 'demo-writer'],
      [200, 'demo-reader'],
      [200, 'demo-writer'],
      [200, 'demo-reader'],
      [200, 'demo-writer'],
    ]);
    const arrived = stack.upstream.received.slice(before);
    expect(arrived).toHaveLength(6);
    expect(new Set(arrived.map((r) => r.socketId)).size).toBe(1);
    const withBody = arrived.filter((r) => r.headers['x-consumer-username'] === 'demo-reader');
    expect(
      withBody.map((r) => [r.headers['content-length'], r.headers['transfer-encoding'], r.body.toString()]).sort(),
    ).toEqual([
      ['7', undefined, 'hello-0'],
      ['7', undefined, 'hello-2'],
      ['7', undefined, 'hello-4'],
    ]);
  });

  test("issue 7's curl: GET with Transfer-Encoding: chunked and --data-binary hello is 200 (as on Kong), not an empty 400", async () => {
    const res = await rawExchange(
      stack.gateway.port,
      `GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${DEMO.reader}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n` +
        `GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${DEMO.writer}\r\n\r\n`,
    );
    const statuses = [...res.matchAll(/^HTTP\/1\.1 (\d+)/gm)].map((m) => m[1]);
    expect(statuses).toEqual(['200', '200']);
    expect([...res.matchAll(/"for":"([^"]+)"/g)].map((m) => m[1])).toEqual(['demo-reader', 'demo-writer']);
  });
});

describe('how each body is framed upstream', () => {
  const stack = gatewayOverStub();

  const last = () => stack.upstream.received.at(-1)!;

  test('Content-Length: forwarded with the same length and bytes', async () => {
    await send(stack.gateway.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json' },
      body: '{"a":1}',
    });
    expect([last().headers['content-length'], last().headers['transfer-encoding'], last().body.toString()]).toEqual([
      '7',
      undefined,
      '{"a":1}',
    ]);
  });

  test('chunked: read whole, forwarded with its Content-Length (nginx request buffering)', async () => {
    const body = 'z'.repeat(40_000);
    await send(stack.gateway.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.writer },
      body,
      chunked: true,
    });
    expect([last().headers['content-length'], last().headers['transfer-encoding'], last().body.length]).toEqual([
      '40000',
      undefined,
      40_000,
    ]);
  });

  test('no body: none forwarded, neither Content-Length nor Transfer-Encoding', async () => {
    await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
    expect([last().headers['content-length'], last().headers['transfer-encoding'], last().body.length]).toEqual([
      undefined,
      undefined,
      0,
    ]);
  });

  test('Expect: 100-continue is not forwarded; the body still arrives', async () => {
    await send(stack.gateway.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.writer, Expect: '100-continue' },
      body: 'abc',
    });
    expect([last().headers.expect, last().body.toString()]).toEqual([undefined, 'abc']);
  });
});

describe('Expect', () => {
  const stack = gatewayOverStub();

  test('100-continue is sent before routing, as Kong sends it (measured): on a request refused later too', async () => {
    const rejected = await rawExchange(
      stack.gateway.port,
      'POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n',
    );
    expect(rejected).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401 /);
    const accepted = await rawExchange(
      stack.gateway.port,
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-API-Key: ${DEMO.writer}\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`,
    );
    expect(accepted).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
  });

  test('other expectations are ignored, as nginx ignores them (Node alone would answer 417)', async () => {
    const res = await send(stack.gateway.url, {
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.reader, Expect: 'something-else' },
    });
    expect(res.status).toBe(200);
  });
});
