/**
 * A partner steering its own subscriptions on the service (identity headers as the gateway sends
 * them): the attempts list fed by real test sends to receivers that fail and hang, the test event
 * itself, PATCH with event types, and rotation across three secrets verified with the reference
 * library. Every answer is checked against docs/openapi.json (call()); every refusal changes nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { testTarget } from '../../../../db/webhooks/subscriptions';
import { createApp } from '../../../../service/app';
import { createLogger } from '../../../../service/logger';
import { decryptSecret } from '../../../../service/webhooks/secrets';
import type { WebhookSettings } from '../../../../service/webhooks/settings';
import { signer } from '../../../../service/webhooks/signing';
import { json, reader, writer } from '../../../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../../../helpers/database';
import { call, expectJsonError, serve, type Served } from '../../../helpers/http';
import { memoryLog } from '../../../helpers/service';
import type { Parsed } from '../../../helpers/parsed';

const key = randomBytes(32);
const TIMEOUT_MS = 600;
const settings: WebhookSettings = {
  secretsKey: key,
  // The receivers below listen on loopback, allowed by name as npm start allows it; the rules still run.
  policy: { allowHttp: true, allowed: ['127.0.0.1/32'] },
  retry: { firstMs: 5000, maxMs: 36_000_000, giveUpAfterMs: 259_200_000 },
  leaseMs: 30_000,
  pollMs: 200,
  timeoutMs: TIMEOUT_MS,
  subscriptionLimit: 5,
};
const NOT_PUBLIC = 'url must resolve only to public addresses';
const ANSWER_BODY = 'the-receivers-own-answer-body';

interface Received {
  headers: Record<string, string>;
  body: string;
}
interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A receiver on loopback answering every POST with `status` (and a body of its own), or never ('hang'). */
async function receiver(answer: number | 'hang'): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      if (answer !== 'hang') res.writeHead(answer, { 'Content-Type': 'text/plain' }).end(ANSWER_BODY);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let database: TestDatabase;
let served: Served;
let ok: Receiver;
let failing: Receiver;
let hanging: Receiver;

beforeAll(async () => {
  database = await freshDatabase('webhook_steering');
  served = await serve(
    createApp({
      db: database.db,
      config: {},
      logger: createLogger('info', memoryLog([])),
      webhooks: settings,
    }).callback(),
  );
  [ok, failing, hanging] = await Promise.all([receiver(204), receiver(500), receiver('hang')]);
});

afterAll(async () => {
  await Promise.all([ok, failing, hanging].map((one) => one?.close()));
  await served.close();
  await database.close();
});

beforeEach(async () => {
  await database.query('delete from webhook_subscriptions');
  await database.query('delete from webhook_attempts');
  for (const one of [ok, failing, hanging]) one.received.splice(0);
});

