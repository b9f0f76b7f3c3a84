import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseHostsFile } from '../../gateway/local/upstream/resolve';
import { parseProxyListen } from '../../gateway/local';
import { DEMO, configFile, gatewayEnv, gatewayOverStub, send, startGateway } from './support';
import type { Parsed } from '../helpers/parsed';

describe('reloading the state files', () => {
  const stack = gatewayOverStub();

  const post = (key: string) =>
    send(stack.gateway.url, { method: 'POST', path: '/api/v1/jobs', headers: { 'X-API-Key': key }, body: '{}' });

  test('an edited demo.yaml is picked up without a restart: a scope granted to the same key', async () => {
    expect((await post(DEMO.reader)).status).toBe(403);
    const reloaded = stack.gateway.nextReload();
    stack.cf.demo.write((s) =>
      s.consumers.find((c: Parsed) => c.username === 'demo-reader').acls.push({ group: 'jobs:write' }),
    );
    expect(await reloaded).toEqual({ ok: true });
    expect((await post(DEMO.reader)).status).toBe(200);
    expect(stack.upstream.received.at(-1)?.headers['x-consumer-groups']).toBe('jobs:read, jobs:write');
  });

  test('an invalid file is refused with a log line, and the previous configuration keeps serving', async () => {
    const reloaded = stack.gateway.nextReload();
    stack.cf.writeRaw('_format_version: "3.0"\nservices: [\n');
    const result = await reloaded;
    expect(result.ok).toBe(false);
    expect(stack.gateway.rawLogs.some((l) => l.includes('configuration refused, still serving the previous one'))).toBe(
      true,
    );
    expect((await post(DEMO.reader)).status).toBe(200);

    const unset = stack.gateway.nextReload();
    stack.cf.writeRaw(`${'#'} partner: \${{ env "DECK_NOT_SET" }}\n_format_version: "3.0"\n`);
    const refused = await unset;
    expect(refused).toEqual({
      ok: false,
      error: expect.stringContaining("environment variable 'DECK_NOT_SET' present in state file but not set"),
    });
    expect((await post(DEMO.reader)).status).toBe(200);
  });

  test('reload() (what SIGHUP calls) applies a valid file; rate-limit counters survive it', async () => {
    stack.cf.write(); // kong.yaml valid again after the previous test
    stack.cf.demo.write((s) => {
      s.consumers.find((c: Parsed) => c.username === 'demo-reader').acls = [{ group: 'jobs:read' }];
    });
    expect(stack.gateway.reload()).toEqual({ ok: true });
    const before = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer2 } });
    expect(stack.gateway.reload()).toEqual({ ok: true });
    const after = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer2 } });
    const hourLeft = (res: { headers: Record<string, unknown> }) =>
      Number(/"hour";r=(\d+)/.exec(String(res.headers['ratelimit']))?.[1]);
    expect(hourLeft(after)).toBe(hourLeft(before) - 1);
    expect((await post(DEMO.reader)).status).toBe(403);
  });
});

describe('proxying', () => {
  const stack = gatewayOverStub();

  test('status, headers and body come back from the service; hop-by-hop headers do not pass either way', async () => {
    stack.upstream.respond = (_req, res) => {
      res.writeHead(405, {
        'Content-Type': 'application/json',
        Allow: 'GET, HEAD, POST',
        'X-Custom': 'kept',
        'Keep-Alive': 'timeout=1',
        Connection: 'X-Drop, keep-alive',
        'X-Drop': 'no',
      });
      res.end('{"error":"Method not allowed"}');
    };
    try {
      const res = await send(stack.gateway.url, {
        method: 'DELETE',
        path: '/api/v1/jobs/1',
        headers: {
          'X-API-Key': DEMO.writer,
          Connection: 'X-Hop',
          'X-Hop': 'secret',
          TE: 'gzip',
          'Keep-Alive': 'timeout=5',
          Proxy: 'http://evil',
        },
      });
      expect(res.status).toBe(405);
      expect(res.json).toEqual({ error: 'Method not allowed' });
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      expect(res.headers['x-custom']).toBe('kept');
      expect(res.headers['x-drop']).toBeUndefined();
      const got = stack.upstream.received.at(-1)!;
      expect(got.headers['x-hop']).toBeUndefined();
      expect(got.headers.te).toBeUndefined();
      expect(got.headers['keep-alive']).toBeUndefined();
      expect(got.headers.proxy).toBeUndefined();
      expect(res.headers['keep-alive']).toBeUndefined();
      expect(got.headers.host).toBe(`jobs-service:${stack.upstream.port}`);
      expect(got.headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(got.headers['x-kong-request-id']).toBe(res.headers['x-kong-request-id']);
    } finally {
      stack.upstream.respond = (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"ok":true}');
      };
    }
  });

  test('X-Request-ID: the request id (X-Kong-Request-Id) when absent, forwarded; a client id is kept; both echoed, on errors too', async () => {
    const generated = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
    const id = generated.headers['x-request-id'] as string;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(id).toBe(generated.headers['x-kong-request-id']);
    expect(stack.upstream.received.at(-1)?.headers['x-request-id']).toBe(id);

    const mine = await send(stack.gateway.url, {
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.reader, 'X-Request-ID': 'partner-trace-1' },
    });
    expect(mine.headers['x-request-id']).toBe('partner-trace-1');
    expect(stack.upstream.received.at(-1)?.headers['x-request-id']).toBe('partner-trace-1');

    const rejected = await send(stack.gateway.url, {
      path: '/api/v1/jobs',
      headers: { 'X-Request-ID': 'partner-trace-2' },
    });
    expect(rejected.status).toBe(401);
    expect(rejected.headers['x-request-id']).toBe('partner-trace-2');
  });

  test('connections to the service are kept alive and reused', async () => {
    const before = stack.upstream.received.length;
    for (let i = 0; i < 5; i++)
      await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
    const sockets = new Set(stack.upstream.received.slice(before).map((r) => r.socketId));
    expect(sockets.size).toBe(1);
  });

  test('a large response body streams through intact', async () => {
    const big = JSON.stringify({ data: 'z'.repeat(2_000_000) });
    stack.upstream.respond = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(big);
    };
    try {
      const res = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
      expect(res.text).toBe(big);
    } finally {
      stack.upstream.respond = (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"ok":true}');
      };
    }
  });
});

test("service unreachable: 502 with Kong's message in the error template", async () => {
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const cf = configFile(port);
  const gateway = await startGateway(cf.paths, gatewayEnv('x'));
  try {
    const res = await send(gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
    expect(res.status).toBe(502);
    expect(res.json).toEqual({
      error: 'An invalid response was received from the upstream server',
      request_id: res.headers['x-kong-request-id'],
    });
  } finally {
    await gateway.close();
    cf.remove();
  }
});

test("hosts file and proxy_listen parsing follow Kong's formats", () => {
  const hosts = parseHostsFile(
    '# comment\n127.0.0.1 localhost jobs-service # inline\n::1 localhost ip6-localhost\n10.0.0.2 other\n',
  );
  expect(hosts.get('jobs-service')).toBe('127.0.0.1');
  expect(hosts.get('localhost')).toBe('127.0.0.1');
  expect(hosts.get('ip6-localhost')).toBe('::1');
  expect(hosts.get('missing')).toBeUndefined();
  expect(parseProxyListen('0.0.0.0:8000 reuseport backlog=16384, 0.0.0.0:8443 http2 ssl')).toEqual({
    host: '0.0.0.0',
    port: 8000,
  });
  expect(parseProxyListen(undefined)).toBeNull();
});
