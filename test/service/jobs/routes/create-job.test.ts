import { call, expectJsonError } from '../../../helpers/http';
import { json, writer } from '../../../helpers/consumers';
import { sharedTestService } from '../../../helpers/service';
import { parseDueDate } from '../../../../service/jobs/contract/due-date';
import { jobRowCount } from '../../../helpers/database';
import { rawText } from '../../../helpers/raw-text';
import { ACCEPTED_DUE_DATES, MINIMAL_JOB } from '../../../helpers/job-bodies';

const service = sharedTestService({ name: 'create' });
const post = (body: unknown, headers: Record<string, string> = { ...writer, ...json }) =>
  call(`${service.url}/api/v1/jobs`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const valid = MINIMAL_JOB;

/** Posts a bad body and checks it got a 400 and stored nothing. */
async function rejected(body: unknown, headers?: Record<string, string>) {
  const before = await jobRowCount(service.database);
  const res = await post(body, headers);
  expect(await jobRowCount(service.database)).toBe(before);
  return res;
}

describe('POST /api/v1/jobs: success', () => {
  test('201 with the job, a Location header, and status draft by default', async () => {
    const res = await post(valid);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/v1/jobs/${res.body.data.id}`);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      postingId: null,
      title: valid.title,
      department: valid.department,
      location: '',
      state: null,
      type: 'contract-to-hire',
      description: valid.description,
      requirements: [],
      responsibilities: [],
      salary: null,
      status: 'draft',
      submissionDueDate: null,
      clientName: null,
      vendorName: null,
      postedByName: null,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updatedAt: null,
    });
    // What GET returns afterwards is what POST returned.
    const fetched = await call(`${service.url}${res.headers.get('location')}`, { headers: writer });
    expect(fetched.body).toEqual(res.body);
  });

  test('every optional field is stored and returned', async () => {
    const full = {
      ...valid,
      postingId: 'ACME-42',
      location: 'Austin, TX',
      workplace: 'hybrid',
      state: 'TX',
      requirements: ['SQL', 'Python'],
      responsibilities: ['Own the warehouse'],
      salary: { min: 120000, max: 150000.5, currency: 'USD' },
      submissionDueDate: '2026-12-31T17:00:00+02:00',
      status: 'open',
    };
    const res = await post(full);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      ...full,
      submissionDueDate: '2026-12-31T15:00:00.000Z',
    });
    const listed = await call(`${service.url}/api/v1/jobs?status=open`, { headers: writer });
    expect(listed.body.data.map((j: { id: string }) => j.id)).toContain(res.body.data.id);
  });

  test('a date-only deadline is stored as midnight UTC', async () => {
    const res = await post({ ...valid, submissionDueDate: '2027-01-15' });
    expect(res.body.data.submissionDueDate).toBe('2027-01-15T00:00:00.000Z');
  });

  test('strings are trimmed; SQL-looking and unicode text is stored as written', async () => {
    const res = await post({ ...valid, title: "  Robert'); DROP TABLE jobs;-- 🚀 ", description: 'Ünïcödé ✓' });
    expect(res.status).toBe(201);
    expect(res.body.data.title).toBe("Robert'); DROP TABLE jobs;-- 🚀");
    expect(res.body.data.description).toBe('Ünïcödé ✓');
    expect(await jobRowCount(service.database)).toBeGreaterThan(0);
  });

  test('Content-Type with a charset is accepted', async () => {
    expect((await post(valid, { ...writer, 'Content-Type': 'application/json; charset=utf-8' })).status).toBe(201);
  });
});

describe('POST /api/v1/jobs: rejected requests store nothing', () => {
  test('missing required fields are listed in details', async () => {
    const res = await rejected({});
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Validation failed');
    expect(res.body.details).toEqual(
      expect.arrayContaining(
        ['title', 'department', 'type', 'description'].map((field) => ({ field, message: `${field} is required` })),
      ),
    );
  });

  test.each([
    ['id', '0190f5d8-0000-7000-8000-000000000000'],
    ['createdAt', '2020-01-01T00:00:00Z'],
    ['updatedAt', '2020-01-01T00:00:00Z'],
    ['clientName', 'Globex'],
    ['vendorName', 'Staffing Co'],
    ['postedByName', 'Dana'],
    ['payRate', 50],
    ['billRate', 80],
    ['billingCode', 'BC-1'],
    ['recruiterEmail', 'x@example.com'],
    ['clientContactEmail', 'y@example.com'],
    ['internalNotes', 'secret'],
  ])('%s cannot be set through the API', async (field, value) => {
    const res = await rejected({ ...valid, [field]: value });
    expect(res.status).toBe(400);
    expect(res.body.details).toContainEqual({ field, message: `${field} cannot be set through the API` });
  });

  test('an unknown field is a 400 too', async () => {
    const res = await rejected({ ...valid, colour: 'blue' });
    expect(res.body.details).toEqual([{ field: 'colour', message: 'colour is not a known field' }]);
  });

  test.each([
    [{ title: 42 }, 'title', 'title must be a string'],
    [{ title: '   ' }, 'title', 'title must not be empty'],
    [{ title: 'x'.repeat(201) }, 'title', 'title must be at most 200 characters'],
    [{ department: 'd'.repeat(101) }, 'department', 'department must be at most 100 characters'],
    [{ description: 'd'.repeat(20001) }, 'description', 'description must be at most 20000 characters'],
    [{ type: 'remote' }, 'type', 'remote is not a job type; send workplace: "remote" and one of the types'],
    [{ type: 'freelance' }, 'type', expect.stringContaining('type must be one of')],
    [{ workplace: 'moon' }, 'workplace', 'workplace must be one of on-site, hybrid, remote'],
    [{ state: 'texas' }, 'state', expect.stringContaining('two-letter')],
    [{ postingId: 'p'.repeat(65) }, 'postingId', 'postingId must be at most 64 characters'],
    [{ location: 'l'.repeat(201) }, 'location', 'location must be at most 200 characters'],
    [{ status: 'published' }, 'status', expect.stringContaining('status must be one of')],
    [{ requirements: 'SQL' }, 'requirements', 'requirements must be an array of strings'],
    [{ requirements: ['ok', ''] }, 'requirements.1', expect.stringContaining('must not be empty')],
    [{ requirements: Array(101).fill('x') }, 'requirements', 'requirements may hold at most 100 items'],
    [{ responsibilities: ['r'.repeat(1001)] }, 'responsibilities.0', expect.stringContaining('at most 1000')],
    [{ salary: { min: 10, max: 5, currency: 'USD' } }, 'salary.min', 'salary.min must not be greater than salary.max'],
    [{ salary: { min: -1, max: 5, currency: 'USD' } }, 'salary.min', 'salary.min must not be negative'],
    [{ salary: { min: 1e300, currency: 'USD' } }, 'salary.min', 'salary.min must be at most 99999999'],
    [{ salary: { min: '100', currency: 'USD' } }, 'salary.min', 'salary.min must be a number or null'],
    [{ salary: { min: 1.234, currency: 'USD' } }, 'salary.min', 'salary.min may have at most 2 decimal places'],
    [{ salary: { min: 1, currency: 'usd' } }, 'salary.currency', expect.stringContaining('ISO 4217')],
    [{ salary: { min: null, max: null, currency: 'USD' } }, 'salary.min', expect.stringContaining('min or max')],
    [{ salary: { min: 1, currency: 'USD', payRate: 3 } }, 'salary', expect.any(String)],
    [{ salary: 50000 }, 'salary', expect.stringContaining('salary must be an object')],
    [{ submissionDueDate: 'next friday' }, 'submissionDueDate', expect.stringContaining('ISO 8601')],
    [{ submissionDueDate: '2026-02-31' }, 'submissionDueDate', 'submissionDueDate is not a real calendar date'],
    [{ submissionDueDate: '2026-12-31T17:00:00' }, 'submissionDueDate', expect.stringContaining('time zone')],
  ])('%j is refused with a field detail', async (patch, field, message) => {
    const res = await rejected({ ...valid, ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Validation failed');
    expect(res.body.details).toContainEqual({ field, message });
  });

  test('malformed JSON', async () => {
    const res = await rejected('{"title": "x",');
    expectJsonError(res, 400, 'Malformed JSON body');
  });

  test.each([['[1,2]'], ['"a string"'], ['null'], ['42']])('a body that is not an object (%s)', async (body) => {
    const res = await rejected(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/Malformed JSON body|must be a JSON object/);
  });

  test('a non-JSON content type is a 415', async () => {
    const res = await rejected('title=x', { ...writer, 'Content-Type': 'application/x-www-form-urlencoded' });
    expectJsonError(res, 415, 'Content-Type must be application/json');
    expect((await rejected(JSON.stringify(valid), { ...writer })).status).toBe(415);
  });

  test('a JSON create with no body says the body is empty, with or without Content-Length: 0', async () => {
    const headers = Object.entries({ ...writer, ...json })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    const before = await jobRowCount(service.database);
    // No Content-Length and no Transfer-Encoding: what curl -X POST sends without -d.
    const answer = await rawText(
      service.port,
      `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'Request body is empty: send a JSON object',
    });
    expectJsonError(await rejected(''), 400, 'Request body is empty: send a JSON object');
    expect(await jobRowCount(service.database)).toBe(before);
  });

  test('a body over 100 KB is a 413', async () => {
    const res = await rejected({ ...valid, description: 'x'.repeat(101 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/100 KB/);
  });

  test('a create without the gateway identity is a 401', async () => {
    const res = await rejected(valid, { ...json });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/identity/);
  });

  test('a rejected create leaves the table exactly as it was', async () => {
    const before = await service.database.query<Array<{ n: number; m: string | null }>>(
      'select count(*) as n, max(created_at) as m from jobs',
    );
    for (const body of [{ ...valid, payRate: 1 }, { ...valid, title: '' }, '{']) await post(body);
    expect(await service.database.query('select count(*) as n, max(created_at) as m from jobs')).toEqual(before);
  });
});

