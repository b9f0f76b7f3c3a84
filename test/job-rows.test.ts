/**
 * The hot reads run statements built once and map rows with each column's own decoder
 * (service/jobs/job-rows.ts), reaching into drizzle's session and decoders. These tests pin that
 * the result is exactly what drizzle's own query over the same columns returns, for every kind
 * of row the seed makes (disclosed and undisclosed salary and names, no workplace, drafts,
 * deleted rows), so a drizzle upgrade that changes either internal fails here, not in production.
 */
import { eq } from 'drizzle-orm';
import { insertInBatches } from '../db/seed';
import { generateJobs } from '../db/seed-data';
import { jobs } from '../db/schema';
import { publicColumns } from '../service/jobs/columns';
import { findJob } from '../service/jobs/repository';
import { freshDatabase, type TestDatabase } from './helpers/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('job_rows');
  await insertInBatches(database.db, generateJobs({ count: 120, seed: 3, newest: new Date('2026-05-01T00:00:00Z') }));
});
afterAll(() => database.close());

test('a job by id is field for field what drizzle selects, for every seeded job its creator may read', async () => {
  const all = await database.db.select({ id: jobs.id, creator: jobs.createdByConsumer, deletedAt: jobs.deletedAt }).from(jobs);
  expect(all.length).toBe(120);
  let found = 0;
  for (const { id, creator, deletedAt } of all) {
    const [expected] = await database.db.select(publicColumns).from(jobs).where(eq(jobs.id, id));
    const row = await findJob(database.db, id, creator ?? 'someone');
    if (deletedAt) {
      expect(row).toBeUndefined();
      continue;
    }
    found++;
    expect(row).toStrictEqual(expected);
    // Same keys in the same order: the JSON written is byte for byte the same.
    expect(JSON.stringify(row)).toBe(JSON.stringify(expected));
  }
  expect(found).toBeGreaterThan(100);
});

test('a drizzle whose session has no query() fails loudly, naming this file, instead of reading nothing', async () => {
  const { readRows } = await import('../service/jobs/job-rows');
  const noSession = { session: {} } as unknown as typeof database.db;
  await expect(readRows(noSession, { sql: 'select 1', params: [] })).rejects.toThrow(
    'drizzle session without query(): see service/jobs/job-rows.ts',
  );
});
