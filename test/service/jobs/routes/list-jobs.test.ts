import { JOB_TYPES, Job } from '../../../../domain/job';
import { call, expectJsonError, refusesQueries } from '../../../helpers/http';
import { reader } from '../../../helpers/consumers';
import { sharedTestService, startTestService, type TestService } from '../../../helpers/service';
import { generateJobs } from '../../../../db/seed-data';
import { insertInBatches } from '../../../../db/seed';
import { byListingOrder } from '../../../../db/jobs/listing';
import { FILTER_NAMES } from '../../../../domain/list-filters';

// Every declared filter, then the two ways to page, then limit.
const ALLOWED = [...FILTER_NAMES, 'page or cursor', 'limit'].join(', ');

const service = sharedTestService({ name: 'list', seed: true });
const list = (query = '') => call(`${service.url}/api/v1/jobs${query}`, { headers: reader });

// What the seeded table holds, counted straight from the database to compare against the API.
async function countWhere(condition: string, values: unknown[] = []): Promise<number> {
  const [row] = await service.database.query<Array<{ n: number }>>(
    `select count(*) as n from jobs where deleted_at is null and ${condition}`,
    values,
  );
  return Number(row!.n);
}

describe('GET /api/v1/jobs: default listing', () => {
  test('lists only active and open jobs, 20 per page, with meta', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    const expected = await countWhere(`status in ('active','open')`);
    expect(expected).toBeGreaterThan(20);
    expect(res.body.meta).toEqual({ total: expected, page: 1, limit: 20, totalPages: Math.ceil(expected / 20) });
    expect(res.body.data).toHaveLength(20);
    for (const job of res.body.data) expect(['active', 'open']).toContain(job.status);
  });

  test('every job is exactly the spec object', async () => {
    const res = await list('?limit=100&status=active,open,paused,closed');
    for (const job of res.body.data) {
      expect(Job.safeParse(job).success).toBe(true);
    }
  });

  test('orders by createdAt descending, then id descending, so pages never overlap', async () => {
    const all = (await list('?limit=100')).body.data as Array<{ id: string; createdAt: string }>;
    const sorted = [...all].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
    );
    expect(all.map((j) => j.id)).toEqual(sorted.map((j) => j.id));

    const pages = [];
    for (let page = 1; page <= 4; page++) pages.push(...(await list(`?limit=7&page=${page}`)).body.data);
    expect(pages.map((j: { id: string }) => j.id)).toEqual(all.slice(0, 28).map((j) => j.id));
  });

  test('never lists drafts or soft-deleted jobs', async () => {
    const ids = new Set(
      (await list('?limit=100&status=active,open,paused,closed')).body.data.map((j: { id: string }) => j.id),
    );
    const hidden = await service.database.query<Array<{ id: string }>>(
      `select lower(hex(id)) as id from jobs where status = 'draft' or deleted_at is not null`,
    );
    expect(hidden.length).toBeGreaterThan(0);
    for (const { id } of hidden) {
      const uuid = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
      expect(ids.has(uuid)).toBe(false);
    }
  });
});

