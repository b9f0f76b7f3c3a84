import { JOB_FIELDS } from '../domain/job';
import { call } from './helpers/http';
import { consumerHeaders, json, reader } from './helpers/consumers';
import { startTestService, type TestService } from './helpers/service';

/**
 * Every internal column, and every undisclosed public one, is filled with a sentinel; no response
 * body or log line may ever contain one.
 */
const SENTINELS = {
  pay_rate: '987654.31',
  bill_rate: '987654.32',
  margin_pct: '98.76',
  billing_code: 'LEAK-billing-code',
  recruiter_id: 'LEAK-recruiter-id',
  recruiter_email: 'leak-recruiter@internal.example',
  recruiter_phone: 'LEAK-555-0000',
  client_contact_name: 'LEAK-client-contact',
  client_contact_email: 'leak-client@internal.example',
  client_contact_phone: 'LEAK-555-0001',
  vendor_contact_name: 'LEAK-vendor-contact',
  vendor_contact_email: 'leak-vendor@internal.example',
  internal_notes: 'LEAK-internal-notes',
};
const UNDISCLOSED = {
  client_name: 'LEAK-undisclosed-client',
  vendor_name: 'LEAK-undisclosed-vendor',
  salary_min: '876543.21',
  salary_max: '876543.29',
};
const CREATOR = 'leak-consumer-7f3a';
const creator = consumerHeaders(CREATOR, 'leak-writer', ['jobs:read', 'jobs:write']);

let service: TestService;
const bodies: string[] = [];

async function fetchText(path: string, init: RequestInit = {}) {
  const res = await call(`${service.url}${path}`, init);
  bodies.push(res.text, JSON.stringify([...res.headers]));
  return res;
}

beforeAll(async () => {
  service = await startTestService({ name: 'leak', seed: true });
  const assignments = Object.entries(SENTINELS).map(([column, value]) => `${column} = '${value}'`);
  await service.database.query(`update jobs set ${assignments.join(', ')}`);
  await service.database.query(
    `update jobs set client_name = ?, vendor_name = ?, salary_min = ?, salary_max = ?
     where not client_name_disclosed and not vendor_name_disclosed and not salary_disclosed`,
    Object.values(UNDISCLOSED),
  );
  await service.database.query(`update jobs set created_by_consumer = ? where status = 'draft'`, [CREATOR]);

  // Everything a partner can read: every listed status, every job by id (drafts as their
  // creator), creates, and each kind of error.
  for (let page = 1; page <= 2; page++) {
    await fetchText(`/api/v1/jobs?status=active,open,paused,closed&limit=50&page=${page}`, { headers: reader });
  }
  const ids = await service.database.query<Array<{ h: string }>>('select lower(hex(id)) as h from jobs');
  for (const { h } of ids) {
    const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    await fetchText(`/api/v1/jobs/${id}`, { headers: creator });
  }
  const create = { title: 'T', department: 'D', type: 'contract', description: 'x' };
  await fetchText('/api/v1/jobs', { method: 'POST', headers: { ...creator, ...json }, body: JSON.stringify(create) });
  await fetchText('/api/v1/jobs', {
    method: 'POST',
    headers: { ...creator, ...json },
    body: JSON.stringify({ ...create, payRate: 1 }),
  });
  await fetchText('/api/v1/jobs?limit=500', { headers: reader });
  await fetchText('/api/v1/nowhere', { headers: reader });
});
afterAll(() => service.close());

test('the sentinels are really in the database (the test can fail)', async () => {
  const [row] = await service.database.query<Array<{ n: number }>>(
    `select count(*) as n from jobs where billing_code = ? and client_name = ?`,
    [SENTINELS.billing_code, UNDISCLOSED.client_name],
  );
  expect(Number(row!.n)).toBeGreaterThan(0);
  expect(bodies.length).toBeGreaterThan(60);
});

test.each(Object.entries({ ...SENTINELS, ...UNDISCLOSED }))('%s never appears in a response', (_column, value) => {
  for (const body of bodies) expect(body).not.toContain(value);
});

test('the creating consumer never appears in a response', () => {
  const jobBodies = bodies.filter((body) => body.includes('"data"'));
  for (const body of jobBodies) expect(body).not.toContain(CREATOR);
});

test('no sentinel reaches a log line', () => {
  const logText = service.logs.join('\n');
  expect(service.logs.length).toBeGreaterThan(60);
  for (const value of Object.values({ ...SENTINELS, ...UNDISCLOSED })) expect(logText).not.toContain(value);
});

test('a job object never carries a field beyond the spec', () => {
  const allowed = new Set<string>(JOB_FIELDS);
  let seen = 0;
  for (const text of bodies) {
    if (!text.startsWith('{"data"')) continue;
    const data = JSON.parse(text).data;
    for (const job of Array.isArray(data) ? data : [data]) {
      seen++;
      for (const key of Object.keys(job)) expect(allowed.has(key)).toBe(true);
    }
  }
  expect(seen).toBeGreaterThan(100);
});
