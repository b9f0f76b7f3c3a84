/**
 * The webhook routes on the service (identity headers as the gateway sends them): each a
 * consumer's own, every refusal a JSON error that stores nothing, the secret shown once and
 * kept sealed. Every answer is checked against docs/openapi.json (call()).
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signingKey } from '../../../../db/signing-key';
import { createApp } from '../../../../service/app';
import { createLogger } from '../../../../service/logger';
import { decodeSince } from '../../../../service/http/tokens';
import { runAdmin } from '../../../../service/commands/webhooks';
import { decryptSecret } from '../../../../service/webhooks/secrets';
import { loadWebhookSettings, type WebhookSettings } from '../../../../service/webhooks/settings';
import { consumerHeaders, json, reader, writer } from '../../../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../../../helpers/database';
import { call, expectJsonError, serve, type Served } from '../../../helpers/http';
import { memoryLog } from '../../../helpers/service';
import type { Parsed } from '../../../helpers/parsed';

const key = randomBytes(32);
// Production's settings, with or without a secrets key.
const settings = (secretsKey: Buffer | undefined): WebhookSettings => ({ ...loadWebhookSettings({}), secretsKey });
const PUBLIC_URL = 'https://93.184.215.14/hooks';
const NOT_PUBLIC = 'url must resolve only to public addresses';

let database: TestDatabase;
let served: Served;
let unconfigured: Served;
const logs: string[] = [];

beforeAll(async () => {
  database = await freshDatabase('webhook_routes');
  const app = (webhooks: WebhookSettings) =>
    createApp({ db: database.db, config: {}, logger: createLogger('info', memoryLog(logs)), webhooks }).callback();
  served = await serve(app(settings(key)));
  unconfigured = await serve(app(settings(undefined)));
});

afterAll(async () => {
  await served.close();
  await unconfigured.close();
  await database.close();
});

beforeEach(() => database.query('delete from webhook_subscriptions'));

const stored = async () =>
  Number((await database.query<Array<{ n: number }>>('select count(*) as n from webhook_subscriptions'))[0]!.n);
const post = (path: string, body: unknown, headers = reader, base = served.url) =>
  call(`${base}${path}`, {
    method: 'POST',
    headers: { ...headers, ...json },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const get = (path: string, headers = reader) => call(`${served.url}${path}`, { headers });
const create = async (headers = reader, body: Record<string, unknown> = { url: PUBLIC_URL }) => {
  const res = await post('/api/v1/webhooks', body, headers);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string; position: string };
};

test("create answers 201 with the secret once; the feed's head as position; GET and the list never show the secret", async () => {
  await database.query(
    "insert into jobs (id, title, department, type, description, requirements, responsibilities, status, created_at) values (unhex(replace(uuid(), '-', '')), 't', 'd', 'contract', 'x', '[]', '[]', 'active', now(3))",
  );
  const res = await post('/api/v1/webhooks', { url: PUBLIC_URL, description: 'Board sync' });
  expect(res.status).toBe(201);
  const created = res.body.data;
  expect(res.headers.get('location')).toBe(`/api/v1/webhooks/${created.id}`);
  expect(created).toMatchObject({
    url: PUBLIC_URL,
    description: 'Board sync',
    status: 'active',
    lastError: null,
    disabledReason: null,
  });
  expect(created.secret).toMatch(/^whsec_/);
  expect(() => new Webhook(created.secret)).not.toThrow();
  const feed = await get('/api/v1/jobs/changes');
  expect(created.position).toBe(feed.body.meta.nextSince);
  expect(decodeSince(await signingKey(database.db), created.position).seq).toBe(1);

  const one = await get(`/api/v1/webhooks/${created.id}`);
  expect(one.status).toBe(200);
  const { secret: _shownOnce, ...view } = created;
  expect(one.body).toEqual({ data: view });
  expect((await get('/api/v1/webhooks')).body).toEqual({ data: [view] });
  expect(one.text + (await get('/api/v1/webhooks')).text).not.toContain(created.secret.slice(6));

  // Sealed at rest: the dump holds neither the secret nor its base64 body; the key opens it.
  const [row] = await database.query<Array<{ secret: Buffer }>>('select secret from webhook_subscriptions');
  expect(row!.secret.toString('latin1')).not.toContain(
    Buffer.from(created.secret.slice(6), 'base64').toString('latin1'),
  );
  expect(row!.secret.toString('latin1')).not.toContain(created.secret.slice(6));
  expect(decryptSecret(key, row!.secret)).toBe(created.secret);
  expect(logs.join('\n')).not.toContain(created.secret.slice(6));
});

test('a subscription may start at the position a full sync reached', async () => {
  const feed = await get('/api/v1/jobs/changes');
  const created = await create(reader, { url: PUBLIC_URL, position: feed.body.meta.nextSince });
  expect(created.position).toBe(feed.body.meta.nextSince);
});

test("another consumer's subscription is not found, for every route, and stays as it was", async () => {
  const mine = await create(reader);
  const other = writer;
  expectJsonError(await get(`/api/v1/webhooks/${mine.id}`, other), 404, 'Webhook not found');
  expect((await get('/api/v1/webhooks', other)).body).toEqual({ data: [] });
  expectJsonError(
    await call(`${served.url}/api/v1/webhooks/${mine.id}`, { method: 'DELETE', headers: other }),
    404,
    'Webhook not found',
  );
  expectJsonError(await post(`/api/v1/webhooks/${mine.id}/rotate-secret`, {}, other), 404, 'Webhook not found');
  expectJsonError(await post(`/api/v1/webhooks/${mine.id}/enable`, {}, other), 404, 'Webhook not found');
  expectJsonError(
    await post(`/api/v1/webhooks/${mine.id}/replay`, { position: mine.position }, other),
    404,
    'Webhook not found',
  );
  const [row] = await database.query<Array<{ secret: Buffer }>>('select secret from webhook_subscriptions');
  expect(decryptSecret(key, row!.secret)).toBe(mine.secret);
  expect((await get(`/api/v1/webhooks/${mine.id}`)).status).toBe(200);
});

test(`a key holds at most 5 subscriptions: the sixth is a 409 and is not stored`, async () => {
  for (let i = 0; i < 5; i++) await create(reader);
  expectJsonError(
    await post('/api/v1/webhooks', { url: PUBLIC_URL }),
    409,
    'A key may hold at most 5 webhook subscriptions: delete one first',
  );
  expect(await stored()).toBe(5);
  // Per consumer: another key still may.
  await create(writer);
  // Six at once from one key: still five.
  await database.query('delete from webhook_subscriptions');
  const results = await Promise.all(Array.from({ length: 8 }, () => post('/api/v1/webhooks', { url: PUBLIC_URL })));
  expect(results.filter((res) => res.status === 201)).toHaveLength(5);
  expect(results.filter((res) => res.status === 409)).toHaveLength(3);
  expect(await stored()).toBe(5);
});

test('the facts settings control are stated as set: the limit in the 409 and the document, the timeout and the give-up time in the document', async () => {
  const env = {
    WEBHOOK_SECRETS_KEY: key.toString('base64'),
    WEBHOOK_SUBSCRIPTION_LIMIT: '2',
    WEBHOOK_GIVE_UP_MS: String(36 * 3_600_000),
    WEBHOOK_TIMEOUT_MS: '4000',
  };
  const tight = await serve(
    createApp({
      db: database.db,
      config: {},
      logger: createLogger('silent'),
      webhooks: loadWebhookSettings(env),
    }).callback(),
  );
  try {
    for (let i = 0; i < 2; i++)
      expect((await post('/api/v1/webhooks', { url: PUBLIC_URL }, reader, tight.url)).status).toBe(201);
    expectJsonError(
      await post('/api/v1/webhooks', { url: PUBLIC_URL }, reader, tight.url),
      409,
      'A key may hold at most 2 webhook subscriptions: delete one first',
    );
    const doc = (await (await fetch(`${tight.url}/api/v1/openapi.json`, { headers: reader })).json()) as Parsed;
    const create = doc.paths['/api/v1/webhooks'].post;
    expect(create.summary).toContain('at most 2 per key');
    expect(create.responses['409'].content['application/json'].example).toEqual({
      error: 'A key may hold at most 2 webhook subscriptions: delete one first',
    });
    expect(doc.webhooks['job.updated'].post.description).toContain('answer 2xx within 4 s');
    expect(doc.webhooks['job.updated'].post.description).toContain('for up to 36 hours');
    expect(doc.info.description).toContain('at most 2 subscriptions per key');
    expect(doc.info.description).toContain('Answer 2xx within 4 s,');
    expect(doc.info.description).toContain('for up to 36 hours;');
    expect(doc.info.description).not.toContain('<!--fact');
  } finally {
    await tight.close();
  }
});

describe('refusals are JSON errors and store nothing', () => {
  afterEach(async () => expect(await stored()).toBe(0));

  test.each([
    ['no url', {}, 'Validation failed', [{ field: 'url', message: 'url is required' }]],
    ['url not a string', { url: 7 }, 'Validation failed', [{ field: 'url', message: 'url must be a string' }]],
    [
      'an unknown field',
      { url: PUBLIC_URL, events: ['job.updated'] },
      'Validation failed',
      [{ field: 'events', message: 'events is not a known field' }],
    ],
    [
      'a description too long',
      { url: PUBLIC_URL, description: 'x'.repeat(501) },
      'Validation failed',
      [{ field: 'description', message: 'description must be at most 500 characters' }],
    ],
    [
      'a description with a line break',
      { url: PUBLIC_URL, description: 'one\ntwo' },
      'Validation failed',
      [{ field: 'description', message: 'description must not contain control characters or line breaks' }],
    ],
  ])('%s', async (_label, body, error, details) => {
    const res = await post('/api/v1/webhooks', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, details });
  });

  test.each([
    ['plain http', 'http://93.184.215.14/hooks', 'url must use https'],
    ['user-info', 'https://me:pw@93.184.215.14/hooks', 'url must not contain a user name or password'],
    ['loopback', 'https://127.0.0.1/hooks', NOT_PUBLIC],
    ['private', 'https://10.1.2.3/hooks', NOT_PUBLIC],
    ['link-local metadata', 'https://169.254.169.254/latest/meta-data/', NOT_PUBLIC],
    ['IPv6 loopback', 'https://[::1]/hooks', NOT_PUBLIC],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hooks', NOT_PUBLIC],
    ['a name resolving to loopback', 'https://localhost/hooks', NOT_PUBLIC],
    ['a name that does not resolve', 'https://no-such-host.invalid/hooks', NOT_PUBLIC],
  ])('a url to %s: 400, naming what is wrong with it and nothing of our network', async (_label, url, message) => {
    const res = await post('/api/v1/webhooks', { url });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toBe(message);
  });

  test('a position not from the feed, malformed JSON, not JSON at all', async () => {
    expectJsonError(
      await post('/api/v1/webhooks', { url: PUBLIC_URL, position: 'made-up' }),
      400,
      "position is not valid: pass meta.nextSince of GET /api/v1/jobs/changes, or an event's position, exactly as it was given",
    );
    expect((await post('/api/v1/webhooks', '{"url":')).status).toBe(400);
    const text = await call(`${served.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...reader, 'Content-Type': 'text/plain' },
      body: PUBLIC_URL,
    });
    expectJsonError(text, 415, 'Content-Type must be application/json');
  });

  test('without a secrets key on the server: 503, nothing stored', async () => {
    const res = await post('/api/v1/webhooks', { url: PUBLIC_URL }, reader, unconfigured.url);
    expectJsonError(res, 503, 'Webhooks are not available on this server right now');
  });

  test('no identity from the gateway: 401', async () => {
    const res = await call(`${served.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ url: PUBLIC_URL }),
    });
    expect(res.status).toBe(401);
  });
});

test('unknown or malformed ids are 404; other methods are 405 with Allow', async () => {
  expectJsonError(await get('/api/v1/webhooks/not-a-uuid'), 404, 'Webhook not found');
  expectJsonError(await get('/api/v1/webhooks/019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11'), 404, 'Webhook not found');
  const put = await call(`${served.url}/api/v1/webhooks`, {
    method: 'PUT',
    headers: { ...reader, ...json },
    body: '{}',
  });
  expectJsonError(put, 405, 'Method not allowed');
  expect(put.headers.get('allow')).toBe('HEAD, GET, POST');
  const getReplay = await get('/api/v1/webhooks/019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11/replay');
  expect(getReplay.status).toBe(405);
});

test('rotate shows a new secret once; replay moves the position; delete removes it', async () => {
  const mine = await create(reader);
  const rotated = await post(`/api/v1/webhooks/${mine.id}/rotate-secret`, {});
  expect(rotated.status).toBe(200);
  expect(rotated.body.data.secret).toMatch(/^whsec_/);
  expect(rotated.body.data.secret).not.toBe(mine.secret);
  expect(Date.parse(rotated.body.data.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
  expect(rotated.body.data.olderSecretExpiresAt).toBeNull();
  const [row] = await database.query<Array<{ secret: Buffer; previous_secret: Buffer }>>(
    'select secret, previous_secret from webhook_subscriptions',
  );
  expect([decryptSecret(key, row!.secret), decryptSecret(key, row!.previous_secret)]).toEqual([
    rotated.body.data.secret,
    mine.secret,
  ]);

  const start = await get('/api/v1/jobs/changes');
  const replay = await post(`/api/v1/webhooks/${mine.id}/replay`, { position: start.body.meta.nextSince });
  expect(replay.status).toBe(200);
  expect(replay.body.data.position).toBe(start.body.meta.nextSince);
  expectJsonError(
    await post(`/api/v1/webhooks/${mine.id}/replay`, { position: 'nope' }),
    400,
    "position is not valid: pass meta.nextSince of GET /api/v1/jobs/changes, or an event's position, exactly as it was given",
  );
  expect((await post(`/api/v1/webhooks/${mine.id}/replay`, {})).body).toEqual({
    error: 'Validation failed',
    details: [{ field: 'position', message: 'position is required' }],
  });

  const gone = await call(`${served.url}/api/v1/webhooks/${mine.id}`, { method: 'DELETE', headers: reader });
  expect(gone.status).toBe(204);
  expectJsonError(await get(`/api/v1/webhooks/${mine.id}`), 404, 'Webhook not found');
});

test("operators list a partner's subscriptions by username and disable one; the partner sees why and enables it again", async () => {
  const mine = await create(reader);
  const lines: string[] = [];
  const env = { DATABASE_URL: database.url };
  expect(await runAdmin(['list', 'demo-reader'], env, (line) => lines.push(line))).toBe(0);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(mine.id);
  expect(lines[0]).toContain('active');
  expect(lines.join('\n')).not.toContain(mine.secret.slice(6));
  expect(await runAdmin(['disable', mine.id, 'abusive', 'receiver'], env, (line) => lines.push(line))).toBe(0);
  const seen = await get(`/api/v1/webhooks/${mine.id}`);
  expect(seen.body.data).toMatchObject({ status: 'disabled', disabledReason: 'abusive receiver' });
  expect(await runAdmin(['disable', '019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11'], env, (line) => lines.push(line))).toBe(1);
  expect(await runAdmin(['list'], env, (line) => lines.push(line))).toBe(2);

  const enabled = await post(`/api/v1/webhooks/${mine.id}/enable`, {});
  expect(enabled.body.data).toMatchObject({ status: 'active', disabledReason: null });
});

test('consumer headers alone decide ownership: the same id under another consumer id is not found', async () => {
  const mine = await create(consumerHeaders('11111111-1111-4111-8111-111111111111', 'partner-one', ['jobs:read']));
  expect(
    (
      await get(
        `/api/v1/webhooks/${mine.id}`,
        consumerHeaders('22222222-2222-4222-8222-222222222222', 'partner-one', ['jobs:read']),
      )
    ).status,
  ).toBe(404);
});