describe('GET /api/v1/jobs: filters', () => {
  test('status takes one value or a comma list', async () => {
    const paused = await list('?status=paused&limit=100');
    expect(paused.body.meta.total).toBe(await countWhere(`status = 'paused'`));
    expect(paused.body.data.every((j: Job) => j.status === 'paused')).toBe(true);

    const mixed = await list('?status=closed,paused&limit=100');
    expect(mixed.body.meta.total).toBe(await countWhere(`status in ('closed','paused')`));
  });

  test('status=draft is refused: drafts are never listed', async () => {
    const res = await list('?status=draft');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/draft/);
  });

  test('type filters by each of the six types, alone or combined', async () => {
    for (const type of JOB_TYPES) {
      const res = await list(`?type=${type}&limit=100`);
      expect(res.status).toBe(200);
      expect(res.body.meta.total).toBe(await countWhere(`status in ('active','open') and type = ?`, [type]));
      expect(res.body.data.every((j: Job) => j.type === type)).toBe(true);
    }
    const two = await list('?type=contract,direct-hire&limit=100');
    expect(two.body.meta.total).toBe(
      await countWhere(`status in ('active','open') and type in ('contract','direct-hire')`),
    );
  });

  test('type=remote is a 400 that points to workplace', async () => {
    const res = await list('?type=remote');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/workplace/);
  });

  test('workplace filters on-site, hybrid and remote', async () => {
    const res = await list('?workplace=remote&limit=100');
    expect(res.body.meta.total).toBe(await countWhere(`status in ('active','open') and workplace = 'remote'`));
    expect(res.body.data.every((j: Job) => j.workplace === 'remote')).toBe(true);
    // Remote roles with no base have an empty location.
    expect(res.body.data.some((j: Job) => j.location === '')).toBe(true);
  });

  test('department is exact, case-insensitive, ignores surrounding spaces, + and %20 are spaces', async () => {
    const expected = await countWhere(`status in ('active','open') and department = 'Data & Analytics'`);
    expect(expected).toBeGreaterThan(0);
    for (const query of ['Data%20%26%20Analytics', 'data+%26+analytics', '+%20DATA+%26+Analytics%20+']) {
      const res = await list(`?department=${query}&limit=100`);
      expect(res.status).toBe(200);
      expect(res.body.meta.total).toBe(expected);
      expect(res.body.data.every((j: Job) => j.department === 'Data & Analytics')).toBe(true);
    }
    // Exact, not partial.
    expect((await list('?department=Data')).body.meta.total).toBe(0);
  });

  test('filters combine', async () => {
    const res = await list('?status=active,paused&type=full-time,contract&department=engineering&limit=100');
    expect(res.body.meta.total).toBe(
      await countWhere(
        `status in ('active','paused') and type in ('full-time','contract') and department = 'Engineering'`,
      ),
    );
  });

  test('state takes a code in any case, or a comma list, and combines with every other filter', async () => {
    const ca = await list('?state=CA&limit=100');
    expect(ca.body.meta.total).toBe(await countWhere(`status in ('active','open') and state = 'CA'`));
    expect(ca.body.meta.total).toBeGreaterThan(0);
    expect(ca.body.data.every((j: Job) => j.state === 'CA')).toBe(true);
    const two = await list('?state=ca,tx&limit=100');
    expect(two.body.meta.total).toBe(await countWhere(`status in ('active','open') and state in ('CA','TX')`));
    expect(new Set(two.body.data.map((j: Job) => j.state))).toEqual(new Set(['CA', 'TX']));
    const every = await list(
      '?status=active,paused&type=full-time,contract,part-time&workplace=on-site,hybrid&department=engineering&state=CA,TX,CO&limit=100',
    );
    const expected = await countWhere(
      `status in ('active','paused') and type in ('full-time','contract','part-time') and workplace in ('on-site','hybrid') and department = 'Engineering' and state in ('CA','TX','CO')`,
    );
    expect(expected).toBeGreaterThan(0);
    expect(every.body.meta.total).toBe(expected);
    expect(every.body.data).toHaveLength(expected);
  });

  test('a state that is not a two-letter code is a 400 that says what is', async () => {
    expectJsonError(
      await list('?state=California'),
      400,
      'state must be a two-letter code such as CA (or a comma-separated list of them); got "California"',
    );
    expectJsonError(
      await list('?state=CA,,TX'),
      400,
      'state must be a two-letter code such as CA (or a comma-separated list of them); got ""',
    );
  });

  test('SQL-looking values are data, not SQL', async () => {
    const res = await list(`?department=${encodeURIComponent("x' OR '1'='1")}`);
    expect(res.status).toBe(200);
    expect(res.body.meta.total).toBe(0);
    const bad = await list(`?status=${encodeURIComponent("active' OR 1=1 --")}`);
    expect(bad.status).toBe(400);
  });
});

