/**
 * A job by id (db/jobs/job-store.ts) runs drizzle's statement text on the driver and maps the row
 * itself (db/sql.ts driverRows, job-columns.ts rowToJob); in a transaction drizzle runs and maps it.
 * These tests pin that both give exactly the Job of drizzle's own query over the same columns, for
 * every kind of row the seed makes (disclosed and undisclosed salary and names, no workplace,
 * drafts, deleted rows): they fail when drizzle's select list leaves publicColumns' order or its
 * `$client` stops being the pool. And a draft is its creator's alone.
 */
import { eq } from 'drizzle-orm';
import { insertInBatches } from '../../../db/seed';
import { generateJobs } from '../../../db/seed-data';
import { jobs } from '../../../db/schema';
import { publicColumns, toJob } from '../../../db/jobs/job-columns';
import { findJob, storeJob } from '../../../db/jobs/job-store';
import { driverOf } from '../../../db/sql';
import { freshDatabase, type TestDatabase } from '../../helpers/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('job_rows');
  await insertInBatches(database.db, generateJobs({ count: 120, seed: 3, newest: new Date('2026-05-01T00:00:00Z') }));
});
afterAll(() => database.close());

test('a job by id is field for field what drizzle selects, for every seeded job its creator may read', async () => {
  const all = await database.db
    .select({ id: jobs.id, creator: jobs.createdByConsumer, deletedAt: jobs.deletedAt })
    .from(jobs);
  expect(all.length).toBe(120);
  let found = 0;
  for (const { id, creator, deletedAt } of all) {
    const [selected] = await database.db.select(publicColumns).from(jobs).where(eq(jobs.id, id));
    const expected = toJob(selected!);
    const row = await findJob(database.db, id.toUpperCase(), creator ?? 'someone');
    if (deletedAt) {
      expect(row).toBeUndefined();
      continue;
    }
    found++;
    expect(row).toStrictEqual(expected);
    expect(await database.db.transaction((tx) => findJob(tx, id, creator ?? 'someone'))).toStrictEqual(expected);
    // Same keys in the same order: the JSON written is byte for byte the same.
    expect(JSON.stringify(row)).toBe(JSON.stringify(expected));
  }
  expect(found).toBeGreaterThan(100);
});

test('outside a transaction statements run on the pool drizzle documents as $client; a transaction has none', async () => {
  expect(driverOf(database.db)).toBe(database.pool);
  await database.db.transaction(async (tx) => expect(driverOf(tx)).toBeUndefined());
});

test('a stored job reads back as its creator sees it; a draft is not found by another consumer, a listed job is', async () => {
  const base = {
    title: 'Stored',
    department: 'QA',
    type: 'contract' as const,
    description: 'Checks the store.',
    requirements: [],
    responsibilities: [],
  };
  const draft = await storeJob(database.db, { ...base, salary: { min: 10, max: 20, currency: 'USD' } }, 'creator');
  expect(draft).toMatchObject({
    title: 'Stored',
    status: 'draft',
    salary: { min: 10, max: 20, currency: 'USD' },
    workplace: undefined,
    updatedAt: null,
  });
  expect(await findJob(database.db, draft.id, 'creator')).toStrictEqual(draft);
  expect(await findJob(database.db, draft.id, 'someone else')).toBeUndefined();
  expect(await findJob(database.db, draft.id, undefined)).toBeUndefined();
  const active = await storeJob(
    database.db,
    { ...base, status: 'active' as const, workplace: 'remote' as const },
    'creator',
  );
  expect(await findJob(database.db, active.id, undefined)).toStrictEqual(active);
});
