import net from 'node:net';
import { ConfigError, loadConfig } from '../service/config';
import { runService } from '../service/server';
import { call } from './helpers/http';
import { freshDatabase } from './helpers/database';
import { json, reader, writer } from './helpers/consumers';
import { lockTable } from './faults/support';

describe('configuration', () => {
  test('defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: 'mysql://root@127.0.0.1:3306/jobs',
      dbPoolSize: 10,
      logLevel: 'info',
      seedDemoData: false,
      dbConnectTimeoutMs: 2000,
      dbQueryTimeoutMs: 5000,
      readyTimeoutMs: 800,
      shutdownGraceMs: 10000,
      headersTimeoutMs: 10000,
      bodyReadTimeoutMs: 10000,
      clientErrorLingerMs: 2000,
      webhooks: {
        previousSecretsKeys: [],
        policy: { allowHttp: false, allowed: [] },
        retry: { firstMs: 5000, maxMs: 36_000_000, giveUpAfterMs: 259_200_000 },
        leaseMs: 30_000,
        pollMs: 200,
        timeoutMs: 10_000,
        subscriptionLimit: 5,
      },
    });
  });

  test('every bad variable is named in one error', () => {
    const load = () =>
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'postgres://x/y', GATEWAY_SECRET: 'short', LOG_LEVEL: 'loud' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(
      /PORT must be a port number \(0-65535\); DATABASE_URL must look like mysql:\/\/.*; GATEWAY_SECRET must be at least 16 characters; .*LOG_LEVEL/,
    );
  });
});

describe('runService', () => {
  test('an unreachable database is one clear line', async () => {
    await expect(
      runService({ databaseUrl: 'mysql://root@127.0.0.1:9/jobs', port: 0, logLevel: 'silent' }),
    ).rejects.toThrow(
      'Cannot reach MySQL at 127.0.0.1:9/jobs (ECONNREFUSED). Is it running? Set DATABASE_URL to point elsewhere.',
    );
  });

  test('creates and migrates the database, seeds an empty table, serves, and drains on stop', async () => {
    const database = await freshDatabase('startup');
    await database.query('drop database ' + database.name);
    await database.close();

    const service = await runService({ databaseUrl: database.url, port: 0, logLevel: 'silent', seedDemoData: true });
    const listed = await call(`${service.url}/api/v1/jobs?status=active,open,paused,closed&limit=1`);
    expect(listed.status).toBe(200);
    expect(listed.body.meta.total).toBeGreaterThanOrEqual(40);

    // A request whose body is still arriving when stop() is called is finished, not dropped.
    const { port } = new URL(service.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = JSON.stringify({ title: 'In flight', department: 'Ops', type: 'contract', description: 'x' });
    const head = Object.entries({
      ...writer,
      ...json,
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`POST /api/v1/jobs HTTP/1.1\r\nHost: localhost\r\n${head}\r\n\r\n${body.slice(0, 10)}`);
    let response = '';
    socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));

    const stopped = service.stop();
    socket.write(body.slice(10));
    await closed;
    await stopped;
    expect(response).toMatch(/^HTTP\/1\.1 201 Created/);
    // Nothing listens any more.
    await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
  });

  test('a port already taken is one clear line', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    const database = await freshDatabase('startup_port_taken');
    try {
      await expect(
        runService({ databaseUrl: database.url, host: '127.0.0.1', port, logLevel: 'silent' }),
      ).rejects.toThrow(`Cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      await database.close();
    }
  });

  test('the pool gets its limits from the configuration: DB_QUERY_TIMEOUT_MS ends a query stuck behind a lock', async () => {
    const database = await freshDatabase('startup_query_timeout');
    const service = await runService({ databaseUrl: database.url, port: 0, logLevel: 'silent', dbQueryTimeoutMs: 300 });
    const lock = await lockTable(database.name, 'jobs');
    try {
      const started = Date.now();
      const res = await call(`${service.url}/api/v1/jobs/0190f5d8-0000-7000-8000-000000000000`, { headers: reader });
      expect(res.status).toBe(503);
      // 300 ms, plus the client's one-second margin on a silent link; the default would be 5 s.
      expect(Date.now() - started).toBeLessThan(2500);
    } finally {
      await lock.release();
      await service.stop();
      await database.close();
    }
  });
});
