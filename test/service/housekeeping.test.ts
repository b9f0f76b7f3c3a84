/**
 * The service's periodic task (service/housekeeping.ts) does what requests no longer do: it folds
 * the counters' connection rows (a backlog larger than a batch in one run) and deletes expired
 * idempotency keys. A failing run is counted in jobs_housekeeping_failures_total each time and
 * logged once per streak, by its code (no SQL, no values); its recovery once.
 */
import type { RowDataPacket } from 'mysql2/promise';
import { FOLD_BATCH } from '../../db/jobs/counters';
import { insertInBatches } from '../../db/seed';
import { generateJobs } from '../../db/seed-data';
import { startHousekeeping, type Housekeeping } from '../../service/housekeeping';
import { createLogger } from '../../service/logger';
import { createMetrics } from '../../service/metrics';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { memoryLog } from '../helpers/service';

let database: TestDatabase;
let housekeeping: Housekeeping | undefined;
beforeAll(async () => {
  database = await freshDatabase('housekeeping');
});
afterEach(() => housekeeping?.stop());
afterAll(() => database.close());

const count = async (sql: string) => {
  const [[row]] = await database.pool.query<RowDataPacket[]>(sql);
  return Number(row!.n);
};
const unfolded = () => count('select count(*) as n from job_counts where slot <> 0');

async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await check()).toBe(true);
}

test('connection rows are folded without any read, more than a batch of them; expired keys go, live ones stay', async () => {
  // Each job in a department of its own: a connection row each, more than one batch.
  const jobs = generateJobs({ count: FOLD_BATCH + 20, seed: 5, newest: new Date('2026-05-01T00:00:00Z') }).map(
    (job, i) => ({ ...job, status: 'active' as const, department: `Backlog ${i}` }),
  );
  await insertInBatches(database.db, jobs);
  await database.query(
    `insert into idempotency_keys (consumer_id, idempotency_key, request_hash, created_at, expires_at) values
     ('c', 'expired', 'h', utc_timestamp(3) - interval 2 day, utc_timestamp(3) - interval 1 day),
     ('c', 'live', 'h', utc_timestamp(3), utc_timestamp(3) + interval 1 day)`,
  );
  expect(await unfolded()).toBeGreaterThan(FOLD_BATCH);
  const logs: string[] = [];
  housekeeping = startHousekeeping({ db: database.db, logger: createLogger('info', memoryLog(logs)), pace: 0.01 });
  await eventually(async () => (await unfolded()) === 0);
  await eventually(
    async () => (await count("select count(*) as n from idempotency_keys where idempotency_key = 'expired'")) === 0,
  );
  expect(await count("select count(*) as n from idempotency_keys where idempotency_key = 'live'")).toBe(1);
  expect(logs).toEqual([]);
});

test('a failing task is counted at every run, logged once by its code, and its recovery once', async () => {
  const logs: string[] = [];
  const metrics = createMetrics();
  housekeeping = startHousekeeping({
    db: database.db,
    logger: createLogger('info', memoryLog(logs)),
    failed: (task) => metrics.observeHousekeepingFailure(task),
    pace: 0.05,
  });
  const failures = async () =>
    (await metrics.registry.getSingleMetric('jobs_housekeeping_failures_total')!.get()).values.find(
      (value) => value.labels.task === 'fold counters',
    )?.value ?? 0;
  await database.query('rename table job_counts to job_counts_away');
  try {
    await eventually(async () => (await failures()) >= 3);
  } finally {
    await database.query('rename table job_counts_away to job_counts');
  }
  await eventually(() => Promise.resolve(logs.some((line) => line.includes('works again'))));
  const folds = logs.filter((line) => line.includes('fold counters'));
  expect(folds).toHaveLength(2);
  expect(JSON.parse(folds[0]!)).toMatchObject({ level: 40, task: 'fold counters', code: 'ER_NO_SUCH_TABLE' });
  expect(folds[0]).not.toMatch(/select|job_counts|slot/i);
  expect(JSON.parse(folds[1]!)).toMatchObject({ level: 30, task: 'fold counters' });
});
