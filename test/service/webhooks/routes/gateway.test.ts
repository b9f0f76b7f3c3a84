/**
 * The webhook routes through the local gateway and real Kong (when found), with kong.yaml's
 * routes and the demo keys: scope and key checks, BOLA, the size limit and every error as JSON.
 */
import { randomBytes } from 'node:crypto';
import type { WebhookSettings } from '../../../../service/webhooks/settings';
import { DEMO, gatewayKinds, send, startStackOn, type Stack } from '../../../e2e/support';

const NO_GROUPS = 'demo-no-groups-4e9b2d71';
const webhooks: WebhookSettings = {
  secretsKey: randomBytes(32),
  policy: { allowHttp: false, allowed: [] },
  retry: { firstMs: 5000, maxMs: 36_000_000, giveUpAfterMs: 259_200_000 },
  leaseMs: 30_000,
  pollMs: 200,
  timeoutMs: 10_000,
  subscriptionLimit: 5,
};
const URL_BODY = JSON.stringify({ url: 'https://93.184.215.14/hooks' });

describe.each(gatewayKinds())('through the %s', (kind) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'webhooks_gw', { seed: false, webhooks });
  });
  afterAll(() => stack.close());

  const call = (method: string, path: string, key?: string, body?: string) =>
    send(stack.url, { method, path, headers: { ...(key ? { 'X-API-Key': key } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) }, body });
  const stored = async () => Number((await stack.service.database.query<Array<{ n: number }>>('select count(*) as n from webhook_subscriptions'))[0]!.n);

  test('a read key subscribes, sees its own and only its own; another key gets 404 for it on every route', async () => {
    const created = await call('POST', '/api/v1/webhooks', DEMO.reader, URL_BODY);
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    expect(created.json.data.secret).toMatch(/^whsec_/);
    expect((await call('GET', `/api/v1/webhooks/${id}`, DEMO.reader)).status).toBe(200);
    expect((await call('GET', '/api/v1/webhooks', DEMO.reader)).json.data.map((one: { id: string }) => one.id)).toEqual([id]);
    expect((await call('GET', '/api/v1/webhooks', DEMO.writer2)).json).toEqual({ data: [] });
    for (const [method, path, body] of [
      ['GET', `/api/v1/webhooks/${id}`, undefined],
      ['DELETE', `/api/v1/webhooks/${id}`, undefined],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`, undefined],
      ['POST', `/api/v1/webhooks/${id}/enable`, undefined],
      ['POST', `/api/v1/webhooks/${id}/replay`, JSON.stringify({ position: created.json.data.position })],
    ] as const) {
      const res = await call(method, path, DEMO.writer2, body);
      expect([method, path, res.status, res.json]).toEqual([method, path, 404, { error: 'Webhook not found' }]);
    }
    expect((await call('GET', `/api/v1/webhooks/${id}`, DEMO.reader)).json.data.status).toBe('active');
    expect((await call('DELETE', `/api/v1/webhooks/${id}`, DEMO.reader)).status).toBe(204);
  });

  test('the gateway\'s key and scope answers, before anything is stored', async () => {
    const noKey = await call('POST', '/api/v1/webhooks', undefined, URL_BODY);
    expect([noKey.status, noKey.json]).toEqual([401, { error: 'Missing API key. Pass your key in the X-API-Key header.' }]);
    const unknown = await call('GET', '/api/v1/webhooks', 'demo-not-a-key');
    expect([unknown.status, unknown.json]).toEqual([401, { error: 'Invalid API key' }]);
    const disabled = await call('POST', '/api/v1/webhooks', DEMO.disabled, URL_BODY);
    expect([disabled.status, disabled.json]).toEqual([403, { error: 'API key disabled' }]);
    for (const [method, path] of [['POST', '/api/v1/webhooks'], ['GET', '/api/v1/webhooks'], ['DELETE', '/api/v1/webhooks/x']] as const) {
      const res = await call(method, path, NO_GROUPS, method === 'POST' ? URL_BODY : undefined);
      expect([res.status, res.json]).toEqual([403, { error: 'Missing scope jobs:read', requiredScope: 'jobs:read' }]);
    }
    expect(await stored()).toBe(0);
  });

  test('refusals are JSON with the right status, through the gateway: SSRF, size, method, unknown sub-path', async () => {
    const loopback = await call('POST', '/api/v1/webhooks', DEMO.reader, JSON.stringify({ url: 'https://127.0.0.1/hooks' }));
    expect([loopback.status, loopback.json]).toEqual([400, { error: 'url must reach a public address: 127.0.0.1 is a loopback address' }]);
    const huge = await call('POST', '/api/v1/webhooks', DEMO.reader, JSON.stringify({ url: 'https://93.184.215.14/hooks', description: 'x'.repeat(20 * 1024) }));
    expect(huge.status).toBe(413);
    expect(huge.json.error).toBe('Request size limit exceeded');
    const put = await call('PUT', '/api/v1/webhooks', DEMO.reader, '{}');
    expect([put.status, put.json.error, put.headers.allow]).toEqual([405, 'Method not allowed', 'HEAD, GET, POST']);
    const unknownSub = await call('POST', '/api/v1/webhooks/x/unsubscribe', DEMO.reader, '{}');
    expect(unknownSub.status).toBe(404);
    expect(typeof unknownSub.json.error).toBe('string');
    expect(await stored()).toBe(0);
  });
});