/**
 * POST /api/v1/jobs behaviour that a mutation run (issue 12) showed no test pinned: one-sided and
 * equal salary ranges, the anchors of the currency and state codes, location trimming, and the
 * exact messages a partner reads for a bad type or status.
 */
describe('validation details, field by field', () => {
  const service = sharedTestService({ name: 'create_gaps' });

  const post = (body: unknown) =>
    call(`${service.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json }, body: JSON.stringify(body) });

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
    const before = await jobRowCount(service.database);
    const res = await post({ ...valid, ...patch });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Validation failed');
    expect(await jobRowCount(service.database)).toBe(before);
    return res.body.details as Array<{ field: string; message: string }>;
  }

  describe('salary ranges', () => {
    test('only a minimum ("from 90,000") is a 201 with max null', async () => {
      expect((await created({ salary: { min: 90000, currency: 'USD' } })).salary).toEqual({
        min: 90000,
        max: null,
        currency: 'USD',
      });
    });

    test('only a maximum ("up to 120,000") is a 201 with min null', async () => {
      expect((await created({ salary: { max: 120000, currency: 'EUR' } })).salary).toEqual({
        min: null,
        max: 120000,
        currency: 'EUR',
      });
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
    test.each([0.01000001, 0.00000001, 5.00000001, 1.005])(
      '%p, more than two decimals however small, is refused',
      async (max) => {
        expect(await refused({ salary: { max, currency: 'USD' } })).toEqual([
          { field: 'salary.max', message: 'salary.max may have at most 2 decimal places' },
        ]);
      },
    );

    test('amounts in cents come back exactly as sent', async () => {
      expect((await created({ salary: { min: 0.07, max: 1234567.89, currency: 'USD' } })).salary).toEqual({
        min: 0.07,
        max: 1234567.89,
        currency: 'USD',
      });
      expect((await created({ salary: { min: 0.1, max: 0.3, currency: 'USD' } })).salary).toEqual({
        min: 0.1,
        max: 0.3,
        currency: 'USD',
      });
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
      expect(await refused({ state })).toEqual([
        { field: 'state', message: 'state must be a two-letter upper-case code, e.g. TX' },
      ]);
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
        {
          field: 'type',
          message: 'type must be one of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams',
        },
      ]);
    });

    test('a type that is not a string gets the same list', async () => {
      expect(await refused({ type: 3 })).toEqual([
        {
          field: 'type',
          message: 'type must be one of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams',
        },
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
      [
        { description: 'Colour \u001b[31m' },
        'description',
        'description must not contain control characters other than tab and line breaks',
      ],
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
      expect(await refused({ [name]: 1 })).toEqual([
        { field: `${name.slice(0, 64)}…`, message: `${name.slice(0, 64)}… is not a known field` },
      ]);
    });

    test('a name of exactly 64 characters is shown whole', async () => {
      const name = 'z'.repeat(64);
      expect(await refused({ [name]: 1 })).toEqual([{ field: name, message: `${name} is not a known field` }]);
    });
  });
});

/**
 * parseDueDate at the calendar's edges the mutation run found unpinned: the 400-year
 * leap rule, month and day zero, minute 60, the bounds of an offset, and a fraction of a second
 * given with fewer than three digits. A partner sees `calendar` as a 400 naming dueDate.
 */
describe('parseDueDate', () => {
  test.each(ACCEPTED_DUE_DATES)('%s: %s is accepted as %s', (_label, value, iso) => {
    expect(parseDueDate(value)).toEqual({ date: new Date(iso) });
  });

  test.each([
    ['2100-02-29', 'a leap day in a century year not divisible by 400'],
    ['2030-00-10', 'month 00'],
    ['2030-01-00', 'day 00'],
    ['2030-01-10T10:60:00Z', 'minute 60'],
    ['2030-01-10T10:00:00+24:00', 'an offset of 24 hours'],
    ['2030-01-10T10:00:00+05:60', 'an offset of 60 minutes'],
  ])('%s is not a calendar date (%s)', (value) => {
    expect(parseDueDate(value)).toEqual({ problem: 'calendar' });
  });
});
