/**
 * Fenced leases: a dispatcher stalled past its lease (SIGSTOP) while another takes over, and owner
 * actions landing while a POST is in flight, leave the stale walk sending nothing and writing nothing;
 * the receiver never sees a first delivery out of order. Receivers on loopback, allowed by name.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { sequencePendingChanges } from '../../db/jobs/change-numbering';
import { storeJob } from '../../db/jobs/job-store';
import { createSubscription, disableSubscription, replayFrom, rotateSecret } from '../../db/webhooks/subscriptions';
import { createLogger } from '../../service/logger';
import { startDispatcher, type Dispatcher } from '../../dispatcher/dispatcher';
import { encryptSecret, newSecret } from '../../service/webhooks/secrets';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { memoryLog } from '../helpers/service';
import { MINIMAL_JOB } from '../helpers/job-bodies';
import { spawnDispatcher } from './dispatcher-process';

const secretsKey = randomBytes(32);
const settings = { LEASE: 2000, TIMEOUT: 1000 };
let database: TestDatabase;
let server: http.Server;
const children: ChildProcess[] = [];
const running: Dispatcher[] = [];

interface Arrival {
  at: number;
  sequence: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}
const arrivals: Arrival[] = [];
let onArrival: ((arrival: Arrival) => Promise<void> | void) | undefined;
const answerAfterMs = 200;

beforeEach(async () => {
  database = await freshDatabase('webhook_fencing');
  arrivals.splice(0);
  onArrival = undefined;
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const arrival = {
        at: Date.now(),
        sequence: (JSON.parse(body) as { sequence: number }).sequence,
        headers: req.headers,
        body,
      };
      arrivals.push(arrival);
      // The owner's action lands while this POST is in flight.
      void Promise.resolve(onArrival?.(arrival)).then(() => setTimeout(() => res.writeHead(204).end(), answerAfterMs));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(running.splice(0).map((one) => one.stop()));
  server.closeAllConnections();
  server.close();
  await database.close();
});

const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dispatcherProcess = () =>
  spawnDispatcher(
    { databaseUrl: database.url, secretsKey, leaseMs: settings.LEASE, timeoutMs: settings.TIMEOUT },
    children,
  );

async function until(done: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms (${arrivals.length} arrivals)`);
    await sleep(50);
  }
}

async function subscribeWithBacklog(jobs: number) {
  const secret = newSecret();
  const created = await createSubscription(
    database.db,
    { consumerId: 'partner-a', url: url(), description: null, secret: encryptSecret(secretsKey, secret) },
    5,
  );
  if (typeof created === 'string') throw new Error(created);
  for (let i = 0; i < jobs; i++)
    await storeJob(
      database.db,
      { ...MINIMAL_JOB, title: `job ${i}`, status: 'active', requirements: [], responsibilities: [] } as never,
      'writer',
    );
  await sequencePendingChanges(database.db);
  const [feed] = await database.query<Array<{ head: number }>>('select max(seq) as head from job_changes');
  return { id: created.id, secret, head: Number(feed!.head) };
}

/** What the stale walk could have written: the row's delivery state and the attempts log. */
async function written(id: string) {
  const [row] = await database.query<Array<Record<string, unknown>>>(
    'select position, lease_generation, lease_owner, attempts, last_error, status from webhook_subscriptions where id = unhex(replace(?, "-", ""))',
    [id],
  );
  const [count] = await database.query<Array<{ n: number }>>('select count(*) as n from webhook_attempts');
  return { row: row!, attempts: Number(count!.n) };
}

/** Each event's first arrival, in arrival order: it must be ascending (repeats may come later, never a new event early). */
const firstArrivals = () =>
  arrivals.map((one) => one.sequence).filter((sequence, i, all) => all.indexOf(sequence) === i);
const ascending = (list: number[]) => list.every((value, i) => i === 0 || value > list[i - 1]!);

