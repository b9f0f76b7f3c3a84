/**
 * A job by id and listing pages run statements built once and map their rows with each column's
 * own decoder (rowToJob, db/jobs/job-columns.ts), reaching into drizzle's session and decoders
 * (db/sql.ts). These tests pin that both give exactly the Job of drizzle's
 * own query over the same columns, for every kind of row the seed makes (disclosed and
 * undisclosed salary and names, no workplace, drafts, deleted rows), so a drizzle upgrade that
 * changes either internal fails here, not in production.
 */
import { eq } from 'drizzle-orm';
import { insertInBatches } from '../../../db/seed';
import { generateJobs } from '../../../db/seed-data';
import { jobs } from '../../../db/schema';
import { PUBLIC_SELECT_LIST, publicColumns, rowToJob, toJob } from '../../../db/jobs/job-columns';
import { findJob } from '../../../db/jobs/job-store';
import { readRows } from '../../../db/sql';
import { freshDatabase, type TestDatabase } from '../../helpers/database';

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
    const [selected] = await database.db.select(publicColumns).from(jobs).where(eq(jobs.id, id));
    const expected = toJob(selected!);
    const row = await findJob(database.db, id, creator ?? 'someone');
    const [values] = await readRows(database.db, { sql: `select ${PUBLIC_SELECT_LIST} from jobs where id = ?`, params: [jobs.id.mapToDriverValue(id)] });
    const mapped = rowToJob(values!);
    expect(mapped).toStrictEqual(expected);
    expect(JSON.stringify(mapped)).toBe(JSON.stringify(expected));
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
  const noSession = { session: {} } as unknown as typeof database.db;
  await expect(readRows(noSession, { sql: 'select 1', params: [] })).rejects.toThrow(
    'drizzle session without query(): see db/sql.ts',
  );
});
