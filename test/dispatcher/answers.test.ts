/**
 * What a delivery's answer does, against receivers on loopback (allowed by name, as npm start allows
 * them): the fixed error vocabulary, the timeout counted from sending, Retry-After, and the operator's
 * guards at start-up (the secrets key, the clock).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { sequencePendingChanges } from '../../db/jobs/change-numbering';
import { storeJob } from '../../db/jobs/job-store';
import { createSubscription } from '../../db/webhooks/subscriptions';
import { createLogger } from '../../service/logger';
import { startDispatcher, type Dispatcher } from '../../dispatcher/dispatcher';
import { runDispatcher } from '../../dispatcher/main';
import { createDispatcherMetrics } from '../../dispatcher/metrics';
import { deliveryAgent, postEvent } from '../../service/webhooks/post';
import { encryptSecret, newSecret } from '../../service/webhooks/secrets';
import type { WebhookSettings } from '../../service/config';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { memoryLog } from '../helpers/service';
import { MINIMAL_JOB } from '../helpers/job-bodies';

const LOOPBACK = { allowHttp: true, allowed: ['127.0.0.1/32'] };
const secretsKey = randomBytes(32);
const servers: http.Server[] = [];
let database: TestDatabase | undefined;
const running: Dispatcher[] = [];

/** A receiver on loopback answering as `answer` says; its URL and the times requests arrived. */
async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const arrivals: Array<{ at: number; headers: http.IncomingHttpHeaders }> = [];
  const server = http.createServer((req, res) => {
    arrivals.push({ at: Date.now(), headers: req.headers });
    req.resume().on('end', () => answer(req, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, arrivals };
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((one) => one.stop()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
  await database?.close();
  database = undefined;
});

describe('the error vocabulary: a partner reads one of five words, never our network', () => {
  test('refused, unresolvable and not-allowed addresses are all "connection failed"; a hang is "timeout"; a big answer "answer too large"; else the status', async () => {
    const closedPort = await receiver(() => undefined).then(async (one) => {
      await new Promise((resolve) => servers.pop()!.close(resolve));
      return one.url;
    });
    expect(await postEvent(closedPort, {}, '{}', { policy: LOOPBACK })).toMatchObject({
      ok: false,
      error: 'connection failed',
    });
    const noSuchName = (_host: string, _options: unknown, callback: (error: Error) => void) =>
      callback(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    expect(
      await postEvent('http://nowhere.partner.example/hooks', {}, '{}', {
        policy: LOOPBACK,
        lookup: noSuchName as never,
      }),
    ).toMatchObject({ ok: false, error: 'connection failed' });
    expect(await postEvent('http://10.1.2.3/hooks', {}, '{}', { policy: LOOPBACK })).toMatchObject({
      ok: false,
      error: 'connection failed',
    });
    const hanging = await receiver(() => undefined);
    expect(await postEvent(hanging.url, {}, '{}', { policy: LOOPBACK, timeoutMs: 300 })).toEqual({
      ok: false,
      error: 'timeout',
    });
    const huge = await receiver((_req, res) => res.writeHead(200).end('x'.repeat(200 * 1024)));
    expect(await postEvent(huge.url, {}, '{}', { policy: LOOPBACK })).toEqual({
      ok: false,
      status: 200,
      error: 'answer too large',
    });
    const failing = await receiver((_req, res) => res.writeHead(500).end('{"internal":"stack trace"}'));
    expect(await postEvent(failing.url, {}, '{}', { policy: LOOPBACK })).toEqual({
      ok: false,
      status: 500,
      error: 'HTTP 500',
    });
  });

  test('the timeout runs from sending: forty subscriptions behind one host, each answered in 300 ms, none times out at 500 ms', async () => {
    const host = await receiver((_req, res) => setTimeout(() => res.writeHead(204).end(), 300));
    const agent = deliveryAgent(LOOPBACK, { connectTimeoutMs: 500 });
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, () => postEvent(host.url, {}, '{}', { policy: LOOPBACK, timeoutMs: 500, agent })),
      );
      expect(outcomes.filter((outcome) => !outcome.ok)).toEqual([]);
    } finally {
      await agent.destroy();
    }
  });
});