describe('GET /api/v1/jobs: pagination and parameter checks', () => {
  test('page and limit shape meta; a page past the end is empty with true meta', async () => {
    const total = await countWhere(`status in ('active','open')`);
    const second = await list('?page=2&limit=5');
    expect(second.body.meta).toEqual({ total, page: 2, limit: 5, totalPages: Math.ceil(total / 5) });
    const past = await list('?page=999999999&limit=100');
    expect(past.status).toBe(200);
    expect(past.body).toEqual({
      data: [],
      meta: { total, page: 999999999, limit: 100, totalPages: Math.ceil(total / 100) },
    });
  });

  test.each(['0', '101', '-1', '2.5', 'abc', '', '1e2', '99999999999999999999'])(
    'limit=%s is a 400 that names the bounds',
    async (value) => {
      const res = await list(`?limit=${value}`);
      expectJsonError(res, 400, 'limit must be an integer from 1 to 100');
    },
  );

  test.each(['0', '-3', '1.5', 'first', '99999999999999999'])('page=%s is a 400', async (value) => {
    const res = await list(`?page=${value}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^page must be/);
  });

  test('limit=1 and limit=100 are accepted', async () => {
    expect((await list('?limit=1')).body.data).toHaveLength(1);
    expect((await list('?limit=100')).status).toBe(200);
  });

  test('an unknown parameter is a 400 naming it and the allowed ones', async () => {
    const res = await list('?sort=title');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`Unknown query parameter "sort". Allowed: ${ALLOWED}`);
  });

  test('a repeated list filter is the comma list it spells; a repeated scalar is a 400, not a silent pick', async () => {
    const repeated = await list('?status=active&status=paused&state=CA&state=tx&limit=100');
    const comma = await list('?status=active,paused&state=CA,tx&limit=100');
    expect(repeated.status).toBe(200);
    expect(repeated.body).toEqual(comma.body);
    expect(repeated.body.meta.total).toBeGreaterThan(0);
    for (const scalar of ['limit=1&limit=2', 'page=1&page=2', 'department=a&department=b', 'cursor=&cursor='])
      expect([scalar, (await list(`?${scalar}`)).status]).toEqual([scalar, 400]);
  });

  test('api_key is tolerated and never echoed', async () => {
    const ok = await list('?api_key=demo-secret-value&limit=1');
    expect(ok.status).toBe(200);
    const bad = await list('?api_key=demo-secret-value&limit=0');
    expect(bad.status).toBe(400);
    expect(bad.text).not.toContain('demo-secret-value');
    expect(service.logs.join('\n')).not.toContain('demo-secret-value');
  });

  test('empty and unknown enum values are 400s', async () => {
    expect((await list('?status=')).status).toBe(400);
    expect((await list('?status=active,,open')).status).toBe(400);
    expect((await list('?workplace=moon')).status).toBe(400);
    expect((await list('?department=%20%20')).status).toBe(400);
    expect((await list(`?department=${'x'.repeat(101)}`)).status).toBe(400);
  });
});

/**
 * GET /api/v1/jobs: the exact 400 a partner reads for each kind of bad filter (issue 12: tests
 * checked the status only), and the lenient spellings that are not errors.
 */
describe('filter messages', () => {
  const service = sharedTestService({ name: 'list_messages', seed: true });

  const list = (query: string) => call(`${service.url}/api/v1/jobs${query}`, { headers: reader });

  test.each([
    ['?status=draft', 'status=draft is not available: drafts are never listed (fetch your own draft by id)'],
    ['?status=open,draft', 'status=draft is not available: drafts are never listed (fetch your own draft by id)'],
    [
      '?status=published',
      'status must be one of active, open, paused, closed (or a comma-separated list of them); got "published"',
    ],
    ['?status=', 'status must be one of active, open, paused, closed (or a comma-separated list of them); got ""'],
    [
      '?status=active,,open',
      'status must be one of active, open, paused, closed (or a comma-separated list of them); got ""',
    ],
    [
      '?status=Open',
      'status must be one of active, open, paused, closed (or a comma-separated list of them); got "Open"',
    ],
    ['?type=remote', 'remote is not a job type; to find remote roles filter on workplace=remote'],
    [
      '?type=freelance',
      'type must be one of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams (or a comma-separated list of them); got "freelance"',
    ],
    [
      '?workplace=moon',
      'workplace must be one of on-site, hybrid, remote (or a comma-separated list of them); got "moon"',
    ],
    ['?workplace=remote', null],
    ['?department=%20%20', 'department must not be empty'],
    [`?department=${'d'.repeat(101)}`, 'department must be at most 100 characters'],
    ['?page=0', 'page must be a whole number, 1 or more'],
    ['?page=two', 'page must be a whole number, 1 or more'],
    ['?limit=101', 'limit must be an integer from 1 to 100'],
    ['?limit=00000000000000005', 'limit must be an integer from 1 to 100'],
    [
      '?limit=5&limit=6',
      'Query parameter "limit" was given more than once; send one value (only status, type, workplace, state take several)',
    ],
    [
      '?status=open&status=',
      'status must be one of active, open, paused, closed (or a comma-separated list of them); got ""',
    ],
    ['?status=%20paused', 'status takes its values without spaces around them; got " paused"'],
    ['?state=CA,+TX', 'state takes its values without spaces around them; got " TX"'],
    ['?type=contract&type=remote', 'remote is not a job type; to find remote roles filter on workplace=remote'],
  ])('%s', async (query, message) => {
    const res = await list(query);
    if (message === null) {
      expect(res.status).toBe(200);
    } else {
      expectJsonError(res, 400, message);
    }
  });

  describe('long values are clipped to 40 characters in the message', () => {
    test('a value of 41 characters', async () => {
      const value = 'x'.repeat(41);
      const res = await list(`?status=${value}`);
      expect(res.body.error).toBe(
        `status must be one of active, open, paused, closed (or a comma-separated list of them); got "${'x'.repeat(40)}…"`,
      );
    });

    test('a value of exactly 40 characters is quoted whole', async () => {
      const value = 'y'.repeat(40);
      const res = await list(`?workplace=${value}`);
      expect(res.body.error).toBe(
        `workplace must be one of on-site, hybrid, remote (or a comma-separated list of them); got "${value}"`,
      );
    });

    test('an unknown parameter name', async () => {
      const res = await list(`?${'p'.repeat(45)}=1`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^Unknown query parameter "${'p'.repeat(40)}…"\\. Allowed: `));
    });
  });

  describe('spellings that are not errors', () => {
    test('a list filter repeated, as a comma list, or both at once', async () => {
      const repeated = await list('?status=active&status=closed&type=contract&type=full-time&limit=100');
      const mixed = await list('?status=active,closed&type=contract&type=full-time&limit=100');
      const comma = await list('?status=active,closed&type=contract,full-time&limit=100');
      expect(repeated.status).toBe(200);
      expect(repeated.body).toEqual(comma.body);
      expect(mixed.body).toEqual(comma.body);
      expect(comma.body.meta.total).toBeGreaterThan(0);
    });

    test('a value repeated inside one list counts once', async () => {
      const twice = await list('?type=contract,contract&limit=100');
      const once = await list('?type=contract&limit=100');
      expect(twice.status).toBe(200);
      expect(twice.body).toEqual(once.body);
    });

    test('16 digits are still a number: limit=0000000000000005 is 5', async () => {
      const res = await list('?limit=0000000000000005');
      expect(res.status).toBe(200);
      expect(res.body.meta.limit).toBe(5);
      expect(res.body.data).toHaveLength(5);
    });

    test('page and limit at their bounds', async () => {
      expect((await list('?page=1&limit=1')).body.meta).toMatchObject({ page: 1, limit: 1 });
      expect((await list('?limit=100')).body.meta.limit).toBe(100);
      expect((await list('?department=' + 'd'.repeat(100))).status).toBe(200);
    });

    test('api_key in the query is ignored (the gateway strips it; a direct caller may still send it)', async () => {
      const res = await list('?api_key=demo-reader-2f6c1a9e&limit=3');
      expect(res.status).toBe(200);
      expect(res.body.meta.limit).toBe(3);
      expect(res.text).not.toContain('demo-reader-2f6c1a9e');
    });
  });
});

