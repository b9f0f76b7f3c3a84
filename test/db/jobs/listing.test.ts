/**
 * Deep offset pages against MariaDB: pages more than 1,000 rows from either end start at their
 * day, found by walking job_day_counts 100 days per statement (db/jobs/listing.ts,
 * listing-statements.ts's dayCountsStatement). Whatever the walk, a page is exactly the rows plain
 * ORDER BY ... LIMIT ... OFFSET returns. 2,600 listed jobs over 260 days make every walk read more
 * than one statement's days, from the newest day and from the oldest.
 */
import type { RowDataPacket } from 'mysql2/promise';
import { insertInBatches } from '../../../db/seed';
import { generateJobs } from '../../../db/seed-data';
import { parseListQuery } from '../../../service/jobs/http/list-jobs';
import { listJobs } from '../../../db/jobs/listing';
import { freshDatabase, type TestDatabase } from '../../helpers/database';

let database: TestDatabase;
let total: number;
beforeAll(async () => {
  database = await freshDatabase('deep_page_db');
  // Ten jobs a day (one every 2.4 hours) for 260 days.
  const rows = generateJobs({ count: 2600, seed: 11, newest: new Date('2026-06-01T00:00:00Z'), spacingMs: 8_640_000, firstNumber: 1, statusFor: () => 'active' });
  await insertInBatches(database.db, rows);
  const [[row]] = await database.pool.query<RowDataPacket[]>('select count(*) as n from jobs where listed');
  total = Number(row!.n);
}, 60_000);
afterAll(() => database.close());

async function expectedIds(offset: number, limit: number): Promise<string[]> {
  const [rows] = await database.pool.query<RowDataPacket[]>(
    'select lower(hex(id)) as h from jobs where listed order by created_at desc, id desc limit ? offset ?',
    [limit, offset],
  );
  return rows.map(({ h }) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`);
}

test('the listing is deep enough for walks of several statements from both ends', () => {
  expect(total).toBeGreaterThan(2400);
});

test.each([
  ['1,200 rows from the top: the walk reads the newest 100 days, then the next', 1200],
  ['1,000 rows from the top, the threshold', 1000],
  ['1,200 rows from the end: the walk reads the oldest 100 days, then the next', () => total - 1210],
  ['the middle of the listing', () => Math.floor(total / 2)],
])('a page %s is exactly the rows of plain OFFSET', async (_name, at) => {
  const offset = typeof at === 'function' ? at() : at;
  const page = Math.floor(offset / 10) + 1;
  const { rows } = await listJobs(database.db, parseListQuery({ limit: '10', page: String(page) }));
  expect(rows.map((row) => row.id)).toEqual(await expectedIds((page - 1) * 10, 10));
});