const settings = (overrides: Partial<WebhookSettings> = {}): WebhookSettings & { secretsKey: Buffer } => ({
  secretsKey,
  policy: LOOPBACK,
  retry: { firstMs: 100, maxMs: 3000, giveUpAfterMs: 600_000 },
  leaseMs: 2000,
  pollMs: 50,
  timeoutMs: 1000,
  subscriptionLimit: 5,
  ...overrides,
});

async function subscribed(url: string, key = secretsKey) {
  database = await freshDatabase('webhook_answers');
  const secret = newSecret();
  const created = await createSubscription(
    database.db,
    { consumerId: 'partner-a', url, description: null, secret: encryptSecret(key, secret) },
    5,
  );
  if (typeof created === 'string') throw new Error(created);
  await storeJob(
    database.db,
    { ...MINIMAL_JOB, title: 'one', status: 'active', requirements: [], responsibilities: [] } as never,
    'writer',
  );
  await sequencePendingChanges(database.db);
  return { id: created.id, secret, db: database };
}

async function firstFailure(id: string, db: TestDatabase) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [row] = await db.query<Array<{ wait_ms: number; last_error: string | null }>>(
      'select timestampdiff(microsecond, utc_timestamp(3), next_attempt_at) / 1000 as wait_ms, last_error from webhook_subscriptions where id = unhex(replace(?, "-", ""))',
      [id],
    );
    if (row?.last_error) return { waitMs: Number(row.wait_ms), error: row.last_error };
    if (Date.now() > deadline) throw new Error('no failure recorded');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('Retry-After on 429 and 503', () => {
  test.each([
    [429, '2', 1500, 2100],
    [503, new Date(Date.now() + 3_600_000).toUTCString(), 2500, 3100],
  ])(
    'a %i with Retry-After %s waits what it asks, within WEBHOOK_RETRY_MAX_MS (3 s)',
    async (status, retryAfter, atLeast, atMost) => {
      const target = await receiver((_req, res) => res.writeHead(status, { 'Retry-After': retryAfter }).end());
      const { id, db } = await subscribed(target.url);
      const dispatcher = startDispatcher({
        db: db.db,
        settings: settings(),
        logger: createLogger('warn', memoryLog([])),
      });
      running.push(dispatcher);
      const failure = await firstFailure(id, db);
      expect(failure.error).toBe(`HTTP ${status}`);
      // Without Retry-After the schedule would wait 50 to 100 ms.
      expect(failure.waitMs).toBeGreaterThan(atLeast);
      expect(failure.waitMs).toBeLessThan(atMost);
      const [attempt] = await db.query<Array<{ status: number; error: string }>>(
        'select status, error from webhook_attempts',
      );
      expect(attempt).toMatchObject({ status, error: `HTTP ${status}` });
    },
  );
});

describe('operators', () => {
  test('a dispatcher whose WEBHOOK_SECRETS_KEY cannot open the secrets the service sealed refuses to start, naming the variable', async () => {
    const target = await receiver((_req, res) => res.writeHead(204).end());
    const { db } = await subscribed(target.url, randomBytes(32));
    const env = {
      DATABASE_URL: db.url,
      LOG_LEVEL: 'silent',
      WEBHOOK_SECRETS_KEY: secretsKey.toString('base64'),
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32',
    };
    await expect(runDispatcher(env)).rejects.toThrow(/WEBHOOK_SECRETS_KEY cannot open the webhook secrets/);
    expect(target.arrivals).toEqual([]);
  });

  test("a host clock 90 s behind the database's is logged once and shown in a metric; signatures keep the database's time", async () => {
    const target = await receiver((_req, res) => res.writeHead(204).end());
    const { db } = await subscribed(target.url);
    const logs: string[] = [];
    const metrics = createDispatcherMetrics();
    running.push(
      startDispatcher({
        db: db.db,
        settings: settings(),
        logger: createLogger('info', memoryLog(logs)),
        metrics,
        wallNow: () => Date.now() - 90_000,
      }),
    );
    const deadline = Date.now() + 10_000;
    while (target.arrivals.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const skew = Number(/^webhook_clock_skew_seconds (\S+)$/m.exec(await metrics.registry.metrics())?.[1]);
    expect(skew).toBeGreaterThan(85);
    expect(skew).toBeLessThan(95);
    expect(logs.filter((line) => line.includes('more than 30 s off'))).toHaveLength(1);
    expect(Math.abs(Number(target.arrivals[0]!.headers['webhook-timestamp']) * 1000 - Date.now())).toBeLessThan(5_000);
  });
});