/**
 * GET /api/v1/jobs: exact 400s at the edges of page, limit and cursor that a mutation run showed
 * unpinned (issue 12), with the values just inside them accepted.
 */
describe('page and limit edges', () => {
  const service = sharedTestService({ name: 'list_edges' });

  const list = (query: string) => call(`${service.url}/api/v1/jobs${query}`, { headers: reader });
  const PAGE = 'page must be a whole number, 1 or more';
  const LIMIT = 'limit must be an integer from 1 to 100';

  refusesQueries(list, [
    ['page with a letter after the digits', '?page=2x', PAGE],
    ['page with a letter before the digits', '?page=x2', PAGE],
    ['limit 0', '?limit=0', LIMIT],
    ['limit with a letter after the digits', '?limit=5a', LIMIT],
    ['limit with a letter before the digits', '?limit=a5', LIMIT],
    ['limit as a decimal', '?limit=2.5', LIMIT],
    // Longer than any cursor the API hands out: refused before it is even checked.
    [
      'cursor of 201 characters',
      `?cursor=${'A'.repeat(201)}`,
      'cursor is not valid: pass meta.nextCursor back exactly as it was given',
    ],
    [
      'cursor given twice',
      '?cursor=&cursor=',
      'Query parameter "cursor" was given more than once; send one value (only status, type, workplace, state take several)',
    ],
    [
      'an unknown parameter in offset mode names the offset parameters',
      '?sort=title',
      `Unknown query parameter "sort". Allowed: ${ALLOWED}`,
    ],
    [
      'an unknown parameter of exactly 40 characters is quoted whole',
      `?${'p'.repeat(40)}=1`,
      `Unknown query parameter "${'p'.repeat(40)}". Allowed: ${ALLOWED}`,
    ],
  ]);

  test("a page number past the largest safe one is a 400 that names the largest, never zod's own text", async () => {
    for (const page of ['9007199254740992', '9999999999999999']) {
      const res = await list(`?page=${page}`);
      expectJsonError(res, 400, 'page must be at most 9007199254740991');
    }
  });

  test('the largest safe page number is a page (an empty one), and the default limit is 20', async () => {
    const res = await list('?page=9007199254740991');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta).toMatchObject({ page: 9007199254740991, limit: 20 });
  });
});

