/**
 * The headers Kong 3.9.1 adds on its own with kong.conf's `headers = X-Kong-Request-Id`, and
 * clear_query_arg's re-encoding (kong/pdk/service/request.lua -> resty.ada.search.remove).
 */
import net from 'node:net';
import { parseQuery } from '../../gateway/local/request-context';
import { DEMO, gatewayEnv, gatewayOverStub, overOneStub, send, startGateway } from './support';

describe('Via to the service (set whatever the headers setting says)', () => {
  const stack = gatewayOverStub();
  const last = () => stack.upstream.received.at(-1)!;

  test('"1.1 kong/3.9.1", after the client\'s own Via', async () => {
    await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
    expect(last().headers.via).toBe('1.1 kong/3.9.1');
    await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader, Via: '1.0 edge' } });
    expect(last().headers.via).toBe('1.0 edge, 1.1 kong/3.9.1');
  });

  test('an HTTP/1.0 client gives "1 kong/3.9.1" (Lua prints the number 1.0 as 1)', async () => {
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(stack.gateway.port, '127.0.0.1', () =>
        socket.write(`GET /api/v1/jobs HTTP/1.0\r\nHost: x\r\nX-API-Key: ${DEMO.reader}\r\n\r\n`),
      );
      socket.on('close', () => resolve());
      socket.on('error', reject);
      socket.resume();
    });
    expect(last().headers.via).toBe('1 kong/3.9.1');
  });

  test("with kong.conf's `headers = X-Kong-Request-Id`: no Server, Via or latency headers to clients", async () => {
    const proxied = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
    const rejected = await send(stack.gateway.url, { path: '/api/v1/jobs' });
    for (const res of [proxied, rejected]) {
      expect(Object.keys(res.headers).filter((h) => /^(server|via|x-kong-.*latency)$/.test(h))).toEqual([]);
      expect(res.headers['x-kong-request-id']).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(last().headers['x-kong-request-id']).toBe(proxied.headers['x-kong-request-id']);
  });
});

describe('clear_query_arg: resty.ada.search.remove (WHATWG URLSearchParams)', () => {
  const stack = gatewayOverStub();
  test.each([
    [
      'department=Data%20Science&api_key=k&type=contract,full-time',
      'department=Data+Science&type=contract%2Cfull-time',
    ],
    ['a=1&api_key=k&a=2&b', 'a=1&a=2&b='],
    // Every argument cleared: Kong still sends the `?`.
    ['api_key=k&api_key=j', ''],
    ['x=%7E~&api_key=k&y=%zz', 'x=%7E%7E&y=%25zz'],
    ['api%5Fkey=k&z=1', 'z=1'],
  ])('the service receives %s as ?%s', async (args, expected) => {
    const res = await send(stack.gateway.url, {
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.reader },
      rawQuery: args,
    });
    expect(res.status).toBe(200);
    expect(stack.upstream.received.at(-1)!.url).toBe(`/api/v1/jobs?${expected}`);
  });

  test('get_query reads the first 100 arguments and says "truncated" past them', () => {
    const args = Array.from({ length: 101 }, (_, i) => `a${i}=${i}`).join('&');
    expect(parseQuery(args).truncated).toBe(true);
    expect(parseQuery(args).args.size).toBe(100);
    expect(parseQuery(args).args.has('a100')).toBe(false);
    expect(parseQuery('a=1&&=x&b').truncated).toBe(false);
  });

  test('a key past the 100th argument never reaches the service', async () => {
    await overOneStub([(cf) => startGateway(cf.paths, gatewayEnv('x'))], async ([gateway], upstream) => {
      const filler = Array.from({ length: 100 }, (_, i) => `f${i}=1`).join('&');
      const res = await send(gateway.url, {
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.reader },
        rawQuery: `${filler}&api_key=${DEMO.writer}`,
      });
      expect(res.status).toBe(200);
      const url = upstream.received.at(-1)!.url;
      expect(url).not.toContain(DEMO.writer);
      expect(url).toContain('f99=1');
    });
  });
});
