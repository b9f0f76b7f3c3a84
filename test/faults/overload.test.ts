import { createDatabase, type DatabaseHandle } from '../../db/client';
import { createApp } from '../../service/app';
import { createLogger } from '../../service/logger';
import { json, reader, writer } from '../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { call, serve, type Served } from '../helpers/http';
import { expectRetryLater, job, lockTable, sleep, timed } from './support';

// One turn and one waiting place: the smallest service that can be overloaded on purpose.
// The query limit is long, so it is the queue that answers here, not a timed-out query.
const LIMITS = { dbPoolSize: 1, dbQueueLimit: 1, dbQueryTimeoutMs: 10000 };

describe('overload: a bounded wait queue in front of the pool', () => {
  let database: TestDatabase;
  let handle: DatabaseHandle;
  let served: Served;

  beforeAll(async () => {
    database = await freshDatabase('faults_overload');
    handle = createDatabase(database.url, {
      connectionLimit: LIMITS.dbPoolSize,
      queryTimeoutMs: LIMITS.dbQueryTimeoutMs,
    });
    served = await serve(createApp({ db: handle.db, config: LIMITS, logger: createLogger('silent') }).callback());
  });
  afterAll(async () => {
    await served.close();
    await handle.close();
    await database.close();
  });

  const list = (init: RequestInit = {}) => call(`${served.url}/api/v1/jobs`, { headers: reader, ...init });
  const byId = (init: RequestInit = {}) =>
    call(`${served.url}/api/v1/jobs/0190f5d8-0000-7000-8000-000000000000`, { headers: reader, ...init });
  const create = (title: string, init: RequestInit = {}) =>
    call(`${served.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json }, body: job(title), ...init });

  test('a full queue is a 503 with Retry-After at once, and a request abandoned while it waited never runs', async () => {
    const lock = await lockTable(database.name, 'jobs');
    try {
      // The one turn: a read stuck behind the lock (one statement, where a listing runs two).
      const running = byId();
      await lock.waiters(1);
      // The one waiting place: a read whose client gives up while it waits.
      const giveUp = new AbortController();
      const abandoned = byId({ signal: giveUp.signal }).catch((error: Error) => error.name);
      await sleep(200);

      // Queue full: answered at once (not after the 10 s a waiter may wait), while the table is still locked.
      const refused = await timed(list());
      expectRetryLater(refused);
      expect(refused.ms).toBeLessThan(LIMITS.dbQueryTimeoutMs / 2);
      // Readiness says so too, so a balancer sends new work elsewhere meanwhile.
      const ready = await call(`${served.url}/readyz`);
      expect([ready.status, ready.headers.get('retry-after'), ready.body]).toEqual([
        503,
        '5',
        { error: 'Service cannot take more work right now' },
      ]);

      giveUp.abort();
      expect(await abandoned).toBe('AbortError');
      await sleep(100);
      // The running read ends (interrupted, the lock stays): the turn is free again. Had the
      // abandoned read taken it, its query would now be waiting for the lock.
      await lock.interruptWaiters();
      expectRetryLater(await running);
      await sleep(300);
      expect(await lock.waiting()).toEqual([]);
    } finally {
      await lock.release();
    }
    // And the service serves normally afterwards.
    expect((await call(`${served.url}/readyz`)).status).toBe(200);
    expect((await list()).status).toBe(200);
    expect((await create('After the rush')).status).toBe(201);
  });

  test('a queued request is served in turn when the one ahead finishes', async () => {
    const lock = await lockTable(database.name, 'jobs');
    const first = list();
    await lock.waiters(1);
    const second = create('Waited its turn');
    await sleep(200);
    await lock.release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(201);
  });
});

describe('overload with read replicas', () => {
  // One connection per server and no waiting place: the turns are DB_POOL_SIZE x (1 + replicas).
  // The replica pools are stood in for by a primary pool of that size; only the count matters here.
  const REPLICAS = {
    dbPoolSize: 1,
    dbQueueLimit: 0,
    dbQueryTimeoutMs: 10000,
    databaseReadUrls: ['mysql://ro@replica-1:3306/jobs', 'mysql://ro@replica-2:3306/jobs'],
  };
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase('faults_overload_replicas');
  });
  afterAll(() => database.close());

  test('one turn per connection of every server: three run with two replicas, the fourth is a 503 at once', async () => {
    const handle = createDatabase(database.url, { connectionLimit: 3, queryTimeoutMs: REPLICAS.dbQueryTimeoutMs });
    const served = await serve(
      createApp({ db: handle.db, config: REPLICAS, logger: createLogger('silent') }).callback(),
    );
    const byId = () => call(`${served.url}/api/v1/jobs/0190f5d8-0000-7000-8000-000000000000`, { headers: reader });
    const lock = await lockTable(database.name, 'jobs');
    const running = [byId(), byId(), byId()];
    try {
      await lock.waiters(3);
      const refused = await timed(byId());
      expectRetryLater(refused);
      expect(refused.ms).toBeLessThan(REPLICAS.dbQueryTimeoutMs / 2);
    } finally {
      await lock.release();
    }
    try {
      // The three were running, not refused: each finds no such job once the lock is gone.
      expect((await Promise.all(running)).map((res) => res.status)).toEqual([404, 404, 404]);
    } finally {
      await served.close();
      await handle.close();
    }
  });
});