const send = (method: string, path: string, body?: unknown, headers = reader) =>
  call(`${served.url}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, ...json },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
const create = async (body: Record<string, unknown>, headers = reader) => {
  const res = await send('POST', '/api/v1/webhooks', body, headers);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string; position: string; eventTypes: string[] | null };
};
const row = async (id: string) =>
  (
    await database.query<Array<Record<string, Parsed>>>(
      'select url, description, event_types, position, lease_generation, lease_owner, secret from webhook_subscriptions where id = unhex(replace(?, "-", ""))',
      [id],
    )
  )[0]!;
const attemptCount = async () =>
  Number((await database.query<Array<{ n: number }>>('select count(*) as n from webhook_attempts'))[0]!.n);
/** Holds the subscription's lease as a dispatcher mid-walk would. */
const leaseIt = (id: string) =>
  database.query(
    'update webhook_subscriptions set lease_owner = ?, lease_expires_at = utc_timestamp(3) + interval 30 second where id = unhex(replace(?, "-", ""))',
    ['walker', id],
  );

describe('attempts and the test event', () => {
  test("a test event is signed with the subscription's secret at the database's time, carries no position or sequence, and the answer says what the receiver said", async () => {
    const mine = await create({ url: ok.url });
    const { now } = (
      await database.query<Array<{ now: string }>>(
        "select date_format(utc_timestamp(3), '%Y-%m-%dT%H:%i:%s.%fZ') as now",
      )
    )[0]!;
    const res = await send('POST', `/api/v1/webhooks/${mine.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ delivered: true, status: 204, error: null });
    expect(res.body.data.latencyMs).toBeGreaterThanOrEqual(0);
    expect(ok.received).toHaveLength(1);
    const event = new Webhook(mine.secret).verify(ok.received[0]!.body, ok.received[0]!.headers) as Record<
      string,
      unknown
    >;
    expect(event).toEqual({
      id: res.body.data.eventId,
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { subscriptionId: mine.id },
    });
    expect(res.body.data.eventId).toMatch(/^evt_test_/);
    expect(
      Math.abs(Date.parse(event.timestamp as string) - Date.parse(now.replace(/(\.\d{3})\d+Z$/, '$1Z'))),
    ).toBeLessThan(2000);
    expect(ok.received[0]!.headers['webhook-timestamp']).toBe(
      String(Math.floor(Date.parse(event.timestamp as string) / 1000)),
    );
    // Outside the order: nothing about the subscription moved.
    const after = await send('GET', `/api/v1/webhooks/${mine.id}`);
    expect(after.body.data).toMatchObject({ position: mine.position, lastDeliveredAt: null, lastError: null });
  });

  test("the attempts list shows a failing receiver's 500s and a hanging one's timeout, newest first, and nothing of either answer", async () => {
    const failing1 = await create({ url: failing.url });
    const hangs = await create({ url: hanging.url });
    for (let i = 0; i < 2; i++) {
      const res = await send('POST', `/api/v1/webhooks/${failing1.id}/test`);
      expect(res.body.data).toMatchObject({ delivered: false, status: 500, error: 'HTTP 500' });
      expect(res.text).not.toContain(ANSWER_BODY);
    }
    const started = Date.now();
    const timedOut = await send('POST', `/api/v1/webhooks/${hangs.id}/test`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3000);
    expect(timedOut.body.data).toMatchObject({ delivered: false, status: null });
    expect(timedOut.body.data.error).toEqual(expect.any(String));
    expect(timedOut.body.data.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);

    const listed = await send('GET', `/api/v1/webhooks/${failing1.id}/attempts`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(2);
    for (const attempt of listed.body.data)
      expect(attempt).toMatchObject({ position: null, status: 500, error: 'HTTP 500' });
    expect(listed.text).not.toContain(ANSWER_BODY);
    const hung = await send('GET', `/api/v1/webhooks/${hangs.id}/attempts`);
    expect(hung.body.data).toEqual([
      {
        eventId: timedOut.body.data.eventId,
        position: null,
        attemptedAt: expect.any(String),
        status: null,
        error: timedOut.body.data.error,
        latencyMs: expect.any(Number),
      },
    ]);
    expect(hung.body.data[0].latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  });

  test('attempts of feed events show their position as a feed token, like Webhook.position', async () => {
    const mine = await create({ url: ok.url });
    const { position } = (
      await database.query<Array<{ position: number }>>('select position from webhook_subscriptions')
    )[0]!;
    await database.query(
      'insert into webhook_attempts (subscription_id, event_id, position, attempted_at, status, error, latency_ms) values (unhex(replace(?, "-", "")), ?, ?, utc_timestamp(3), 204, null, 12)',
      [mine.id, `evt_${position}`, position],
    );
    const listed = await send('GET', `/api/v1/webhooks/${mine.id}/attempts`);
    expect(listed.body.data).toEqual([
      {
        eventId: `evt_${position}`,
        position: mine.position,
        attemptedAt: expect.any(String),
        status: 204,
        error: null,
        latencyMs: 12,
      },
    ]);
  });

  test("a test on a disabled subscription is a 400 that sends and records nothing; another consumer's is a 404 on both routes", async () => {
    const mine = await create({ url: ok.url });
    await database.query("update webhook_subscriptions set status = 'disabled', disabled_reason = 'x'");
    expectJsonError(
      await send('POST', `/api/v1/webhooks/${mine.id}/test`),
      400,
      'status is disabled: enable the subscription (POST /api/v1/webhooks/{id}/enable) before testing it',
    );
    expect(ok.received).toHaveLength(0);
    expect(await attemptCount()).toBe(0);
    await database.query("update webhook_subscriptions set status = 'active', disabled_reason = null");
    expectJsonError(
      await send('POST', `/api/v1/webhooks/${mine.id}/test`, undefined, writer),
      404,
      'Webhook not found',
    );
    expectJsonError(
      await send('GET', `/api/v1/webhooks/${mine.id}/attempts`, undefined, writer),
      404,
      'Webhook not found',
    );
    expectJsonError(
      await send('GET', '/api/v1/webhooks/019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11/attempts'),
      404,
      'Webhook not found',
    );
    expect(ok.received).toHaveLength(0);
    expect(await attemptCount()).toBe(0);
  });

  test('deleting a subscription deletes its attempts', async () => {
    const mine = await create({ url: ok.url });
    await send('POST', `/api/v1/webhooks/${mine.id}/test`);
    expect(await attemptCount()).toBe(1);
    expect((await send('DELETE', `/api/v1/webhooks/${mine.id}`)).status).toBe(204);
    expect(await attemptCount()).toBe(0);
  });
});

