/**
 * The gateway's own points end to end, real service and MariaDB behind each gateway:
 * - every method on a jobs path reaches the service's 405 + Allow through the methods-less
 *   jobs-other-methods route (after the key check); TRACE is refused by nginx itself;
 * - one upstream connection shared by a writer with a draft and a reader sending chunked GETs with
 *   bodies: nobody ever receives someone else's answer (the draft leak of issue 7);
 * - failed authentication attempts are limited per client IP (auth-guard).
 */
import net from 'node:net';
// The raw client: most answers here are the gateway's own (405 for any method, 429), outside the
// operations docs/openapi.json describes.
import { send } from '../local-gateway/support';
import { DEMO, gatewayKinds, startStackOn, type Stack } from './support';

describe.each(gatewayKinds())('through the %s', (kind) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'e2e_gateway', { gateway: { upstreamConnections: 1 } });
  });
  afterAll(() => stack.close());

  describe('methods on the jobs paths', () => {
    test('OPTIONS with a key reaches the service (its router answers with Allow), without a key it is 401', async () => {
      const before = stack.service.received.length;
      const res = await send(stack.url, {
        method: 'OPTIONS',
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.reader },
      });
      expect(stack.service.received.slice(before).map((r) => r.method)).toEqual(['OPTIONS']);
      expect(res.headers.allow).toMatch(/GET/);
      expect((await send(stack.url, { method: 'OPTIONS', path: '/api/v1/jobs' })).status).toBe(401);
    });

    test.each(['PROPFIND', 'PUT', 'PATCH', 'DELETE'])("%s with a key: the service's 405 with Allow", async (method) => {
      for (const path of ['/api/v1/jobs', '/api/v1/jobs/3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f']) {
        const res = await send(stack.url, { method, path, headers: { 'X-API-Key': DEMO.reader } });
        expect([method, path, res.status]).toEqual([method, path, 405]);
        expect(res.headers.allow).toMatch(/GET/);
        expect(typeof res.json.error).toBe('string');
      }
      expect((await send(stack.url, { method, path: '/api/v1/jobs' })).status).toBe(401);
    });

    test('TRACE: 405 from the gateway itself (nginx refuses it before Kong runs); the service never sees it', async () => {
      const before = stack.service.received.length;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(stack.port, '127.0.0.1', () =>
          socket.write(`TRACE /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-API-Key: ${DEMO.reader}\r\n\r\n`),
        );
        let data = '';
        socket.on('data', (d) => (data += String(d)));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      // The status line's reason phrase is not part of the contract (nginx says "Not Allowed").
      expect(answer).toMatch(/^HTTP\/1\.1 405 /);
      expect(answer).toMatch(/\r\nConnection: close\r\n/);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error).toBe('Method not allowed');
      expect(stack.service.received.length).toBe(before);
    });
  });

  test("no draft leak: a writer's draft reads and a reader's chunked GETs with bodies share one upstream connection, every answer reaches its own client", async () => {
    const created = await send(stack.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        title: 'Secret draft',
        department: 'Engineering',
        type: 'contract',
        description: 'Not for readers.',
      }),
    });
    expect(created.status).toBe(201);
    const draftId = created.json.data.id as string;

    const rounds = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const [reader, writer] = await Promise.all([
          send(stack.url, {
            path: '/api/v1/jobs',
            query: { limit: '1' },
            headers: { 'X-API-Key': DEMO.reader, 'Transfer-Encoding': 'chunked' },
            body: 'hello',
            chunked: true,
          }),
          send(stack.url, { path: `/api/v1/jobs/${draftId}`, headers: { 'X-API-Key': DEMO.writer } }),
        ]);
        return { reader, writer };
      }),
    );
    for (const { reader, writer } of rounds) {
      expect(reader.status).toBe(200);
      expect(reader.text).not.toContain('Secret draft');
      expect(Array.isArray(reader.json.data)).toBe(true);
      expect([writer.status, writer.json.data.title]).toEqual([200, 'Secret draft']);
    }
    const byReader = await send(stack.url, { path: `/api/v1/jobs/${draftId}`, headers: { 'X-API-Key': DEMO.reader } });
    expect(byReader.status).toBe(404);
  });

  test('auth-guard: after 10 failed attempts from one address, 429 for guesses but 200 for a valid key; another address is unaffected', async () => {
    const second = new Date().getUTCSeconds();
    if (second >= 50) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const guesser = '127.3.0.1';
    for (let i = 0; i < 10; i++) {
      expect(
        (
          await send(stack.url, {
            path: '/api/v1/jobs',
            headers: { 'X-API-Key': `demo-guess-${i}` },
            localAddress: guesser,
          })
        ).status,
      ).toBe(401);
    }
    const blocked = await send(stack.url, {
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': 'demo-guess-10' },
      localAddress: guesser,
    });
    expect(blocked.status).toBe(429);
    expect(blocked.json).toEqual({ error: 'Too many failed authentication attempts' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(
      (await send(stack.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader }, localAddress: guesser }))
        .status,
    ).toBe(200);
    expect(
      (
        await send(stack.url, {
          path: '/api/v1/jobs',
          headers: { 'X-API-Key': DEMO.reader },
          localAddress: '127.3.0.2',
        })
      ).status,
    ).toBe(200);
  });
});
