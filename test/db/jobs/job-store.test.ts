/**
 * A job by id (db/jobs/job-store.ts): every seeded job its reader may see is found, as the Job the
 * contract declares (domain/job.ts, strict), in any case of its id; a deleted one is not. And a
 * draft is its creator's alone.
 */
import { Job } from '../../../domain/job';
import { formatUuid } from '../../../domain/uuid';
import { findJob, storeJob } from '../../../db/jobs/job-store';
import { insertInBatches } from '../../../db/seed';
import { generateJobs } from '../../../db/seed-data';
import { freshDatabase, type TestDatabase } from '../../helpers/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('job_rows');
  await insertInBatches(database.db, generateJobs({ count: 120, seed: 3, newest: new Date('2026-05-01T00:00:00Z') }));
});
afterAll(() => database.close());

test('every seeded job its creator may read is found as the contract Job, by its id in any case; a deleted one is not', async () => {
  const all = await database.query<Array<{ bytes: Buffer; title: string; creator: string | null; deleted: number }>>(
    'select id as bytes, title, created_by_consumer as creator, deleted_at is not null as deleted from jobs',
  );
  expect(all.length).toBe(120);
  let found = 0;
  for (const { bytes, title, creator, deleted } of all) {
    const id = formatUuid(bytes);
    const job = await findJob(database.db, id.toUpperCase(), creator ?? 'someone');
    if (deleted) {
      expect(job).toBeUndefined();
      continue;
    }
    found++;
    expect(Job.parse(job)).toStrictEqual(job);
    expect(job).toMatchObject({ id, title });
  }
  expect(found).toBeGreaterThan(100);
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
    updatedAt: null,
  });
  expect(draft).not.toHaveProperty('workplace');
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