describe('event types and PATCH', () => {
  test('eventTypes on create: stored and shown; absent is null, every type', async () => {
    expect((await create({ url: ok.url })).eventTypes).toBeNull();
    const removals = await create({ url: ok.url, eventTypes: ['job.removed'] });
    expect(removals.eventTypes).toEqual(['job.removed']);
    expect((await row(removals.id)).event_types).toBe('job.removed');
    expect((await send('GET', `/api/v1/webhooks/${removals.id}`)).body.data.eventTypes).toEqual(['job.removed']);
    expect((await create({ url: ok.url, eventTypes: ['job.removed', 'job.updated'] })).eventTypes).toBeNull();
  });

  test.each([
    [
      'an unknown event type',
      { url: 'https://93.184.215.14/h', eventTypes: ['job.created'] },
      [{ field: 'eventTypes.0', message: 'eventTypes may hold only job.updated, job.removed' }],
    ],
    [
      'no event type',
      { url: 'https://93.184.215.14/h', eventTypes: [] },
      [{ field: 'eventTypes', message: 'eventTypes must name at least one event type, or be null for all' }],
    ],
    [
      'eventTypes not a list',
      { url: 'https://93.184.215.14/h', eventTypes: 'job.updated' },
      [{ field: 'eventTypes', message: 'eventTypes must be a list of event types, or null for all' }],
    ],
  ])('create with %s: 400 naming the field, nothing stored', async (_label, body, details) => {
    const res = await send('POST', '/api/v1/webhooks', body);
    expect([res.status, res.body]).toEqual([400, { error: 'Validation failed', details }]);
    expect(
      Number((await database.query<Array<{ n: number }>>('select count(*) as n from webhook_subscriptions'))[0]!.n),
    ).toBe(0);
  });

  test('PATCH changes url, description and event types, keeps the position and the secret, and fences off a walk in flight', async () => {
    const mine = await create({ url: ok.url, description: 'before' });
    const before = await row(mine.id);
    await leaseIt(mine.id);
    const res = await send('PATCH', `/api/v1/webhooks/${mine.id}`, {
      url: failing.url,
      description: 'after',
      eventTypes: ['job.updated'],
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: mine.id,
      url: failing.url,
      description: 'after',
      eventTypes: ['job.updated'],
      position: mine.position,
    });
    const after = await row(mine.id);
    expect(after).toMatchObject({ position: before.position, lease_owner: null, event_types: 'job.updated' });
    expect(Number(after.lease_generation)).toBe(Number(before.lease_generation) + 1);
    expect(Buffer.compare(after.secret, before.secret)).toBe(0);
    // null: every type again; description null clears it.
    const cleared = await send('PATCH', `/api/v1/webhooks/${mine.id}`, { eventTypes: null, description: null });
    expect(cleared.body.data).toMatchObject({ url: failing.url, description: null, eventTypes: null });
  });

  test.each([
    ['an empty body', {}, { error: 'Send at least one of url, description, eventTypes' }],
    [
      'an unknown event type',
      { eventTypes: ['job.moved'] },
      {
        error: 'Validation failed',
        details: [{ field: 'eventTypes.0', message: 'eventTypes may hold only job.updated, job.removed' }],
      },
    ],
    ['a private literal url', { url: 'http://10.0.0.7/hooks' }, { error: NOT_PUBLIC }],
    ['a loopback literal not allowed', { url: 'http://127.0.0.2/hooks', description: 'x' }, { error: NOT_PUBLIC }],
    ['a name that does not resolve', { url: 'https://no-such-host.invalid/hooks' }, { error: NOT_PUBLIC }],
    ['another scheme', { url: 'ftp://93.184.215.14/hooks' }, { error: 'url must use https' }],
    [
      'an unknown field',
      { position: 'x' },
      { error: 'Validation failed', details: [{ field: 'position', message: 'position is not a known field' }] },
    ],
  ])('PATCH with %s: 400, nothing changed', async (_label, body, answer) => {
    const mine = await create({ url: ok.url, description: 'kept' });
    const before = await row(mine.id);
    const res = await send('PATCH', `/api/v1/webhooks/${mine.id}`, body);
    expect([res.status, res.body]).toEqual([400, answer]);
    expect(await row(mine.id)).toEqual(before);
  });

  test("PATCH on another consumer's subscription or an unknown id is a 404 and changes nothing", async () => {
    const mine = await create({ url: ok.url });
    const before = await row(mine.id);
    expectJsonError(
      await send('PATCH', `/api/v1/webhooks/${mine.id}`, { description: 'theirs' }, writer),
      404,
      'Webhook not found',
    );
    expectJsonError(
      await send('PATCH', '/api/v1/webhooks/019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11', { description: 'x' }),
      404,
      'Webhook not found',
    );
    expect(await row(mine.id)).toEqual(before);
    const put = await send('PUT', `/api/v1/webhooks/${mine.id}`, {});
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'HEAD, GET, PATCH, DELETE']);
  });
});

