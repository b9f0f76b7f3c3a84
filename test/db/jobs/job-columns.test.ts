/**
 * A job as the API shows it (db/jobs/job-columns.ts toJob, read by findJob): every field of the
 * contract's Job, the salary and the client and vendor names only when disclosed, times as ISO
 * 8601 in UTC with milliseconds, and no workplace at all when the row has none.
 */
import { findJob } from '../../../db/jobs/job-store';
import { uuidToBuffer, uuidv7 } from '../../../domain/uuid';
import { freshDatabase, type TestDatabase } from '../../helpers/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('job_columns');
});
afterAll(() => database.close());

/** Inserts a job row as any writer of the table may (disclosure flags, internal columns) and returns its id. */
async function insertRow(columns: Record<string, unknown>): Promise<string> {
  const id = uuidv7();
  const row: Record<string, unknown> = {
    id: uuidToBuffer(id),
    title: 'Site Reliability Engineer',
    department: 'Platform',
    location: 'Austin, TX',
    type: 'contract',
    description: 'Keeps the lights on.',
    requirements: '["Linux","On call"]',
    responsibilities: '["Runbooks"]',
    status: 'active',
    created_at: '2026-11-21 10:23:00.120',
    pay_rate: 95.5,
    bill_rate: 140,
    margin_pct: 31.8,
    ...columns,
  };
  const names = Object.keys(row);
  await database.query(`insert into jobs (${names.join(', ')}) values (${names.map(() => '?').join(', ')})`, [
    ...Object.values(row),
  ]);
  return id;
}

test('a job with everything disclosed: every field of the contract, in its order', async () => {
  const id = await insertRow({
    posting_id: 'REQ-7',
    workplace: 'hybrid',
    state: 'TX',
    salary_disclosed: true,
    salary_min: 120000,
    salary_max: 150000.5,
    salary_currency: 'USD',
    submission_due_date: '2026-12-01 17:00:00.000',
    client_name: 'Acme',
    client_name_disclosed: true,
    vendor_name: 'Staffing Co',
    vendor_name_disclosed: true,
    posted_by_name: 'Dana',
    updated_at: '2026-11-22 08:00:00.005',
  });
  const job = await findJob(database.db, id, undefined);
  expect(JSON.stringify(job)).toBe(
    JSON.stringify({
      id,
      postingId: 'REQ-7',
      title: 'Site Reliability Engineer',
      department: 'Platform',
      location: 'Austin, TX',
      workplace: 'hybrid',
      state: 'TX',
      type: 'contract',
      description: 'Keeps the lights on.',
      requirements: ['Linux', 'On call'],
      responsibilities: ['Runbooks'],
      salary: { min: 120000, max: 150000.5, currency: 'USD' },
      status: 'active',
      submissionDueDate: '2026-12-01T17:00:00.000Z',
      clientName: 'Acme',
      vendorName: 'Staffing Co',
      postedByName: 'Dana',
      createdAt: '2026-11-21T10:23:00.120Z',
      updatedAt: '2026-11-22T08:00:00.005Z',
    }),
  );
});

test('undisclosed salary and names are null whatever the row holds; no workplace is no field; internal columns never show', async () => {
  const id = await insertRow({
    salary_disclosed: false,
    salary_min: 90000,
    salary_max: 99000,
    salary_currency: 'EUR',
    client_name: 'Secret Client',
    client_name_disclosed: false,
    vendor_name: 'Secret Vendor',
    vendor_name_disclosed: false,
  });
  const job = await findJob(database.db, id, undefined);
  expect(job).toStrictEqual({
    id,
    postingId: null,
    title: 'Site Reliability Engineer',
    department: 'Platform',
    location: 'Austin, TX',
    state: null,
    type: 'contract',
    description: 'Keeps the lights on.',
    requirements: ['Linux', 'On call'],
    responsibilities: ['Runbooks'],
    salary: null,
    status: 'active',
    submissionDueDate: null,
    clientName: null,
    vendorName: null,
    postedByName: null,
    createdAt: '2026-11-21T10:23:00.120Z',
    updatedAt: null,
  });
  expect(JSON.stringify(job)).not.toMatch(/Secret|90000|EUR|95\.5|140|31\.8|workplace/);
});

test('a disclosed salary with only a maximum keeps the minimum null', async () => {
  const id = await insertRow({ salary_disclosed: true, salary_max: 60, salary_currency: 'GBP' });
  expect((await findJob(database.db, id, undefined))?.salary).toStrictEqual({ min: null, max: 60, currency: 'GBP' });
});