test('a dispatcher stopped past its lease while another takes over sends nothing and writes nothing when it resumes', async () => {
  const { id, head } = await subscribeWithBacklog(30);
  const stalled = dispatcherProcess();
  await until(() => arrivals.length >= 4);
  // Most likely mid-POST: the receiver answers in 200 ms and the walk sends back to back.
  stalled.kill('SIGSTOP');
  const stoppedWith = arrivals.length;
  await sleep(100);
  dispatcherProcess();
  // Stopped inside a transaction, it holds the subscription's row until MariaDB ends it (10 s idle, db/deadlines.ts).
  await until(
    async () => arrivals.some((one) => one.sequence === head) && (await written(id)).row.lease_owner === null,
    40_000,
  );
  const before = await written(id);
  const seen = arrivals.length;
  expect(seen).toBeGreaterThan(stoppedWith);
  stalled.kill('SIGCONT');
  await sleep(3 * settings.TIMEOUT);
  expect(arrivals.length).toBe(seen);
  expect(await written(id)).toEqual(before);
  expect(before.row.position).toBe(head);
  expect(ascending(firstArrivals())).toBe(true);
  expect(new Set(arrivals.map((one) => one.sequence)).size).toBe(30);
}, 90_000);

function dispatchHere(): void {
  running.push(
    startDispatcher({
      db: database.db,
      settings: {
        secretsKey,
        policy: { allowHttp: true, allowed: ['127.0.0.1/32'] },
        retry: { firstMs: 100, maxMs: 400, giveUpAfterMs: 60_000 },
        leaseMs: settings.LEASE,
        pollMs: 50,
        timeoutMs: settings.TIMEOUT,
        subscriptionLimit: 5,
      },
      logger: createLogger('warn', memoryLog([])),
    }),
  );
}

test('a rotation during a POST in flight: the stale walk sends nothing more, its position is not written, and every later delivery is signed with the new secret', async () => {
  const { id, secret } = await subscribeWithBacklog(8);
  const rotated = newSecret();
  let rotatedAt = Infinity;
  let inFlight = 0;
  onArrival = async (arrival) => {
    if (arrivals.length !== 3) return;
    inFlight = arrival.sequence;
    await rotateSecret(database.db, 'partner-a', id, {
      secret: encryptSecret(secretsKey, rotated),
      overlapMs: 3_600_000,
    });
    rotatedAt = Date.now();
  };
  dispatchHere();
  await until(() => new Set(arrivals.map((one) => one.sequence)).size === 8);
  const after = arrivals.filter((one) => one.at > rotatedAt);
  // The event in flight was not written as delivered (nor any other since the last flush): the next walk, with both secrets, sends it again.
  expect(after[0]!.sequence).toBeLessThanOrEqual(inFlight);
  expect(after.map((one) => one.sequence)).toContain(inFlight);
  for (const one of after) {
    expect(() => new Webhook(rotated).verify(one.body, one.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(secret).verify(one.body, one.headers as Record<string, string>)).not.toThrow();
  }
  expect(ascending(firstArrivals())).toBe(true);
}, 60_000);

test('a replay during a POST in flight: nothing past the event in flight is sent before the replay starts over', async () => {
  const { id } = await subscribeWithBacklog(8);
  let inFlight = 0;
  let first = 0;
  onArrival = async (arrival) => {
    if (arrivals.length === 1) first = arrival.sequence;
    if (arrivals.length !== 4) return;
    inFlight = arrival.sequence;
    expect(await replayFrom(database.db, 'partner-a', id, 0)).toMatchObject({ id });
  };
  dispatchHere();
  await until(() => arrivals.length >= 5 + 8 - 1);
  const sequences = arrivals.map((one) => one.sequence);
  expect(sequences[4]).toBe(first);
  expect(sequences.slice(0, 4).every((sequence) => sequence <= inFlight)).toBe(true);
  expect(ascending(firstArrivals())).toBe(true);
}, 60_000);

test('a disable during a POST in flight: nothing more is sent, and neither that delivery nor its attempt is written', async () => {
  const { id } = await subscribeWithBacklog(8);
  let inFlight = 0;
  onArrival = async (arrival) => {
    if (arrivals.length !== 3) return;
    inFlight = arrival.sequence;
    expect(await disableSubscription(database.db, id, 'stopped by an operator')).toBe(true);
  };
  dispatchHere();
  await until(() => arrivals.length >= 3);
  await sleep(3 * settings.TIMEOUT);
  expect(arrivals).toHaveLength(3);
  const { row } = await written(id);
  expect(row).toMatchObject({ status: 'disabled', lease_owner: null, last_error: null });
  expect(Number(row.position)).toBeLessThan(inFlight);
  expect(await database.query('select event_id from webhook_attempts where position = ?', [inFlight])).toEqual([]);
}, 60_000);
