/**
 * Heads whose lines end in a bare LF, as nginx reads them (a line ends at LF, CR or not): the
 * local gateway forwards them like CRLF heads. Single requests are pinned against real Kong by the
 * differential check ("bare LF:"); here, what it cannot compare: requests pipelined in one packet
 * (nginx answered 200, 200 when measured) and one after another on a kept-alive connection.
 */
import net from 'node:net';
import { DEMO, gatewayOverStub } from './support';

const stack = gatewayOverStub();

/** Writes each part (100 ms apart) on one connection; the statuses answered until it closes. */
function statuses(parts: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(stack.gateway.port, '127.0.0.1');
    let out = '';
    parts.forEach((part, i) => setTimeout(() => socket.write(part), i * 100));
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('close', () => resolve([...out.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => m[1]!)));
    socket.on('error', reject);
    setTimeout(() => socket.destroy(), 3000).unref();
  });
}

const get = (target: string, last = false) =>
  `GET ${target} HTTP/1.1\nHost: x\nX-API-Key: ${DEMO.reader}\n${last ? 'Connection: close\n' : ''}\n`;
const post = (body: string) =>
  `POST /api/v1/jobs HTTP/1.1\nHost: x\nX-API-Key: ${DEMO.writer}\nContent-Type: application/json\nContent-Length: ${body.length}\n\n${body}`;

test('pipelined in one packet: a POST with its body, then a GET, both answered and forwarded whole', async () => {
  const before = stack.upstream.received.length;
  expect(await statuses([post('{"a":1}') + get('/api/v1/jobs?limit=2', true)])).toEqual(['200', '200']);
  // Which reaches the upstream first is not compared: the local gateway proxies pipelined requests side by side.
  expect(
    stack.upstream.received
      .slice(before)
      .map((r) => [r.method, r.url, r.body.toString()])
      .sort(),
  ).toEqual([
    ['GET', '/api/v1/jobs?limit=2', ''],
    ['POST', '/api/v1/jobs', '{"a":1}'],
  ]);
});

test('one after another on a kept-alive connection', async () => {
  expect(await statuses([get('/api/v1/jobs?limit=1'), get('/api/v1/jobs?limit=2', true)])).toEqual(['200', '200']);
});
