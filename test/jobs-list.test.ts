import { JOB_TYPES } from '../db/schema';
import { Job } from '../service/jobs/job';
import { call } from './helpers/http';
import { reader } from './helpers/consumers';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
const list = (query = '') => call(`${service.url}/api/v1/jobs${query}`, { headers: reader });

// What the seeded table holds, counted straight from the database to compare against the API.
async function countWhere(condition: string, values: unknown[] = []): Promise<number> {
  const [row] = await service.database.query<Array<{ n: number }>>(
    `select count(*) as n from jobs where deleted_at is null and ${condition}`,
    values,
  );
  return Number(row!.n);
}

beforeAll(async () => {
  service = await startTestService({ name: 'list', seed: true });
});
afterAll(() => service.close());

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

    const mixed = await list('?status=closed,%20paused&limit=100');
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
    expect(past.body).toEqual({ data: [], meta: { total, page: 999999999, limit: 100, totalPages: Math.ceil(total / 100) } });
  });

  test.each(['0', '101', '-1', '2.5', 'abc', '', '1e2', '99999999999999999999'])(
    'limit=%s is a 400 that names the bounds',
    async (value) => {
      const res = await list(`?limit=${value}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'limit must be an integer from 1 to 100' });
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
    expect(res.body.error).toBe(
      'Unknown query parameter "sort". Allowed: status, type, workplace, department, page, limit',
    );
  });

  test('a repeated parameter is a 400, not a silent pick', async () => {
    const res = await list('?status=active&status=paused');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/"status" was given more than once/);
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
