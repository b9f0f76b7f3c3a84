import { call } from './helpers/http';
import { json, writer } from './helpers/consumers';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
const post = (body: unknown, headers: Record<string, string> = { ...writer, ...json }) =>
  call(`${service.url}/api/v1/jobs`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const valid = {
  title: 'Senior Data Engineer',
  department: 'Data & Analytics',
  type: 'contract-to-hire',
  description: 'Build and run our pipelines.',
};

async function rowCount(): Promise<number> {
  const [row] = await service.database.query<Array<{ n: number }>>('select count(*) as n from jobs');
  return Number(row!.n);
}

/** Posts a bad body and checks it got a 400 and stored nothing. */
async function rejected(body: unknown, headers?: Record<string, string>) {
  const before = await rowCount();
  const res = await post(body, headers);
  expect(await rowCount()).toBe(before);
  return res;
}

beforeAll(async () => {
  service = await startTestService({ name: 'create' });
});
afterAll(() => service.close());

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
    expect(await rowCount()).toBeGreaterThan(0);
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
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Malformed JSON body' });
  });

  test.each([['[1,2]'], ['"a string"'], ['null'], ['42']])('a body that is not an object (%s)', async (body) => {
    const res = await rejected(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/Malformed JSON body|must be a JSON object/);
  });

  test('a non-JSON content type is a 415', async () => {
    const res = await rejected('title=x', { ...writer, 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 'Content-Type must be application/json' });
    expect((await rejected(JSON.stringify(valid), { ...writer })).status).toBe(415);
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
