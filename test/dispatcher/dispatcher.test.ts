/**
 * The dispatcher against real MariaDB and receivers in network namespaces of their own: every
 * delivery verified with standardwebhooks, in feed order, retried, given up on, handed over
 * between dispatchers. The receivers' addresses are private, so each test allows its receiver's
 * address explicitly and the SSRF guard runs as in production.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import mysql from 'mysql2/promise';
import { connectionOptions } from '../../db/client';
import { readChangeEvents, readChanges } from '../../db/jobs/change-feed';
import { select } from '../../db/sql';
import { sequencePendingChanges } from '../../db/jobs/change-numbering';
import { storeJob } from '../../db/jobs/job-store';
import { claimDue, recordProgress } from '../../db/webhooks/delivery';
import {
  createSubscription,
  disableSubscription,
  findSubscription,
  replayFrom,
  rotateSecret,
} from '../../db/webhooks/subscriptions';
import { webhookSubscriptions } from '../../db/webhooks/schema';
import { signingKey } from '../../db/signing-key';
import { decodeSince } from '../../service/http/tokens';
import { createLogger } from '../../service/logger';
import { startDispatcher, type Dispatcher } from '../../dispatcher/dispatcher';
import { feedWindow } from '../../dispatcher/feed-window';
import { createDispatcherMetrics } from '../../dispatcher/metrics';
import { encryptSecret, newSecret } from '../../service/webhooks/secrets';
import type { WebhookSettings } from '../../service/config';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { memoryLog } from '../helpers/service';
import { MINIMAL_JOB } from '../helpers/job-bodies';
import { receiverUnavailable, startReceiver, verified, type Receiver } from '../service/webhooks/receivers';

const why = receiverUnavailable();
const inNamespaces = why ? test.skip : test;
if (why) console.warn(`webhook dispatcher: not run here: ${why}`);

const secretsKey = randomBytes(32);
let database: TestDatabase;
const open: Array<{ close(): void }> = [];
const running: Dispatcher[] = [];
const logs: string[] = [];

const settingsFor = (
  receiver: Pick<Receiver, 'address'> | undefined,
  overrides: Partial<WebhookSettings> = {},
): WebhookSettings & { secretsKey: Buffer } => ({
  secretsKey,
  policy: { allowHttp: true, allowed: receiver ? [`${receiver.address}/32`] : [] },
  retry: { firstMs: 100, maxMs: 400, giveUpAfterMs: 60_000 },
  leaseMs: 2000,
  pollMs: 50,
  timeoutMs: 1000,
  subscriptionLimit: 5,
  ...overrides,
});

function dispatch(settings: WebhookSettings & { secretsKey: Buffer }, metrics = createDispatcherMetrics()): Dispatcher {
  const dispatcher = startDispatcher({
    db: database.db,
    settings,
    logger: createLogger('debug', memoryLog(logs)),
    metrics,
  });
  running.push(dispatcher);
  return dispatcher;
}

async function receiver(mode?: string): Promise<Receiver> {
  const one = await startReceiver(mode);
  open.push(one);
  return one;
}

async function subscribe(url: string, consumerId = 'partner-a', position?: number) {
  const secret = newSecret();
  const created = await createSubscription(
    database.db,
    { consumerId, url, description: null, secret: encryptSecret(secretsKey, secret), position },
    5,
  );
  if (typeof created === 'string') throw new Error(created);
  return { id: created.id, secret };
}

const job = (title: string, status = 'active') =>
  storeJob(
    database.db,
    { ...MINIMAL_JOB, title, status, requirements: [], responsibilities: [] } as never,
    'writer',
  ).then((stored) => stored.id);

async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeEach(async () => {
  database = await freshDatabase('webhook_dispatch');
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((one) => one.stop()));
  for (const one of open.splice(0)) one.close();
  await database.close();
});

inNamespaces(
  "delivers every feed entry in feed order, signed per Standard Webhooks, the payload exactly the feed's public Job or a removal",
  async () => {
    const target = await receiver();
    const { secret } = await subscribe(target.url);
    const [a, b, c] = [await job('A'), await job('B'), await job('C')];
    await job('a draft', 'draft');
    await database.query('update jobs set title = ? where id = ?', [
      'A, renamed',
      Buffer.from(a.replace(/-/g, ''), 'hex'),
    ]);
    await database.query('update jobs set deleted_at = now(3) where id = ?', [Buffer.from(b.replace(/-/g, ''), 'hex')]);
    dispatch(settingsFor(target));
    await until(
      () => readChanges(database.db, 0, 100),
      (page) => page.entries.length === 3,
    );
    const feed = await readChanges(database.db, 0, 100);
    await target.waitFor(3);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const events = target.deliveries.map((delivery) => verified(delivery, secret));
    expect(events.map((event) => event.data)).toEqual(
      feed.entries.map((entry) => ('removed' in entry ? { id: entry.id } : entry)),
    );
    // In the order the changes were written: C's insert, A's rename, B's soft delete; never the draft.
    expect(events.map((event) => event.type)).toEqual(['job.updated', 'job.updated', 'job.removed']);
    expect(events.map((event) => (event.data as { id: string }).id)).toEqual([c, a, b]);
    const key = await signingKey(database.db);
    const positions = events.map((event) => decodeSince(key, event.position));
    const seqs = positions.map((position) => position.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(feed.lastSeq).toBe(seqs.at(-1));
    events.forEach((event, i) => {
      expect(event.history).toBe(positions[i]!.history);
      expect(event.id).toBe(`evt_${positions[i]!.history}_${seqs[i]}`);
      expect(target.deliveries[i]!.headers['webhook-id']).toBe(event.id);
      expect(Date.parse(event.timestamp)).not.toBeNaN();
    });
    // Nothing internal: the job.updated data has exactly the public Job's fields.
    expect(Object.keys(events[0]!.data).sort()).toEqual(
      Object.keys(JSON.parse(JSON.stringify(feed.entries[0]!)) as object).sort(),
    );
  },
);

inNamespaces(
  'a failed delivery is retried with the same event id until it succeeds; the last error is visible meanwhile and cleared after',
  async () => {
    const target = await receiver('failfirst=3');
    const { id, secret } = await subscribe(target.url);
    await job('retried');
    dispatch(settingsFor(target));
    await target.waitFor(2);
    const failing = await findSubscription(database.db, 'partner-a', id);
    expect(failing).toMatchObject({ status: 'active', lastError: 'HTTP 500' });
    await target.waitFor(4);
    const ids = target.deliveries.map((delivery) => verified(delivery, secret).id);
    expect(new Set(ids).size).toBe(1);
    expect(target.deliveries.map((delivery) => delivery.status)).toEqual([500, 500, 500, 204]);
    // Backoff: the waits grow (first 100 ms, doubled, jittered between half and all).
    const gaps = target.deliveries.slice(1).map((delivery, i) => delivery.at - target.deliveries[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(40);
    expect(gaps[2]).toBeGreaterThanOrEqual(150);
    const done = await until(
      () => findSubscription(database.db, 'partner-a', id),
      (row) => row?.lastError === null,
    );
    expect(done).toMatchObject({ status: 'active', lastError: null, failingSince: null });
  },
);

inNamespaces(
  'a subscription failing for the whole retry period is disabled, with its reason and last error; a 410 disables it at once',
  async () => {
    const failing = await receiver('status=500');
    const gone = await receiver('status=410');
    const stuck = await subscribe(failing.url);
    const left = await subscribe(gone.url);
    await job('undeliverable');
    dispatch({
      ...settingsFor(failing),
      policy: { allowHttp: true, allowed: [`${failing.address}/32`, `${gone.address}/32`] },
      retry: { firstMs: 100, maxMs: 200, giveUpAfterMs: 1000 },
    });
    const disabled = await until(
      () => findSubscription(database.db, 'partner-a', stuck.id),
      (row) => row?.status === 'disabled',
    );
    expect(disabled).toMatchObject({ disabledReason: 'deliveries failed for 1 s', lastError: 'HTTP 500' });
    const count = failing.deliveries.length;
    expect(count).toBeGreaterThanOrEqual(3);
    const goneRow = await until(
      () => findSubscription(database.db, 'partner-a', left.id),
      (row) => row?.status === 'disabled',
    );
    expect(goneRow).toMatchObject({ disabledReason: 'the receiver answered 410 Gone', lastError: 'HTTP 410' });
    expect(gone.deliveries).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(failing.deliveries).toHaveLength(count);
  },
);

inNamespaces(
  'two dispatchers never deliver one subscription at once, and it stays in feed order, each event once',
  async () => {
    const target = await receiver('slow=60');
    const { secret } = await subscribe(target.url);
    for (let i = 0; i < 20; i++) await job(`job ${i}`);
    dispatch(settingsFor(target));
    dispatch(settingsFor(target));
    await target.waitFor(20);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.deliveries.every((delivery) => delivery.concurrent === 1)).toBe(true);
    const ids = target.deliveries.map((delivery) => verified(delivery, secret).sequence);
    expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
    expect(ids).toHaveLength(20);
  },
);

inNamespaces(
  'a dispatcher that died holding a lease loses nothing: another delivers once the lease expires',
  async () => {
    const target = await receiver();
    const { secret } = await subscribe(target.url);
    await job('held');
    await sequencePendingChanges(database.db);
    const [claimed] = await claimDue(database.db, 'a-dispatcher-that-died', 1500, 10);
    expect(claimed).toBeDefined();
    const started = Date.now();
    dispatch(settingsFor(target));
    await target.waitFor(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(verified(target.deliveries[0]!, secret).type).toBe('job.updated');
  },
);

inNamespaces(
  'a replay while the dispatcher waits, caught up, takes effect before its next delivery: nothing from the old position follows',
  async () => {
    const target = await receiver();
    const { id, secret } = await subscribe(target.url);
    const first = await job('first');
    dispatch(settingsFor(target));
    await target.waitFor(1);
    // Caught up and holding the lease, waiting for the feed to grow.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await replayFrom(database.db, 'partner-a', id, 0)).toMatchObject({ id });
    const second = await job('second');
    await target.waitFor(3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const seen = target.deliveries.map((delivery) => verified(delivery, secret));
    expect(seen.map((event) => (event.data as { id: string }).id)).toEqual([first, first, second]);
  },
);

test('position writes of many walks go together, and a walk whose lease was cleared or claimed again meanwhile is refused without touching its row', async () => {
  for (const n of [1, 2, 3]) await subscribe(`https://receiver-${n}.example/hook`);
  await job('held');
  await sequencePendingChanges(database.db);
  const claimed = await claimDue(database.db, 'holder', 60_000, 10);
  expect(claimed).toHaveLength(3);
  const [, replayed, reclaimed] = claimed;
  // The same holder's name, a newer claim: only the generation tells the two walks apart.
  await database.query(
    'update webhook_subscriptions set lease_expires_at = utc_timestamp(3) - interval 1 second where id = ?',
    [webhookSubscriptions.id.mapToDriverValue(reclaimed!.id)],
  );
  const [again] = await claimDue(database.db, 'holder', 60_000, 10);
  expect(again).toMatchObject({ id: reclaimed!.id, generation: reclaimed!.generation + 1 });
  await replayFrom(database.db, 'partner-a', replayed!.id, 0);
  const seq = claimed[0]!.position + 1;
  const lost = await recordProgress(
    database.db,
    claimed.map((lease) => ({ lease, position: seq, delivered: true, release: false })),
    [],
    60_000,
  );
  expect([...lost].sort()).toEqual([replayed!.id, reclaimed!.id].sort());
  const rows = await Promise.all(claimed.map(({ id }) => findSubscription(database.db, 'partner-a', id)));
  expect(Object.fromEntries(rows.map((row) => [row!.id, row!.position]))).toEqual({
    [claimed[0]!.id]: seq,
    [replayed!.id]: 0,
    [reclaimed!.id]: claimed[0]!.position,
  });
});

test('the shared feed window is the feed as it is now: a job changed again appears once, at its new position', async () => {
  const window = feedWindow(database.db, () => signingKey(database.db));
  await window.refresh();
  const [a, b] = [await job('A'), await job('B')];
  await sequencePendingChanges(database.db);
  await window.refresh();
  await database.query('update jobs set title = ? where id = ?', [
    'A, renamed',
    Buffer.from(a.replace(/-/g, ''), 'hex'),
  ]);
  await sequencePendingChanges(database.db);
  await window.refresh();
  const feed = await readChanges(database.db, 0, 100);
  const fromWindow = (await window.after(0, 100)).map(
    (event) => JSON.parse(event.body) as { data: { id: string; title: string } },
  );
  expect(fromWindow.map((event) => [event.data.id, event.data.title])).toEqual([
    [b, 'B'],
    [a, 'A, renamed'],
  ]);
  expect(fromWindow.map((event) => event.data)).toEqual(JSON.parse(JSON.stringify(feed.entries)));
});

test("an event's time is when its change was written, in UTC, whatever the writer's session time zone", async () => {
  const a = await job('A');
  const before = Date.now();
  // A plain SQL client whose session is in UTC+05:00 writes the change.
  const client = await mysql.createConnection(connectionOptions(database.url));
  await client.query("set time_zone = '+05:00'");
  await client.query("update jobs set title = 'A, renamed' where id = ?", [Buffer.from(a.replace(/-/g, ''), 'hex')]);
  await client.end();
  await sequencePendingChanges(database.db);
  const [event] = await readChangeEvents(database.db, 0, 10);
  expect(event!.entry).toMatchObject({ id: a, title: 'A, renamed' });
  expect(Math.abs(event!.changedAt.getTime() - before)).toBeLessThan(5_000);
});

inNamespaces('after a rotation every delivery verifies with the new secret and with the old one', async () => {
  const target = await receiver();
  const { id, secret: old } = await subscribe(target.url);
  await job('before');
  dispatch(settingsFor(target));
  await target.waitFor(1);
  await until(
    () => findSubscription(database.db, 'partner-a', id),
    (row) => row?.lastDeliveredAt != null,
  );
  expect(() => verified(target.deliveries[0]!, old)).not.toThrow();
  const rotated = newSecret();
  expect(
    await rotateSecret(database.db, 'partner-a', id, {
      secret: encryptSecret(secretsKey, rotated),
      overlapMs: 24 * 3600_000,
    }),
  ).toMatchObject({ olderExpiresAt: null });
  await job('after');
  await target.waitFor(2);
  const after = target.deliveries[1]!;
  expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(2);
  expect(verified(after, rotated).data.title).toBe('after');
  expect(verified(after, old).data.title).toBe('after');
  expect(() => verified(after, newSecret())).toThrow();
});

inNamespaces(
  'an address the policy does not allow is never contacted, and a redirect to loopback is not followed',
  async () => {
    const target = await receiver();
    const hits: string[] = [];
    const inside = http.createServer((req, res) => {
      hits.push(req.url!);
      res.end();
    });
    await new Promise<void>((resolve) => inside.listen(0, '127.0.0.1', resolve));
    const insidePort = (inside.address() as AddressInfo).port;
    const redirecting = await receiver(`redirect=http://127.0.0.1:${insidePort}/internal`);
    try {
      const notAllowed = await subscribe(target.url);
      const redirected = await subscribe(redirecting.url);
      await job('guarded');
      dispatch(settingsFor(redirecting));
      const refused = await until(
        () => findSubscription(database.db, 'partner-a', notAllowed.id),
        (row) => row?.lastError != null,
      );
      expect(refused!.lastError).toBe('connection failed');
      const bounced = await until(
        () => findSubscription(database.db, 'partner-a', redirected.id),
        (row) => row?.lastError != null,
      );
      expect(bounced!.lastError).toBe('HTTP 302');
      expect(target.deliveries).toHaveLength(0);
      expect(hits).toEqual([]);
    } finally {
      inside.close();
    }
  },
);

inNamespaces(
  'an answer that never comes is a timeout; a 2xx answer past 64 KB is not read further and is not a delivery',
  async () => {
    const hanging = await receiver('hang');
    const huge = await receiver('huge');
    const slow = await subscribe(hanging.url);
    const big = await subscribe(huge.url);
    await job('timed');
    dispatch({
      ...settingsFor(hanging),
      policy: { allowHttp: true, allowed: [`${hanging.address}/32`, `${huge.address}/32`] },
      timeoutMs: 500,
      leaseMs: 1000,
    });
    const timedOut = await until(
      () => findSubscription(database.db, 'partner-a', slow.id),
      (row) => row?.lastError != null,
    );
    expect(timedOut!.lastError).toBe('timeout');
    const tooLarge = await until(
      () => findSubscription(database.db, 'partner-a', big.id),
      (row) => row?.lastError != null,
    );
    expect(tooLarge).toMatchObject({ lastError: 'answer too large', lastDeliveredAt: null });
  },
);

inNamespaces(
  "a delivery that fails after an operator disabled its subscription leaves the operator's reason, and its log line says the lease was lost, not that it will be retried",
  async () => {
    const hanging = await receiver('hang');
    const { id } = await subscribe(hanging.url);
    await job('stopped');
    // A timeout well past the lease read below, so a loaded machine cannot fail the POST before the disable lands.
    dispatch({ ...settingsFor(hanging), timeoutMs: 5000, leaseMs: 10_000 });
    // Claimed: a walk sends its first event without looking at the lease again, so the disable lands before the failure either way.
    await until(
      () =>
        select(database.db, { owner: webhookSubscriptions.leaseOwner }, (query) =>
          query.from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id)),
        ),
      ([row]) => row?.owner != null,
    );
    expect(await disableSubscription(database.db, id, 'stopped by an operator')).toBe(true);
    const failed = await until(
      () => Promise.resolve(logs.filter((line) => line.includes(id) && /webhook delivery failed/.test(line))),
      (lines) => lines.length > 0,
    );
    expect(failed).toEqual([expect.stringContaining('after the lease was lost')]);
    expect(await findSubscription(database.db, 'partner-a', id)).toMatchObject({
      status: 'disabled',
      disabledReason: 'stopped by an operator',
      lastError: null,
      failingSince: null,
    });
  },
);

inNamespaces(
  "log lines name the subscription and never a secret; metrics count outcomes and show each subscription's lag",
  async () => {
    const target = await receiver('failfirst=1');
    const { id, secret } = await subscribe(target.url);
    await job('observed');
    const metrics = createDispatcherMetrics();
    dispatch(settingsFor(target), metrics);
    await target.waitFor(2);
    await until(
      () => findSubscription(database.db, 'partner-a', id),
      (row) => row?.lastError === null,
    );
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/webhook_delivery_attempts_total\{outcome="delivered"\} 1/);
    expect(text).toMatch(/webhook_delivery_attempts_total\{outcome="failed"\} 1/);
    expect(text).toContain(`webhook_subscription_lag_seconds{subscription="${id}",status="active"} 0`);
    expect(text).toMatch(new RegExp(`webhook_subscription_position\\{subscription="${id}",status="active"\\} [1-9]`));
    const lines = logs.filter((line) => line.includes(id));
    expect(lines.some((line) => /webhook delivery failed/.test(line))).toBe(true);
    const all = logs.join('\n');
    expect(all).not.toContain(secret);
    expect(all).not.toContain(secret.slice('whsec_'.length));
  },
);
