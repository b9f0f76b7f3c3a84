/**
 * drainOnStop (service/shutdown.ts) on a plain node:http server, driven through raw sockets so
 * every header and every close is seen: what SIGTERM does to the requests and connections it finds.
 * The whole service under SIGTERM: test/faults/shutdown.test.ts.
 */
import http from 'node:http';
import net from 'node:net';
import { drainOnStop } from '../../service/shutdown';

interface Connection {
  /** Everything the server sent on it. */
  received(): string;
  /** Resolves when the server closed (or cut) it. */
  closed: Promise<void>;
  write(text: string): void;
}

/** A server on a free port whose requests go to `handler`, with drainOnStop attached. */
async function startServer(handler: (response: http.ServerResponse) => void) {
  const server = http.createServer((_request, response) => handler(response));
  server.keepAliveTimeout = 60_000; // far beyond any test: a socket closed early was closed by the drain
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const connect = async (): Promise<Connection> => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += String(chunk)));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise((resolve) => socket.once('connect', resolve));
    return { received: () => data, closed, write: (text) => socket.write(text) };
  };
  return { server, drain: drainOnStop(server), connect, port };
}

const GET = 'GET / HTTP/1.1\r\nHost: test\r\n\r\n';
const tick = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms));
const refused = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => resolve('accepted'));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });

test('a request in flight is answered with Connection: close, its socket closes, no new connection is accepted, and the drain reports success', async () => {
  const waiting: http.ServerResponse[] = [];
  const { drain, connect, port } = await startServer((response) => waiting.push(response));
  const client = await connect();
  client.write(GET);
  await tick();
  const setTimeoutSpy = jest.spyOn(global, 'setTimeout');
  const clearTimeoutSpy = jest.spyOn(global, 'clearTimeout');
  const drained = drain(5_000);
  // The grace period's timer, made when the drain starts (counting all timers would count other files' too).
  const grace = setTimeoutSpy.mock.results.at(-1)!.value as NodeJS.Timeout;
  setTimeoutSpy.mockRestore();
  await tick();
  expect(await refused(port)).toBe('ECONNREFUSED');
  waiting[0]!.end('done');
  await client.closed;
  expect(client.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  expect(client.received()).toContain('\r\nConnection: close\r\n');
  expect(client.received()).toMatch(/\r\n\r\ndone$/);
  expect(await drained).toBe(true);
  // The grace period's timer is gone with it: a stopped service has nothing left to wait for.
  expect(clearTimeoutSpy).toHaveBeenCalledWith(grace);
  clearTimeoutSpy.mockRestore();
});

test('an idle keep-alive connection is closed at once, not at its idle time-out', async () => {
  const { drain, connect } = await startServer((response) => response.end('ok'));
  const client = await connect();
  client.write(GET);
  await tick();
  expect(client.received()).toContain('Connection: keep-alive');
  const started = Date.now();
  expect(await drain(5_000)).toBe(true);
  await client.closed;
  expect(Date.now() - started).toBeLessThan(1_000);
});

test('a response that already promised keep-alive: its socket closes as soon as it finishes', async () => {
  const waiting: http.ServerResponse[] = [];
  const { drain, connect } = await startServer((response) => {
    response.writeHead(200, { 'Content-Type': 'text/plain' });
    response.write('part one, ');
    waiting.push(response);
  });
  const client = await connect();
  client.write(GET);
  await tick();
  expect(client.received()).toContain('Connection: keep-alive');
  const drained = drain(5_000);
  await tick();
  const started = Date.now();
  waiting[0]!.end('part two');
  await client.closed;
  expect(client.received()).toMatch(/part two\r\n0\r\n\r\n$/);
  expect(await drained).toBe(true);
  expect(Date.now() - started).toBeLessThan(1_000);
});

test('a request whose head was still arriving when the drain began is answered with Connection: close', async () => {
  const { drain, connect } = await startServer((response) => response.end('late'));
  const client = await connect();
  client.write('GET / HTTP/1.1\r\nHost: test\r\n');
  await tick();
  const drained = drain(5_000);
  await tick();
  client.write('\r\n');
  await client.closed;
  expect(client.received()).toContain('\r\nConnection: close\r\n');
  expect(client.received()).toMatch(/\r\n\r\nlate$/);
  expect(await drained).toBe(true);
});

test('a request still running when the grace period ends: its socket is cut without an answer and the drain reports it', async () => {
  const { drain, connect } = await startServer(() => undefined);
  const client = await connect();
  client.write(GET);
  await tick();
  const started = Date.now();
  expect(await drain(200)).toBe(false);
  expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  await client.closed;
  expect(client.received()).toBe('');
});
