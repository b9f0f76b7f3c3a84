/**
 * feed.restored: when the change feed starts a new history (a restore), every active subscription is
 * told at once, whatever its eventTypes and with no change following, before any change of that history:
 * once per subscription and history with two dispatchers running, the same id and body again when a
 * dispatcher was SIGKILLed mid-delivery. A subscription made after the restore is not told; one disabled
 * through it is told when enabled. Receivers on loopback, allowed by address.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startNewHistory } from '../../db/jobs/change-history';
import { storeJob } from '../../db/jobs/job-store';
import { listAttempts } from '../../db/webhooks/attempts';
import { createSubscription, disableSubscription, enableSubscription } from '../../db/webhooks/subscriptions';
import { createLogger } from '../../service/logger';
import { startDispatcher, type Dispatcher } from '../../dispatcher/dispatcher';
import { FeedRestoredEvent } from '../../service/webhooks/contract';
import { encryptSecret, newSecret } from '../../service/webhooks/secrets';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { memoryLog } from '../helpers/service';
import { MINIMAL_JOB } from '../helpers/job-bodies';
import { spawnDispatcher } from './dispatcher-process';

const secretsKey = randomBytes(32);
const LEASE_MS = 2000;
let database: TestDatabase;
let server: http.Server;
const children: ChildProcess[] = [];
const running: Dispatcher[] = [];
const logs: string[] = [];

interface Arrival {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  event: { id: string; type: string; history?: string; sequence?: number };
}
const arrivals: Arrival[] = [];
/** Answers an arrival; by default 204 at once. */
let answer: (arrival: Arrival, res: http.ServerResponse) => void = (_arrival, res) => res.writeHead(204).end();