describe('rotation across three secrets', () => {
  /** What the dispatcher sends: one delivery signed with every secret still valid, decrypted. */
  const delivery = async (id: string) => {
    const target = (await testTarget(database.db, reader['X-Consumer-ID']!, id))!;
    const body = JSON.stringify({
      id: 'evt_7',
      type: 'job.removed',
      timestamp: target.now.toISOString(),
      position: 'p',
      sequence: 7,
      data: { id: 'x' },
    });
    return {
      body,
      headers: signer(target.secrets.map((sealed) => decryptSecret(key, sealed)))('evt_7', target.now, body),
      count: target.secrets.length,
    };
  };
  const verifies = (secret: string, signed: { body: string; headers: Record<string, string> }) => {
    try {
      new Webhook(secret).verify(signed.body, signed.headers);
      return true;
    } catch {
      return false;
    }
  };
  const rotate = (id: string, body?: unknown) => send('POST', `/api/v1/webhooks/${id}/rotate-secret`, body);

  test('rotated twice within 24 h, a receiver on any of the three secrets verifies every delivery; a third rotation is a 409 saying when; expirePrevious leaves only the newest', async () => {
    const mine = await create({ url: ok.url });
    const first = await rotate(mine.id);
    const second = await rotate(mine.id);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.data.olderSecretExpiresAt).toBe(first.body.data.previousSecretExpiresAt);
    const secrets = [mine.secret, first.body.data.secret, second.body.data.secret];
    const signed = await delivery(mine.id);
    expect(signed.count).toBe(3);
    expect(secrets.map((secret) => verifies(secret, signed))).toEqual([true, true, true]);
    // The test event the API sends is signed the same way.
    await send('POST', `/api/v1/webhooks/${mine.id}/test`);
    expect(secrets.map((secret) => verifies(secret, ok.received[0]!))).toEqual([true, true, true]);

    const before = await row(mine.id);
    const refused = await rotate(mine.id);
    expectJsonError(
      refused,
      409,
      `Two replaced secrets still sign until ${first.body.data.previousSecretExpiresAt}: rotate again after then, or send {"expirePrevious": true} to end every replaced secret now`,
    );
    expect(await row(mine.id)).toEqual(before);

    await leaseIt(mine.id);
    const ended = await rotate(mine.id, { expirePrevious: true });
    expect(ended.status).toBe(200);
    expect(ended.body.data.olderSecretExpiresAt).toBeNull();
    expect(Math.abs(Date.parse(ended.body.data.previousSecretExpiresAt) - Date.now())).toBeLessThan(5000);
    const now = await delivery(mine.id);
    expect([...secrets, ended.body.data.secret].map((secret) => verifies(secret, now))).toEqual([
      false,
      false,
      false,
      true,
    ]);
    const after = await row(mine.id);
    expect([after.lease_owner, Number(after.lease_generation)]).toEqual([null, Number(before.lease_generation) + 1]);
  });

  test('once the oldest replaced secret has expired, rotating is allowed again and it is dropped', async () => {
    const mine = await create({ url: ok.url });
    const first = await rotate(mine.id);
    const second = await rotate(mine.id);
    await database.query(
      'update webhook_subscriptions set older_secret_expires_at = utc_timestamp(3) - interval 1 second',
    );
    const third = await rotate(mine.id);
    expect(third.status).toBe(200);
    expect(third.body.data.olderSecretExpiresAt).toBe(second.body.data.previousSecretExpiresAt);
    const signed = await delivery(mine.id);
    expect(
      [mine.secret, first.body.data.secret, second.body.data.secret, third.body.data.secret].map((secret) =>
        verifies(secret, signed),
      ),
    ).toEqual([false, true, true, true]);
  });

  test('an expired replaced secret no longer signs', async () => {
    const mine = await create({ url: ok.url });
    const first = await rotate(mine.id);
    await database.query(
      'update webhook_subscriptions set previous_secret_expires_at = utc_timestamp(3) - interval 1 second',
    );
    const signed = await delivery(mine.id);
    expect([mine.secret, first.body.data.secret].map((secret) => verifies(secret, signed))).toEqual([false, true]);
  });

  test.each([
    [
      'expirePrevious not a boolean',
      { expirePrevious: 'yes' },
      {
        error: 'Validation failed',
        details: [{ field: 'expirePrevious', message: 'expirePrevious must be true or false' }],
      },
    ],
    [
      'an unknown field',
      { expire: true },
      { error: 'Validation failed', details: [{ field: 'expire', message: 'expire is not a known field' }] },
    ],
  ])('rotate with %s: 400, nothing changed', async (_label, body, answer) => {
    const mine = await create({ url: ok.url });
    const before = await row(mine.id);
    const res = await rotate(mine.id, body);
    expect([res.status, res.body]).toEqual([400, answer]);
    expect(await row(mine.id)).toEqual(before);
  });
});
