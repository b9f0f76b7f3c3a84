/**
 * The webhook routes through the local gateway and real Kong (when found), with kong.yaml's
 * routes and the demo keys: scope and key checks, BOLA, the size limit and every error as JSON;
 * the attempts a partner reads after testing receivers that fail and hang.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookSettings } from '../../../../service/config';
import { DEMO, gatewayKinds, send, startStackOn, type Stack } from '../../../e2e/support';

const NO_GROUPS = 'demo-no-groups-4e9b2d71';
const RECEIVER_HOST = '127.0.0.5';
const NOT_PUBLIC = { error: 'url must resolve only to public addresses' };
const webhooks: WebhookSettings = {
  secretsKey: randomBytes(32),
  // The test receivers listen on 127.0.0.5, allowed alone: localhost and every other address stay refused.
  policy: { allowHttp: true, allowed: [`${RECEIVER_HOST}/32`] },
  retry: { firstMs: 5000, maxMs: 36_000_000, giveUpAfterMs: 259_200_000 },
  leaseMs: 30_000,
  pollMs: 200,
  timeoutMs: 1000,
  subscriptionLimit: 5,
};
const URL_BODY = JSON.stringify({ url: 'https://93.184.215.14/hooks' });

/** A receiver answering `status` to every POST, or never. */
async function receiver(status: number | 'hang'): Promise<{ url: string; close(): void }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => status !== 'hang' && res.writeHead(status).end('receiver body'));
  });
  await new Promise<void>((resolve) => server.listen(0, RECEIVER_HOST, resolve));
  return {
    url: `http://${RECEIVER_HOST}:${(server.address() as AddressInfo).port}/hooks`,
    close: () => (server.close(), server.closeAllConnections()),
  };
}

