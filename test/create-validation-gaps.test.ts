/**
 * POST /api/v1/jobs behaviour that a mutation run (issue 12) showed no test pinned: one-sided and
 * equal salary ranges, the anchors of the currency and state codes, location trimming, and the
 * exact messages a partner reads for a bad type or status.
 */
import { call } from './helpers/http';
import { json, writer } from './helpers/consumers';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ name: 'create_gaps' });
});
afterAll(() => service.close());

const valid = {
  title: 'Platform Engineer',
  department: 'Engineering',
  type: 'full-time',
  description: 'Keep the lights on.',
};

const post = (body: unknown) =>
  call(`${service.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json }, body: JSON.stringify(body) });

async function rowCount(): Promise<number> {
  const [row] = await service.database.query<Array<{ n: number }>>('select count(*) as n from jobs');
  return Number(row!.n);
}

/** Creates a job and returns it as a later GET sees it (what was stored, not just echoed). */
async function created(patch: Record<string, unknown>) {
  const res = await post({ ...valid, ...patch });
  expect(res.status).toBe(201);
  const fetched = await call(`${service.url}/api/v1/jobs/${res.body.data.id}`, { headers: writer });
  expect(fetched.body.data).toEqual(res.body.data);
  return res.body.data;
}

/** Posts a bad body; checks the 400 stored nothing and returns its details. */
async function refused(patch: Record<string, unknown>) {
  const before = await rowCount();
  const res = await post({ ...valid, ...patch });
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('Validation failed');
  expect(await rowCount()).toBe(before);
  return res.body.details as Array<{ field: string; message: string }>;
}

describe('salary ranges', () => {
  test('only a minimum ("from 90,000") is a 201 with max null', async () => {
    expect((await created({ salary: { min: 90000, currency: 'USD' } })).salary).toEqual({ min: 90000, max: null, currency: 'USD' });
  });

  test('only a maximum ("up to 120,000") is a 201 with min null', async () => {
    expect((await created({ salary: { max: 120000, currency: 'EUR' } })).salary).toEqual({ min: null, max: 120000, currency: 'EUR' });
  });

  test('an explicit null on one side is the same as leaving it out', async () => {
    expect((await created({ salary: { min: null, max: 75000.5, currency: 'GBP' } })).salary).toEqual({
      min: null,
      max: 75000.5,
      currency: 'GBP',
    });
  });

  test('a fixed salary (min equal to max) is a 201', async () => {
    expect((await created({ salary: { min: 100000, max: 100000, currency: 'USD' } })).salary).toEqual({
      min: 100000,
      max: 100000,
      currency: 'USD',
    });
  });

  // decimal(10,2) would round these silently: 0.01000001 used to pass a 1e-6 tolerance and be
  // stored as 0.01, and 0.00000001 (exactly 1e-6 cents off) sat on the tolerance's edge.
  test.each([0.01000001, 0.00000001, 5.00000001, 1.005])('%p, more than two decimals however small, is refused', async (max) => {
    expect(await refused({ salary: { max, currency: 'USD' } })).toEqual([
      { field: 'salary.max', message: 'salary.max may have at most 2 decimal places' },
    ]);
  });

  test('amounts in cents come back exactly as sent', async () => {
    expect((await created({ salary: { min: 0.07, max: 1234567.89, currency: 'USD' } })).salary).toEqual({
      min: 0.07,
      max: 1234567.89,
      currency: 'USD',
    });
    expect((await created({ salary: { min: 0.1, max: 0.3, currency: 'USD' } })).salary).toEqual({ min: 0.1, max: 0.3, currency: 'USD' });
  });

  test('a minimum one cent above the maximum is refused', async () => {
    expect(await refused({ salary: { min: 100000.01, max: 100000, currency: 'USD' } })).toContainEqual({
      field: 'salary.min',
      message: 'salary.min must not be greater than salary.max',
    });
  });
});

describe('codes are exactly their length: a 400, never a database error', () => {
  // The columns are char(3) and char(2): a longer code that slipped through would fail the insert.
  test.each(['USDX', 'XUSD', 'US', 'USD ', ' USD', 'U1D'])('currency %j', async (currency) => {
    const details = await refused({ salary: { min: 1000, currency } });
    expect(details.map((d) => d.field)).toEqual(['salary.currency']);
    expect(details[0]!.message).toMatch(/^salary\.currency must be .*e\.g\. USD$/);
  });

  test.each(['TXX', 'XTX', 'T', 'tx', 'T1'])('state %j', async (state) => {
    expect(await refused({ state })).toEqual([{ field: 'state', message: 'state must be a two-letter upper-case code, e.g. TX' }]);
  });

  test('the two-letter and three-letter codes themselves are stored', async () => {
    const job = await created({ state: 'WA', salary: { min: 1, currency: 'CAD' } });
    expect(job.state).toBe('WA');
    expect(job.salary.currency).toBe('CAD');
  });
});

describe('location', () => {
  test('surrounding spaces and tabs are trimmed, as for title and department', async () => {
    expect((await created({ location: ' \t Austin, TX  ' })).location).toBe('Austin, TX');
  });

  test('a location of only spaces is stored as "" (location is optional)', async () => {
    expect((await created({ location: '    ' })).location).toBe('');
  });

  test('exactly 200 characters after trimming is accepted', async () => {
    const location = 'L'.repeat(200);
    expect((await created({ location: `  ${location}  ` })).location).toBe(location);
  });
});

describe('exact messages for enum fields', () => {
  test('an unknown type lists the six types', async () => {
    expect(await refused({ type: 'freelance' })).toEqual([
      { field: 'type', message: 'type must be one of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams' },
    ]);
  });

  test('a type that is not a string gets the same list', async () => {
    expect(await refused({ type: 3 })).toEqual([
      { field: 'type', message: 'type must be one of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams' },
    ]);
  });

  test('type "remote" points to workplace', async () => {
    expect(await refused({ type: 'remote' })).toEqual([
      { field: 'type', message: 'remote is not a job type; send workplace: "remote" and one of the types' },
    ]);
  });

  test('an unknown status lists the five statuses, draft included', async () => {
    expect(await refused({ status: 'published' })).toEqual([
      { field: 'status', message: 'status must be one of draft, active, open, paused, closed' },
    ]);
  });

  test('an unknown workplace lists the three workplaces', async () => {
    expect(await refused({ workplace: 'anywhere' })).toEqual([
      { field: 'workplace', message: 'workplace must be one of on-site, hybrid, remote' },
    ]);
  });
});

describe('the exact message for each field a partner gets wrong', () => {
  test.each([
    [{ location: 'Austin\nTX' }, 'location', 'location must not contain control characters or line breaks'],
    [{ location: 42 }, 'location', 'location must be a string'],
    [{ title: 'Data\nEngineer' }, 'title', 'title must not contain control characters or line breaks'],
    [{ title: 'Broken \ud800 text' }, 'title', 'title must be valid Unicode text (it holds a lone surrogate)'],
    [{ description: 'Colour \u001b[31m' }, 'description', 'description must not contain control characters other than tab and line breaks'],
    [{ requirements: ['SQL', ''] }, 'requirements.1', 'each item of requirements must not be empty'],
    [{ responsibilities: 'Own the warehouse' }, 'responsibilities', 'responsibilities must be an array of strings'],
    [{ state: 48 }, 'state', 'state must be a string'],
    [{ salary: { max: -1, currency: 'USD' } }, 'salary.max', 'salary.max must not be negative'],
    [{ salary: { min: 1, currency: 840 } }, 'salary.currency', 'salary.currency must be a string'],
    [{ submissionDueDate: 20261231 }, 'submissionDueDate', 'submissionDueDate must be a string'],
  ])('%j', async (patch, field, message) => {
    expect(await refused(patch)).toEqual([{ field, message }]);
  });

  test('one problem per field: the first, even when a value breaks two rules', async () => {
    // A lone surrogate and a line break: two rules, one detail for the title.
    expect(await refused({ title: 'Bad \ud800 and\nworse' })).toEqual([
      { field: 'title', message: 'title must be valid Unicode text (it holds a lone surrogate)' },
    ]);
  });
});

describe('unknown field names in details', () => {
  test('a name over 64 characters is clipped to 64 and an ellipsis', async () => {
    const name = `x${'y'.repeat(64)}`;
    expect(await refused({ [name]: 1 })).toEqual([{ field: `${name.slice(0, 64)}…`, message: `${name.slice(0, 64)}… is not a known field` }]);
  });

  test('a name of exactly 64 characters is shown whole', async () => {
    const name = 'z'.repeat(64);
    expect(await refused({ [name]: 1 })).toEqual([{ field: name, message: `${name} is not a known field` }]);
  });
});
