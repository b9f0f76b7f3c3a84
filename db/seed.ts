import { count } from 'drizzle-orm';
import { jobs, type NewJobRow } from './schema';
import { execute, qb, select, type Database } from './sql';
import { demoJobs, generateJobs } from './seed-data';

const BATCH_SIZE = 1000;

export async function insertInBatches(db: Database, rows: NewJobRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += BATCH_SIZE) {
    await execute(db, qb.insert(jobs).values(rows.slice(start, start + BATCH_SIZE)));
  }
}

export async function countJobs(db: Database): Promise<number> {
  const [row] = await select(db, { n: count() }, (query) => query.from(jobs));
  return row?.n ?? 0;
}

/** Loads the demo set when the table is empty; returns how many rows it inserted. */
export async function seedIfEmpty(db: Database): Promise<number> {
  if ((await countJobs(db)) > 0) return 0;
  const rows = demoJobs();
  await insertInBatches(db, rows);
  return rows.length;
}

/** Appends `total` generated jobs for benchmarks, built and inserted one batch at a time so memory stays flat however large the set. */
export async function seedBulk(db: Database, total: number, onProgress?: (done: number) => void): Promise<void> {
  const newest = new Date();
  for (let done = 0; done < total; done += BATCH_SIZE) {
    const batch = generateJobs({
      count: Math.min(BATCH_SIZE, total - done),
      seed: 7 + done,
      newest: new Date(newest.getTime() - done * 60_000),
      spacingMs: 60_000,
      firstNumber: done,
    });
    await execute(db, qb.insert(jobs).values(batch));
    onProgress?.(done + batch.length);
  }
}

/** Empties the jobs table (`npm run db:seed -- --reset`). */
export async function removeAllJobs(db: Database): Promise<void> {
  await execute(db, qb.delete(jobs));
}