describe.each(gatewayKinds())('through the %s', (kind) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'webhooks_gw', { seed: false, webhooks });
  });
  afterAll(() => stack.close());

  const call = (method: string, path: string, key?: string, body?: string) =>
    send(stack.url, {
      method,
      path,
      headers: {
        ...(key ? { 'X-API-Key': key } : {}),
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      body,
    });
  const stored = async () =>
    Number(
      (await stack.service.database.query<Array<{ n: number }>>('select count(*) as n from webhook_subscriptions'))[0]!
        .n,
    );

  test('a read key subscribes, sees its own and only its own; another key gets 404 for it on every route', async () => {
    const created = await call('POST', '/api/v1/webhooks', DEMO.reader, URL_BODY);
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    expect(created.json.data.secret).toMatch(/^whsec_/);
    expect((await call('GET', `/api/v1/webhooks/${id}`, DEMO.reader)).status).toBe(200);
    expect((await call('GET', '/api/v1/webhooks', DEMO.reader)).json.data.map((one: { id: string }) => one.id)).toEqual(
      [id],
    );
    expect((await call('GET', '/api/v1/webhooks', DEMO.writer2)).json).toEqual({ data: [] });
    for (const [method, path, body] of [
      ['GET', `/api/v1/webhooks/${id}`, undefined],
      ['DELETE', `/api/v1/webhooks/${id}`, undefined],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`, undefined],
      ['POST', `/api/v1/webhooks/${id}/enable`, undefined],
      ['POST', `/api/v1/webhooks/${id}/replay`, JSON.stringify({ position: created.json.data.position })],
      ['PATCH', `/api/v1/webhooks/${id}`, JSON.stringify({ description: 'theirs' })],
      ['GET', `/api/v1/webhooks/${id}/attempts`, undefined],
      ['POST', `/api/v1/webhooks/${id}/test`, undefined],
    ] as const) {
      const res = await call(method, path, DEMO.writer2, body);
      expect([method, path, res.status, res.json]).toEqual([method, path, 404, { error: 'Webhook not found' }]);
    }
    expect((await call('GET', `/api/v1/webhooks/${id}`, DEMO.reader)).json.data.status).toBe('active');
    expect((await call('DELETE', `/api/v1/webhooks/${id}`, DEMO.reader)).status).toBe(204);
  });

  test('every webhook operation and its HEAD answers as the document says, headers included (send() checks each)', async () => {
    const created = await call('POST', '/api/v1/webhooks', DEMO.reader, URL_BODY);
    const id = created.json.data.id as string;
    expect((await call('POST', `/api/v1/webhooks/${id}/rotate-secret`, DEMO.reader)).status).toBe(200);
    expect(
      (
        await call(
          'POST',
          `/api/v1/webhooks/${id}/replay`,
          DEMO.reader,
          JSON.stringify({ position: created.json.data.position }),
        )
      ).status,
    ).toBe(200);
    expect((await call('POST', `/api/v1/webhooks/${id}/enable`, DEMO.reader)).status).toBe(200);
    for (const path of ['/api/v1/webhooks', `/api/v1/webhooks/${id}`, `/api/v1/webhooks/${id}/attempts`]) {
      const head = await call('HEAD', path, DEMO.reader);
      expect([path, head.status, head.headers['ratelimit-limit']]).toEqual([path, 200, expect.stringMatching(/^\d+$/)]);
    }
    expect((await call('DELETE', `/api/v1/webhooks/${id}`, DEMO.reader)).status).toBe(204);
  });

  test("the gateway's key and scope answers, before anything is stored", async () => {
    const noKey = await call('POST', '/api/v1/webhooks', undefined, URL_BODY);
    expect([noKey.status, noKey.json]).toEqual([
      401,
      { error: 'Missing API key. Pass your key in the X-API-Key header.' },
    ]);
    const unknown = await call('GET', '/api/v1/webhooks', 'demo-not-a-key');
    expect([unknown.status, unknown.json]).toEqual([401, { error: 'Invalid API key' }]);
    const disabled = await call('POST', '/api/v1/webhooks', DEMO.disabled, URL_BODY);
    expect([disabled.status, disabled.json]).toEqual([403, { error: 'API key disabled' }]);
    for (const [method, path] of [
      ['POST', '/api/v1/webhooks'],
      ['GET', '/api/v1/webhooks'],
      ['DELETE', '/api/v1/webhooks/x'],
      ['PATCH', '/api/v1/webhooks/x'],
      ['GET', '/api/v1/webhooks/x/attempts'],
      ['POST', '/api/v1/webhooks/x/test'],
    ] as const) {
      const res = await call(method, path, NO_GROUPS, method === 'POST' || method === 'PATCH' ? URL_BODY : undefined);
      expect([res.status, res.json]).toEqual([403, { error: 'Missing scope jobs:read', requiredScope: 'jobs:read' }]);
    }
    expect(await stored()).toBe(0);
  });

  test('refusals are JSON with the right status, through the gateway: SSRF, size, method, unknown sub-path', async () => {
    // An internal name, a private literal and a name that does not resolve: one answer, naming nothing of ours.
    for (const url of ['http://localhost/hooks', 'https://10.0.0.7/hooks', 'https://no-such-host.invalid/hooks']) {
      const refused = await call('POST', '/api/v1/webhooks', DEMO.reader, JSON.stringify({ url }));
      expect([url, refused.status, refused.json]).toEqual([url, 400, NOT_PUBLIC]);
    }
    const huge = await call(
      'POST',
      '/api/v1/webhooks',
      DEMO.reader,
      JSON.stringify({ url: 'https://93.184.215.14/hooks', description: 'x'.repeat(20 * 1024) }),
    );
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

describe.each(gatewayKinds())('steering through the %s', (kind) => {
  let stack: Stack;
  let failing: Awaited<ReturnType<typeof receiver>>;
  let hanging: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'webhooks_gw_steer', { seed: false, webhooks });
    [failing, hanging] = await Promise.all([receiver(500), receiver('hang')]);
  });
  afterAll(async () => {
    failing?.close();
    hanging?.close();
    await stack.close();
  });

  const call = (method: string, path: string, key: string, body?: string) =>
    send(stack.url, {
      method,
      path,
      headers: { 'X-API-Key': key, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body,
    });

  test('a partner tests a receiver that answers 500 and one that hangs, and reads both in its attempts; PATCH keeps the position', async () => {
    const created = await call(
      'POST',
      '/api/v1/webhooks',
      DEMO.reader,
      JSON.stringify({ url: failing.url, eventTypes: ['job.updated'] }),
    );
    expect([created.status, created.json.data.eventTypes]).toEqual([201, ['job.updated']]);
    const { id, position } = created.json.data as { id: string; position: string };
    const five = await call('POST', `/api/v1/webhooks/${id}/test`, DEMO.reader);
    expect([five.status, five.json.data.delivered, five.json.data.status, five.json.data.error]).toEqual([
      200,
      false,
      500,
      'HTTP 500',
    ]);

    const moved = await call(
      'PATCH',
      `/api/v1/webhooks/${id}`,
      DEMO.reader,
      JSON.stringify({ url: hanging.url, eventTypes: null }),
    );
    expect([moved.status, moved.json.data.url, moved.json.data.eventTypes, moved.json.data.position]).toEqual([
      200,
      hanging.url,
      null,
      position,
    ]);
    const hung = await call('POST', `/api/v1/webhooks/${id}/test`, DEMO.reader);
    expect([hung.status, hung.json.data.delivered, hung.json.data.status]).toEqual([200, false, null]);

    const attempts = await call('GET', `/api/v1/webhooks/${id}/attempts`, DEMO.reader);
    expect(attempts.status).toBe(200);
    expect(
      attempts.json.data.map((a: { status: number | null; error: string; position: string | null }) => [
        a.status,
        a.error,
        a.position,
      ]),
    ).toEqual([
      [null, hung.json.data.error, null],
      [500, 'HTTP 500', null],
    ]);
    expect(JSON.stringify(attempts.json)).not.toContain('receiver body');
  });

  test('bad input on the new routes is a JSON 400 and changes nothing', async () => {
    const created = await call(
      'POST',
      '/api/v1/webhooks',
      DEMO.reader,
      JSON.stringify({ url: failing.url, description: 'kept' }),
    );
    const { id } = created.json.data as { id: string };
    const unknownType = await call(
      'POST',
      '/api/v1/webhooks',
      DEMO.reader,
      JSON.stringify({ url: failing.url, eventTypes: ['job.created'] }),
    );
    expect([unknownType.status, unknownType.json]).toEqual([
      400,
      {
        error: 'Validation failed',
        details: [{ field: 'eventTypes.0', message: 'eventTypes may hold only job.updated, job.removed' }],
      },
    ]);
    const empty = await call('PATCH', `/api/v1/webhooks/${id}`, DEMO.reader, '{}');
    expect([empty.status, empty.json]).toEqual([400, { error: 'Send at least one of url, description, eventTypes' }]);
    const refused = await call(
      'PATCH',
      `/api/v1/webhooks/${id}`,
      DEMO.reader,
      JSON.stringify({ url: 'https://10.0.0.7/hooks' }),
    );
    expect([refused.status, refused.json]).toEqual([400, NOT_PUBLIC]);
    expect(
      (
        await call(
          'POST',
          `/api/v1/webhooks/${id}/rotate-secret`,
          DEMO.reader,
          JSON.stringify({ expirePrevious: 'now' }),
        )
      ).status,
    ).toBe(400);
    await stack.service.database.query("update webhook_subscriptions set status = 'disabled'");
    const disabled = await call('POST', `/api/v1/webhooks/${id}/test`, DEMO.reader);
    expect([disabled.status, disabled.json]).toEqual([
      400,
      { error: 'status is disabled: enable the subscription (POST /api/v1/webhooks/{id}/enable) before testing it' },
    ]);
    const seen = await call('GET', `/api/v1/webhooks/${id}`, DEMO.reader);
    expect(seen.json.data).toMatchObject({ url: failing.url, description: 'kept', eventTypes: null });
    expect((await call('GET', `/api/v1/webhooks/${id}/attempts`, DEMO.reader)).json).toEqual({ data: [] });
  });
});
