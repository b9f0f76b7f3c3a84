import { createDatabase, type DatabaseHandle } from '../../db/client';
import { sessionLimitsSql } from '../../db/deadlines';
import { createApp } from '../../service/app';
import { createLogger } from '../../service/logger';
import { json, reader, writer } from '../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { call, serve, type Served } from '../helpers/http';
import { testServerAddress } from '../helpers/server';
import { memoryLog } from '../helpers/service';
import { startRelay, type Relay } from './relay';
import { expectRetryLater, job, lockTable, statusOnceRecovered, timed } from './support';

// Small limits so the suite stays fast; production defaults are in service/config.ts.
const QUERY_TIMEOUT_MS = 500; // the client gives up 1 s later (db/deadlines.ts)
const READY_TIMEOUT_MS = 500; // leaves half a second of the 1 s for a busy machine
const POOL_SIZE = 4;
// What "prompt" means here: well inside the gateway's 30 s read timeout, with room for a slow machine.
const PROMPT_MS = 5000;

describe('the service over a sick database link', () => {
  let database: TestDatabase;
  let relay: Relay;
  let handle: DatabaseHandle;
  let served: Served;
  let jobUrl: string;
  const logs: string[] = [];

  beforeAll(async () => {
    database = await freshDatabase('faults_link');
    relay = await startRelay(testServerAddress());
    handle = createDatabase(relay.via(database.url), {
      connectionLimit: POOL_SIZE,
      connectTimeoutMs: 500,
      queryTimeoutMs: QUERY_TIMEOUT_MS,
    });
    const app = createApp({
      db: handle.db,
      config: { dbPoolSize: POOL_SIZE, dbQueryTimeoutMs: QUERY_TIMEOUT_MS, readyTimeoutMs: READY_TIMEOUT_MS },
      logger: createLogger('info', memoryLog(logs)),
    });
    served = await serve(app.callback());
    const created = await call(`${served.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...writer, ...json },
      body: job('Existing'),
    });
    expect(created.status).toBe(201);
    jobUrl = `${served.url}${created.headers.get('location')}`;
  });
  afterEach(() => relay.set('forward'));
  afterAll(async () => {
    await served.close();
    await handle.close();
    await relay.close();
    await database.close();
  });

  const list = () => call(`${served.url}/api/v1/jobs`, { headers: reader });
  // A create is a draft, visible only to the consumer that made it.
  const one = () => call(jobUrl, { headers: writer });
  const create = (title: string) =>
    call(`${served.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json }, body: job(title) });
  const ready = () => call(`${served.url}/readyz`);

  /** Every connection of the pool open and used once, so the fault hits connections in use. */
  async function warm(): Promise<void> {
    const responses = await Promise.all([list(), one(), list()]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await statusOnceRecovered(`${served.url}/readyz`, {}, 5000)).toBe(200);
  }

  test.each([
    ['black-holed (nothing answers)', 'blackhole' as const],
    ['reset (connections refused and cut)', 'reset' as const],
  ])(
    'link %s: prompt 503 + Retry-After, /readyz not ready within a second, recovery once the link returns',
    async (_label, mode) => {
      await warm();
      relay.set(mode);

      // Requests on the pool's existing connections, then on new ones the link never lets through.
      for (let round = 0; round < 2; round++) {
        const [listed, got, created, probed] = await Promise.all([
          timed(list()),
          timed(one()),
          timed(create(`Lost ${mode}`)),
          timed(ready()),
        ]);
        for (const response of [listed, got, created]) {
          expectRetryLater(response);
          expect(response.ms).toBeLessThan(PROMPT_MS);
        }
        expect(probed.status).toBe(503);
        expect(probed.ms).toBeLessThan(1000);
      }

      relay.set('forward');
      expect(await statusOnceRecovered(`${served.url}/api/v1/jobs`, { headers: reader }, 5000)).toBe(200);
      expect((await one()).status).toBe(200);
      expect(await statusOnceRecovered(`${served.url}/readyz`, {}, 5000)).toBe(200);
      expect((await create(`After ${mode}`)).status).toBe(201);
    },
  );

  test('a table locked by another client for longer than the limit: 503 while it is still locked, and the server stopped the statements', async () => {
    await warm();
    const lock = await lockTable(database.name, 'jobs');
    try {
      const [listed, created] = await Promise.all([timed(list()), timed(create('Blocked by a lock'))]);
      for (const response of [listed, created]) {
        expectRetryLater(response);
        expect(response.ms).toBeLessThan(PROMPT_MS);
      }
      // The server's own limit answered (not only our client's deadline): MariaDB's error 1969.
      expect(logs.filter((line) => line.includes('ER_STATEMENT_TIMEOUT')).length).toBeGreaterThanOrEqual(2);
      // The database itself still answers, so the service stays ready.
      expect(await statusOnceRecovered(`${served.url}/readyz`, {}, 5000)).toBe(200);
    } finally {
      await lock.release();
    }
    // The interrupted insert stored nothing, and the same connections serve again.
    expect(await database.query('SELECT id FROM jobs WHERE title = ?', ['Blocked by a lock'])).toEqual([]);
    expect((await list()).status).toBe(200);
  });

  test('every pool connection carries the server-side statement limit', async () => {
    const [rows] = (await handle.pool.query(
      'SELECT @@SESSION.max_statement_time AS seconds, @@SESSION.lock_wait_timeout AS lockWait, @@SESSION.idle_transaction_timeout AS idle',
    )) as unknown as [Array<{ seconds: number; lockWait: number; idle: number }>];
    expect(rows[0]).toEqual({ seconds: QUERY_TIMEOUT_MS / 1000, lockWait: 1, idle: 2 });
  });

  test('a transaction its process left idle (stopped mid-work) is ended by the server after 2 s, and its row locks with it', async () => {
    const lockRow = 'SELECT last_seq FROM job_change_sequence WHERE id = 1 FOR UPDATE';
    const stalled = await handle.pool.getConnection();
    await stalled.query('START TRANSACTION');
    await stalled.query(lockRow);
    // Meanwhile another writer waits out its own limit; once the stalled one is ended, it gets the row.
    const other = await handle.pool.getConnection();
    await expect(other.query(lockRow)).rejects.toThrow(/max_statement_time|Lock wait timeout/);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await expect(other.query(lockRow)).resolves.toBeDefined();
    other.release();
    await expect(stalled.query('SELECT 1')).rejects.toThrow();
    stalled.destroy();
  });
});

describe('the statement limit on each server', () => {
  // MariaDB is what the tests run on (the test above shows it applies); MySQL 8.4 is supported untested, so its part is pinned here.
  test('one statement: max_statement_time in seconds for MariaDB, max_execution_time in milliseconds (SELECT only) for MySQL, lock waits for both', () => {
    expect(sessionLimitsSql(2500)).toBe(
      'SET SESSION lock_wait_timeout = 3, innodb_lock_wait_timeout = 3 /*!50708 , max_execution_time = 2500 */ /*M!100101 , max_statement_time = 2.500 */ /*M!100300 , idle_transaction_timeout = 6 */',
    );
  });
});
