/**
 * Cursor pagination on GET /api/v1/jobs, as a partner walking the listing to mirror it sees it.
 */
import { generateJobs } from '../../../../db/seed-data';
import { insertInBatches } from '../../../../db/seed';
import { json, reader, writer } from '../../../helpers/consumers';
import { call, type JsonResponse } from '../../../helpers/http';
import { startTestService, type TestService } from '../../../helpers/service';
import { FILTER_NAMES } from '../../../../domain/list-filters';

// Every declared filter, then the two ways to page, then limit.
const ALLOWED = [...FILTER_NAMES, 'page or cursor', 'limit'].join(', ');

let service: TestService;
const list = (query = '', headers: Record<string, string> = reader) =>
  call(`${service.url}/api/v1/jobs${query}`, { headers });

type Listed = { id: string; createdAt: string };

/** The next page's URL from a Link header, or undefined. */
function nextLink(res: JsonResponse): string | undefined {
  const link = res.headers.get('link');
  if (!link) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  if (!match) throw new Error(`unexpected Link header: ${link}`);
  return match[1];
}

/** Follows meta.nextCursor from an empty cursor to the end; `between` runs after every page. */
async function walk(filter: string, limit: number, between: (page: number) => Promise<void> = () => Promise.resolve()) {
  const pages: JsonResponse[] = [];
  let cursor = '';
  for (;;) {
    const res = await list(`?${filter}${filter ? '&' : ''}limit=${limit}&cursor=${encodeURIComponent(cursor)}`);
    expect(res.status).toBe(200);
    pages.push(res);
    if (res.body.meta.nextCursor === null) break;
    cursor = res.body.meta.nextCursor;
    await between(pages.length);
  }
  return { pages, ids: pages.flatMap((p) => p.body.data.map((j: Listed) => j.id)) };
}

async function allListedIds(statuses = `'active','open'`): Promise<string[]> {
  const rows = await service.database.query<Array<{ h: string }>>(
    `select lower(hex(id)) as h from jobs where deleted_at is null and status in (${statuses}) order by created_at desc, id desc`,
  );
  return rows.map(({ h }) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`);
}

beforeAll(async () => {
  service = await startTestService({ name: 'cursor', seed: true });
  // Enough rows for long walks, several sharing a createdAt (the id breaks the tie).
  const rows = generateJobs({
    count: 300,
    seed: 9,
    newest: new Date('2026-03-01T00:00:00Z'),
    spacingMs: 0,
    firstNumber: 1000,
    statusFor: (i) => (i % 3 === 0 ? 'paused' : 'active'),
  });
  for (const [i, row] of rows.entries()) row.createdAt = new Date(Date.UTC(2026, 1, 1) + Math.floor(i / 4) * 1000);
  await insertInBatches(service.database.db, rows);
});
afterAll(() => service.close());

describe('a cursor walk', () => {
  test('visits every listed job once, in listing order, and ends with nextCursor null and no Link', async () => {
    const expected = await allListedIds();
    const { pages, ids } = await walk('', 17);
    expect(ids).toEqual(expected);
    expect(pages.map((p) => p.body.meta.page)).toEqual(pages.map((_p, i) => i + 1));
    for (const page of pages) {
      expect(page.body.meta).toMatchObject({
        total: expected.length,
        limit: 17,
        totalPages: Math.ceil(expected.length / 17),
      });
    }
    const last = pages.at(-1)!;
    expect(last.body.meta.nextCursor).toBeNull();
    expect(last.headers.get('link')).toBeNull();
    expect(nextLink(pages[0]!)).toBe(`/api/v1/jobs?limit=17&cursor=${pages[0]!.body.meta.nextCursor}`);
  });

  test('is the same walk for a filter, and the Link header carries the filter', async () => {
    const expected = await allListedIds(`'paused','closed'`);
    const { pages, ids } = await walk('status=paused,closed&department=+engineering+', 9);
    expect(ids).toEqual(
      (
        await service.database.query<Array<{ h: string }>>(
          `select lower(hex(id)) as h from jobs where deleted_at is null and status in ('paused','closed') and department = 'Engineering' order by created_at desc, id desc`,
        )
      ).map(({ h }) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`),
    );
    expect(expected.length).toBeGreaterThan(ids.length);
    const link = new URL(nextLink(pages[0]!)!, 'http://x');
    expect(Object.fromEntries(link.searchParams)).toEqual({
      status: 'paused,closed',
      department: 'engineering',
      limit: '9',
      cursor: pages[0]!.body.meta.nextCursor,
    });
  });

  test('following Link headers from an offset page continues exactly where the offset pages would', async () => {
    const first = await list('?limit=25&page=2');
    expect(first.body.meta).toEqual(expect.not.objectContaining({ nextCursor: expect.anything() }));
    const next = await list(nextLink(first)!.replace('/api/v1/jobs', ''));
    expect(next.body.meta.page).toBe(3);
    expect(next.body.meta.nextCursor).toEqual(expect.any(String));
    expect(next.body.data).toEqual((await list('?limit=25&page=3')).body.data);
  });

  test('never repeats or skips a job that existed when it began, while jobs are created during it', async () => {
    const before = await allListedIds();
    let created = 0;
    const { ids } = await walk('', 10, async (page) => {
      // New jobs at the top, through the API...
      for (let i = 0; i < 3; i++) {
        const res = await call(`${service.url}/api/v1/jobs`, {
          method: 'POST',
          headers: { ...writer, ...json },
          body: JSON.stringify({
            title: `Walk ${page}.${i}`,
            department: 'Engineering',
            type: 'contract',
            description: 'During the walk',
            status: 'active',
          }),
        });
        expect(res.status).toBe(201);
        created += 1;
      }
      // ...and, by plain SQL, backdated ones right among the jobs still to come.
      const [row] = generateJobs({
        count: 1,
        seed: 100 + page,
        newest: new Date(Date.UTC(2026, 1, 1) + (30 - page) * 1000),
        statusFor: () => 'open',
        firstNumber: 5000 + page,
      });
      await insertInBatches(service.database.db, [row!]);
    });
    expect(created).toBeGreaterThan(30);
    expect(new Set(ids).size).toBe(ids.length); // 0 duplicates
    expect(before.filter((id) => !ids.includes(id))).toEqual([]); // 0 missing
  });
});

