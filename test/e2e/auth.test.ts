/**
 * decisions.md "Authentication" and "Gateway to service", end to end: client -> local gateway
 * (kong.yaml) -> real service -> real MariaDB, with kong.yaml's demo keys.
 */
import { DEMO, SECRET, everythingTheServiceSaw, send, gatewayKinds, startStackOn, type Stack } from './support';
import type { Parsed } from '../helpers/parsed';

describe.each(gatewayKinds())('through the %s', (kind) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'e2e_auth');
  });
  afterAll(() => stack.close());

  const get = (
    headers: Record<string, string | string[]> = {},
    query?: Record<string, string | string[]>,
    path = '/api/v1/jobs',
  ) => send(stack.url, { path, headers, query });
  const create = (
    key: string,
    body: object = {
      title: 'Platform Engineer',
      department: 'Engineering',
      type: 'full-time',
      description: 'Keep the lights on.',
    },
  ) =>
    send(stack.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  describe('the four answers, in order', () => {
    test('no key: 401 telling the caller to use X-API-Key', async () => {
      for (const res of [await get(), await get({ 'X-API-Key': '' }), await get({}, { api_key: '' })]) {
        expect(res.status).toBe(401);
        expect(res.json).toEqual({ error: 'Missing API key. Pass your key in the X-API-Key header.' });
        expect(res.headers['www-authenticate']).toBe('Key realm="kong"');
      }
    });

    test('unknown or duplicated key: 401 Invalid API key', async () => {
      for (const res of [
        await get({ 'X-API-Key': 'demo-not-a-key' }),
        await get({}, { api_key: 'demo-not-a-key' }),
        await get({ 'X-API-Key': [DEMO.reader, DEMO.reader] }),
        await get({}, { api_key: [DEMO.reader, DEMO.writer] }),
      ]) {
        expect(res.status).toBe(401);
        expect(res.json).toEqual({ error: 'Invalid API key' });
      }
    });

    test('disabled key: 403 on every endpoint, before any scope check', async () => {
      for (const res of [await get({ 'X-API-Key': DEMO.disabled }), await create(DEMO.disabled)]) {
        expect(res.status).toBe(403);
        expect(res.json).toEqual({ error: 'API key disabled' });
      }
    });

    test('read-only key on POST: 403 naming the missing scope; nothing is stored', async () => {
      const before = (await get({ 'X-API-Key': DEMO.writer }, { status: 'active,open,paused,closed' })).json.meta.total;
      const res = await create(DEMO.reader);
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ error: 'Missing scope jobs:write', requiredScope: 'jobs:write' });
      expect((await get({ 'X-API-Key': DEMO.writer }, { status: 'active,open,paused,closed' })).json.meta.total).toBe(
        before,
      );
    });

    test('a key in the header or in ?api_key= reads; when both are sent the header wins', async () => {
      expect((await get({ 'X-API-Key': DEMO.reader })).status).toBe(200);
      expect((await get({}, { api_key: DEMO.reader })).status).toBe(200);
      const headerWins = await send(stack.url, {
        method: 'POST',
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.reader, 'Content-Type': 'application/json' },
        query: { api_key: DEMO.writer },
        body: '{}',
      });
      expect(headerWins.status).toBe(403);
    });
  });

  describe('what the service receives', () => {
    test('keys never reach the service, in any header or query spelling, and are never logged', async () => {
      await get({ 'X-API-Key': DEMO.reader });
      await get({}, { api_key: DEMO.writer, status: 'open' });
      await get({ 'Api-Key': DEMO.writer2 });
      await get({ api_key: DEMO.reader }, { 'X-API-Key': DEMO.writer });
      await get({ 'X-API-Key': 'demo-leaky-unknown-key' });
      await create(DEMO.writer);
      const seen = everythingTheServiceSaw(stack);
      for (const key of [...Object.values(DEMO), 'demo-leaky-unknown-key']) expect(seen).not.toContain(key);
      for (const r of stack.service.received) {
        expect(r.headers['x-api-key']).toBeUndefined();
        expect(r.headers['api-key']).toBeUndefined();
        expect(r.url).not.toContain('api_key');
      }
      const openOnly = stack.service.received.find((r) => r.url.includes('status=open'));
      expect(openOnly?.url).toBe('/api/v1/jobs?status=open');
    });

    test("spoofed identity headers are replaced by the key's identity; the draft belongs to the key's consumer", async () => {
      const spoof = {
        'X-Consumer-ID': '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a03',
        'X-Consumer-Username': 'demo-writer-2',
        'X-Consumer-Groups': 'jobs:read, jobs:write',
        'X-Gateway-Secret': 'forged',
        'X-Anonymous-Consumer': 'true',
      };
      const asReader = await send(stack.url, {
        method: 'POST',
        path: '/api/v1/jobs',
        headers: { ...spoof, 'X-API-Key': DEMO.reader, 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(asReader.status).toBe(403);

      const created = await send(stack.url, {
        method: 'POST',
        path: '/api/v1/jobs',
        headers: { ...spoof, 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: 'Spoof check', department: 'Engineering', type: 'contract', description: 'd' }),
      });
      expect(created.status).toBe(201);
      const received = stack.service.received.at(-1)!;
      expect(received.headers['x-consumer-id']).toBe('6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a02');
      expect(received.headers['x-consumer-username']).toBe('demo-writer');
      expect(received.headers['x-gateway-secret']).toBe(SECRET);
      expect(received.headers['x-anonymous-consumer']).toBeUndefined();
      const id = created.json.data.id as string;
      expect((await get({ 'X-API-Key': DEMO.writer }, undefined, `/api/v1/jobs/${id}`)).status).toBe(200);
      expect((await get({ 'X-API-Key': DEMO.writer2 }, undefined, `/api/v1/jobs/${id}`)).status).toBe(404);
    });

    test('without the gateway the service refuses the request (the secret is what it trusts)', async () => {
      const direct = await send(stack.service.url, {
        path: '/api/v1/jobs',
        headers: {
          'X-Consumer-ID': '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a02',
          'X-Consumer-Username': 'demo-writer',
          'X-Consumer-Groups': 'jobs:read',
        },
      });
      expect(direct.status).toBe(401);
    });
  });

  describe('access levels change in demo.yaml, keys stay the same', () => {
    const consumer = (s: Parsed, name: string) => s.consumers.find((c: Parsed) => c.username === name);

    test('granting jobs:write to the reader lets the same key create; revoking takes it away again', async () => {
      await stack.changeDemo((s) => consumer(s, 'demo-reader').acls.push({ group: 'jobs:write' }));
      const res = await create(DEMO.reader);
      expect(res.status).toBe(201);
      expect(res.json.data.status).toBe('draft');

      await stack.changeDemo((s) => (consumer(s, 'demo-reader').acls = [{ group: 'jobs:read' }]));
      expect((await create(DEMO.reader)).status).toBe(403);
    });

    test('disabling a key (ACL group disabled) answers 403 at once; removing the group restores it', async () => {
      await stack.changeDemo((s) => consumer(s, 'demo-writer-2').acls.push({ group: 'disabled' }));
      const res = await get({ 'X-API-Key': DEMO.writer2 });
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ error: 'API key disabled' });

      await stack.changeDemo(
        (s) => (consumer(s, 'demo-writer-2').acls = [{ group: 'jobs:read' }, { group: 'jobs:write' }]),
      );
      expect((await get({ 'X-API-Key': DEMO.writer2 })).status).toBe(200);
    });
  });
});
