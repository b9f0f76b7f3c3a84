/**
 * When listings fold the counters' connection rows (foldSoon, db/jobs/counters.ts): at
 * most once per FOLD_INTERVAL_MS for each database, again once that has passed (also after a fold
 * has finished), and a backlog larger than one batch in a single call. Totals stay cheap only if
 * folds keep up; they stay light only if they are spaced.
 */
import type { RowDataPacket } from 'mysql2/promise';
import { createDatabase, type DatabaseHandle } from '../../../db/client';
import { insertInBatches } from '../../../db/seed';
import { generateJobs } from '../../../db/seed-data';
import { FOLD_BATCH, FOLD_INTERVAL_MS, foldSoon } from '../../../db/jobs/counters';
import { freshDatabase, type TestDatabase } from '../../helpers/database';

let database: TestDatabase;
let handle: DatabaseHandle;
beforeAll(async () => {
  database = await freshDatabase('fold_schedule');
});
afterAll(() => database.close());
// A database object of its own per test: foldSoon keeps its schedule per database object.
beforeEach(() => {
  handle = createDatabase(database.url);
});
afterEach(() => handle.close());

let created = 0;
/** Commits `count` active jobs, each in a department of its own: connection rows to fold. */
async function createJobs(count: number): Promise<void> {
  const rows = generateJobs({
    count,
    seed: 7 + created,
    newest: new Date('2026-06-01T00:00:00Z'),
    firstNumber: 1 + created,
    statusFor: () => 'active',
  });
  for (const [i, row] of rows.entries()) row.department = `Department ${created + i}`;
  created += count;
  await insertInBatches(database.db, rows);
}

async function unfolded(): Promise<number> {
  const [[row]] = await database.pool.query<RowDataPacket[]>(
    'select (select count(*) from job_counts where slot <> 0) + (select count(*) from job_day_counts where slot <> 0) as n',
  );
  return Number(row!.n);
}

/** The unfolded rows once a background fold has had `ms` to finish (or at once when none are left). */
async function unfoldedAfter(ms: number): Promise<number> {
  for (let waited = 0; waited < ms && (await unfolded()) > 0; waited += 50)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return unfolded();
}

test('a second fold within the interval is skipped; one at the interval runs', async () => {
  await createJobs(1);
  foldSoon(handle.db, 10_000);
  expect(await unfoldedAfter(5000)).toBe(0);

  await createJobs(1);
  foldSoon(handle.db, 10_000 + FOLD_INTERVAL_MS - 1);
  expect(await unfoldedAfter(300)).toBeGreaterThan(0);

  foldSoon(handle.db, 10_000 + FOLD_INTERVAL_MS);
  expect(await unfoldedAfter(5000)).toBe(0);
});

test('a backlog of more than one batch is folded by one call', async () => {
  await createJobs(FOLD_BATCH + 50);
  expect(await unfolded()).toBeGreaterThan(FOLD_BATCH);
  foldSoon(handle.db);
  expect(await unfoldedAfter(5000)).toBe(0);
});
