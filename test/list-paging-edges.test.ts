/**
 * Where a listing ends, as a partner paging or walking it sees it: no Link header and no
 * nextCursor on the last page (of either mode) or past the end, full pages up to it, ties on
 * createdAt broken by the larger id, and the department filter matching whatever the case.
 * Found unpinned by mutation run I (service/jobs/repository.ts, list-plan.ts).
 */
import { generateJobs } from '../db/seed-data';
import { insertInBatches } from '../db/seed';
import type { PublicJobRow } from '../service/jobs/columns';
import { byListingOrder } from '../service/jobs/repository';
import { reader } from './helpers/consumers';
import { call } from './helpers/http';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
const list = (query: string) => call(`${service.url}/api/v1/jobs?${query}`, { headers: reader });

beforeAll(async () => {
  service = await startTestService({ name: 'paging_edges' });
  // Exactly 6 listed jobs in Engineering, 4 of them created at the same instant.
  const rows = generateJobs({ count: 6, seed: 21, newest: new Date('2026-04-01T00:00:00Z'), firstNumber: 1, statusFor: () => 'active' });
  for (const [i, row] of rows.entries()) {
    row.department = 'Engineering';
    row.type = i % 2 === 0 ? 'contract' : 'full-time';
    row.workplace = 'remote';
    row.createdAt = new Date(i < 4 ? '2026-03-01T10:00:00.000Z' : `2026-02-0${i}T10:00:00.000Z`);
  }
  await insertInBatches(service.database.db, rows);
});
afterAll(() => service.close());

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

  test('the next page keeps every filter: status, type, workplace and department', async () => {
    const res = await list('limit=1&status=active&type=contract,full-time&workplace=remote,hybrid&department=Engineering');
    const link = new URL(/^<([^>]+)>/.exec(res.headers.get('link') ?? '')![1]!, 'http://x');
    expect(Object.fromEntries([...link.searchParams].filter(([name]) => name !== 'cursor'))).toEqual({
      status: 'active',
      type: 'contract,full-time',
      workplace: 'remote,hybrid',
      department: 'Engineering',
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
    const all = (await list('limit=6')).body.data as PublicJobRow[];
    const tied = all.slice(0, 4);
    expect(new Set(tied.map((job) => job.createdAt)).size).toBe(1);
    expect(tied.map((job) => job.id)).toEqual(tied.map((job) => job.id).sort().reverse());
    const paged = [...(await list('limit=2&page=1')).body.data, ...(await list('limit=2&page=2')).body.data];
    expect(paged.map((job: PublicJobRow) => job.id)).toEqual(tied.map((job) => job.id));
  });

  test('rows read back in any order are sorted newest first, then by the larger id', () => {
    const row = (createdAt: string, id: string) => ({ createdAt, id }) as PublicJobRow;
    const rows = [
      row('2026-01-01T00:00:00.000Z', 'b'),
      row('2026-01-02T00:00:00.000Z', 'a'),
      row('2026-01-01T00:00:00.000Z', 'c'),
      row('2026-01-01T00:00:00.000Z', 'a'),
      row('2026-01-03T00:00:00.000Z', 'a'),
    ];
    for (const start of [0, 1, 2, 3, 4]) {
      const rotated = [...rows.slice(start), ...rows.slice(0, start)];
      expect(rotated.sort(byListingOrder).map((r) => `${r.createdAt.slice(8, 10)}${r.id}`)).toEqual(['03a', '02a', '01c', '01b', '01a']);
    }
  });
});

describe('the department filter', () => {
  test.each(['ENGINEERING', 'engineering', ' Engineering '])('%j matches every job of the department, on the page as in the total', async (department) => {
    for (const status of ['', '&status=active']) {
      const res = await list(`limit=6&department=${encodeURIComponent(department)}${status}`);
      expect(res.body.meta.total).toBe(6);
      expect(res.body.data).toHaveLength(6);
    }
  });
});