/**
 * Where a listing ends, as a partner paging or walking it sees it: no Link header and no
 * nextCursor on the last page (of either mode) or past the end, full pages up to it, ties on
 * createdAt broken by the larger id, and the department filter matching whatever the case.
 * Found unpinned by mutation run I (db/jobs/listing.ts, list-plan.ts).
 */
describe('paging edges', () => {
  let service: TestService;
  const list = (query: string) => call(`${service.url}/api/v1/jobs?${query}`, { headers: reader });

  beforeAll(async () => {
    service = await startTestService({ name: 'paging_edges' });
    // Exactly 6 listed jobs in Engineering, 4 of them created at the same instant.
    const rows = generateJobs({
      count: 6,
      seed: 21,
      newest: new Date('2026-04-01T00:00:00Z'),
      firstNumber: 1,
      statusFor: () => 'active',
    });
    for (const [i, row] of rows.entries()) {
      row.department = 'Engineering';
      row.type = i % 2 === 0 ? 'contract' : 'full-time';
      row.workplace = 'remote';
      row.createdAt = new Date(i < 4 ? '2026-03-01T10:00:00.000Z' : `2026-02-0${i}T10:00:00.000Z`);
    }
    await insertInBatches(service.database.db, rows);
  });
  afterAll(() => service.close());
  // Every state the fixture's jobs are in.
  const STATES = 'AZ,CA,CO,GA,IL,MA,NC,OH,TX,WA';

  describe('offset pages', () => {
    test('a listing that fits on the first page has no Link header', async () => {
      const res = await list('limit=6');
      expect(res.body.data).toHaveLength(6);
      expect(res.body.meta).toEqual({ total: 6, page: 1, limit: 6, totalPages: 1 });
      expect(res.headers.get('link')).toBeNull();
    });

    test('a middle page links on; the last, partial page does not', async () => {
      const middle = await list('limit=4&page=1');
      expect(middle.body.data).toHaveLength(4);
      expect(middle.headers.get('link')).toMatch(/^<\/api\/v1\/jobs\?limit=4&cursor=[^>]+>; rel="next"$/);
      const last = await list('limit=4&page=2');
      expect(last.body.data).toHaveLength(2);
      expect(last.headers.get('link')).toBeNull();
    });

    test('the next page keeps every filter: status, type, workplace, department and state', async () => {
      const res = await list(
        `limit=1&status=active&type=contract,full-time&workplace=remote,hybrid&department=Engineering&state=${STATES}`,
      );
      const link = new URL(/^<([^>]+)>/.exec(res.headers.get('link') ?? '')![1]!, 'http://x');
      expect(Object.fromEntries([...link.searchParams].filter(([name]) => name !== 'cursor'))).toEqual({
        status: 'active',
        type: 'contract,full-time',
        workplace: 'remote,hybrid',
        department: 'Engineering',
        state: STATES,
        limit: '1',
      });
    });

    test('the last page that is exactly full has no Link header', async () => {
      const last = await list('limit=3&page=2');
      expect(last.body.data).toHaveLength(3);
      expect(last.headers.get('link')).toBeNull();
    });

    test('a page past the end is empty, keeps the total and has no Link header', async () => {
      const res = await list('limit=4&page=3');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], meta: { total: 6, page: 3, limit: 4, totalPages: 2 } });
      expect(res.headers.get('link')).toBeNull();
    });
  });

  describe('a cursor walk', () => {
    test('reads full pages, and the page that ends the listing exactly has nextCursor null', async () => {
      const first = await list('limit=3&cursor=');
      expect(first.body.data).toHaveLength(3);
      expect(first.body.meta.nextCursor).toEqual(expect.any(String));
      const second = await list(`limit=3&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`);
      expect(second.body.data).toHaveLength(3);
      expect(second.body.meta.nextCursor).toBeNull();
      expect(second.headers.get('link')).toBeNull();
    });
  });

  describe('listing order', () => {
    test('jobs created at the same instant come by descending id, the same on every page size', async () => {
      const all = (await list('limit=6')).body.data as Job[];
      const tied = all.slice(0, 4);
      expect(new Set(tied.map((job) => job.createdAt)).size).toBe(1);
      expect(tied.map((job) => job.id)).toEqual(
        tied
          .map((job) => job.id)
          .sort()
          .reverse(),
      );
      const paged = [...(await list('limit=2&page=1')).body.data, ...(await list('limit=2&page=2')).body.data];
      expect(paged.map((job: Job) => job.id)).toEqual(tied.map((job) => job.id));
    });

    test('rows read back in any order are sorted newest first, then by the larger id', () => {
      const row = (createdAt: string, id: string) => ({ createdAt, id }) as Job;
      const rows = [
        row('2026-01-01T00:00:00.000Z', 'b'),
        row('2026-01-02T00:00:00.000Z', 'a'),
        row('2026-01-01T00:00:00.000Z', 'c'),
        row('2026-01-01T00:00:00.000Z', 'a'),
        row('2026-01-03T00:00:00.000Z', 'a'),
      ];
      for (const start of [0, 1, 2, 3, 4]) {
        const rotated = [...rows.slice(start), ...rows.slice(0, start)];
        expect(rotated.sort(byListingOrder).map((r) => `${r.createdAt.slice(8, 10)}${r.id}`)).toEqual([
          '03a',
          '02a',
          '01c',
          '01b',
          '01a',
        ]);
      }
    });
  });

  describe('the department filter', () => {
    test.each(['ENGINEERING', 'engineering', ' Engineering '])(
      '%j matches every job of the department, on the page as in the total',
      async (department) => {
        for (const status of ['', '&status=active']) {
          const res = await list(`limit=6&department=${encodeURIComponent(department)}${status}`);
          expect(res.body.meta.total).toBe(6);
          expect(res.body.data).toHaveLength(6);
        }
      },
    );
  });
});