beforeEach(async () => {
  database = await freshDatabase('webhook_restored');
  arrivals.splice(0);
  answer = (_arrival, res) => res.writeHead(204).end();
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const arrival = { path: req.url ?? '', headers: req.headers, body, event: JSON.parse(body) as Arrival['event'] };
      arrivals.push(arrival);
      answer(arrival, res);
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

const url = (name: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/${name}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const at = (name: string) => arrivals.filter((one) => one.path === `/${name}`);
const restoredAt = (name: string) => at(name).filter((one) => one.event.type === 'feed.restored');

async function until(done: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline)
      throw new Error(`not within ${timeoutMs} ms: ${JSON.stringify(arrivals.map((one) => [one.path, one.event.id]))}`);
    await sleep(50);
  }
}

async function subscribe(name: string, eventTypes: string | null = null) {
  const secret = newSecret();
  const created = await createSubscription(
    database.db,
    {
      consumerId: 'partner-a',
      url: url(name),
      description: null,
      eventTypes,
      secret: encryptSecret(secretsKey, secret),
    },
    5,
  );
  if (typeof created === 'string') throw new Error(created);
  return { id: created.id, secret };
}

const job = (title: string) =>
  storeJob(
    database.db,
    { ...MINIMAL_JOB, title, status: 'active', requirements: [], responsibilities: [] } as never,
    'writer',
  );

function dispatchHere(): void {
  running.push(
    startDispatcher({
      db: database.db,
      settings: {
        secretsKey,
        policy: { allowHttp: true, allowed: ['127.0.0.1/32'] },
        retry: { firstMs: 100, maxMs: 400, giveUpAfterMs: 60_000 },
        leaseMs: LEASE_MS,
        pollMs: 50,
        timeoutMs: 1000,
        subscriptionLimit: 5,
      },
      logger: createLogger('warn', memoryLog(logs)),
    }),
  );
}

const dispatcherProcess = () =>
  spawnDispatcher({ databaseUrl: database.url, secretsKey, leaseMs: LEASE_MS, timeoutMs: 1000 }, children);

const toldOf = async (id: string) => {
  const [row] = await database.query<Array<{ history: string | null }>>(
    'select history from webhook_subscriptions where id = unhex(replace(?, "-", ""))',
    [id],
  );
  return row?.history ?? null;
};

test('every active subscription is told of a new history at once, before its changes and whatever it chose, once with two dispatchers; one made after is not, one disabled is when enabled', async () => {
  const all = await subscribe('all');
  const removals = await subscribe('removals', 'job.removed');
  const paused = await subscribe('paused');
  await disableSubscription(database.db, paused.id, 'by an operator');
  dispatchHere();
  dispatchHere();
  await job('before the restore');
  await until(() => at('all').length === 1);

  const history = await startNewHistory(database.db);
  // No change follows: told all the same.
  await until(() => restoredAt('all').length === 1 && restoredAt('removals').length === 1);
  await job('after the restore');
  await until(() => at('all').length === 3);
  const late = await subscribe('late');
  await job('after the late subscription');
  await enableSubscription(database.db, 'partner-a', paused.id);
  await until(() => at('late').length === 1 && at('paused').length === 4 && at('all').length === 4);
  await sleep(1500);

  const sent = restoredAt('all')[0]!;
  const event = new Webhook(all.secret).verify(sent.body, sent.headers as Record<string, string>);
  expect(FeedRestoredEvent.parse(event)).toEqual({
    id: `evt_${history.id}_restored`,
    type: 'feed.restored',
    history: history.id,
    sequence: history.firstSeq - 1,
    timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as string,
    data: { history: history.id, firstSequence: history.firstSeq },
  });
  expect(sent.headers['webhook-id']).toBe(`evt_${history.id}_restored`);
  // Once each, the same body to every subscription (signed with each one's secret).
  for (const name of ['all', 'removals', 'paused'])
    expect(restoredAt(name).map((one) => one.body)).toEqual([sent.body]);
  expect(
    new Webhook(removals.secret).verify(
      restoredAt('removals')[0]!.body,
      restoredAt('removals')[0]!.headers as Record<string, string>,
    ),
  ).toBeTruthy();
  // Before any change of the new history, after the old one's; a subscription made in the new history is never told.
  const order = (name: string) =>
    at(name).map((one) => (one.event.type === 'feed.restored' ? 'restored' : one.event.history));
  const [old, current] = [at('all')[0]!.event.history, history.id];
  expect(order('all')).toEqual([old, 'restored', current, current]);
  expect(order('paused')).toEqual([old, 'restored', current, current]);
  expect(order('removals')).toEqual(['restored']);
  expect(order('late')).toEqual([current]);
  for (const one of [all, removals, paused, late]) expect(await toldOf(one.id)).toBe(history.id);
  const attempts = await listAttempts(database.db, 'partner-a', removals.id);
  expect(attempts).toEqual([
    expect.objectContaining({ eventId: `evt_${history.id}_restored`, position: null, status: 204, error: null }),
  ]);
  expect(logs.join('\n')).not.toMatch(/"level":50/);
}, 45_000);

test('a dispatcher SIGKILLed while its feed.restored is in flight: the next one sends the same id and body, then never again', async () => {
  const one = await subscribe('hooks');
  let held: http.ServerResponse | undefined;
  // The first feed.restored is never answered: its dispatcher is killed meanwhile.
  answer = (arrival, res) => {
    if (arrival.event.type === 'feed.restored' && !held) held = res;
    else res.writeHead(204).end();
  };
  const first = dispatcherProcess();
  const history = await startNewHistory(database.db);
  await until(() => held !== undefined, 30_000);
  first.kill('SIGKILL');
  held!.destroy();
  dispatcherProcess();
  await until(() => restoredAt('hooks').length === 2, 30_000);
  await until(async () => (await toldOf(one.id)) === history.id);
  await job('after the restore');
  await until(() => at('hooks').length === 3);
  await sleep(1000);

  const [sent, again] = restoredAt('hooks');
  expect(again!.headers['webhook-id']).toBe(sent!.headers['webhook-id']);
  expect(again!.body).toBe(sent!.body);
  expect(at('hooks').map((arrival) => arrival.event.type)).toEqual(['feed.restored', 'feed.restored', 'job.updated']);
  expect(at('hooks')[2]!.event.history).toBe(history.id);
}, 55_000);