describe('bad cursors are 400s that say what to do', () => {
  let cursor: string;
  beforeAll(async () => {
    cursor = (await list('?limit=5&cursor=')).body.meta.nextCursor;
  });

  test.each([
    ['garbage', 'not-a-cursor'],
    ['base64 of something else', Buffer.from('{"createdAt":"2020-01-01","id":"x"}').toString('base64url')],
    ['too long', 'a'.repeat(300)],
  ])('%s', async (_label, value) => {
    const res = await list(`?cursor=${encodeURIComponent(value)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^cursor is not valid: pass meta.nextCursor/);
  });

  test('a cursor with one character changed, anywhere', async () => {
    for (const at of [0, 3, 10, 30, cursor.length - 1]) {
      const flipped = cursor.slice(0, at) + (cursor[at] === 'A' ? 'B' : 'A') + cursor.slice(at + 1);
      const res = await list(`?limit=5&cursor=${flipped}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^cursor is not valid/);
    }
  });

  test('a cursor from another filter', async () => {
    for (const filter of ['status=paused', 'type=contract', 'workplace=remote', 'department=Sales', 'status=active']) {
      const res = await list(`?${filter}&limit=5&cursor=${cursor}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^cursor belongs to another filter/);
    }
    // The same filter spelled differently is the same filter; the limit may change.
    expect((await list(`?status=open,active&limit=7&cursor=${cursor}`)).status).toBe(200);
  });

  test('cursor with page', async () => {
    const res = await list(`?page=2&cursor=${cursor}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^cursor and page cannot be combined/);
    expect((await list('?page=1&cursor=')).status).toBe(400);
  });

  test("an unknown parameter in a cursor walk names the walk's parameters", async () => {
    const res = await list(`?sort=title&cursor=${cursor}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`Unknown query parameter "sort". Allowed: ${ALLOWED}`);
  });

  test('a cursor given twice', async () => {
    expect((await list(`?cursor=${cursor}&cursor=${cursor}`)).status).toBe(400);
  });
});
