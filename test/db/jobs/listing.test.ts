/**
 * Deep offset pages against MariaDB: pages more than 1,000 rows from either end start at their
 * day, found by walking job_day_counts 100 days per statement (db/jobs/listing.ts,
 * listing/statements.ts). Whatever the walk, a page is exactly the rows plain
 * ORDER BY ... LIMIT ... OFFSET returns. 2,600 listed jobs over 260 days make every walk read more
 * than one statement's days, from the newest day and from the oldest.
 */
import type { RowDataPacket } from 'mysql2/promise';
import { insertInBatches } from '../../../db/seed';
import { generateJobs } from '../../../db/seed-data';
import { LIST_QUERY } from '../../../service/jobs/contract/queries';
import { queryReader } from '../../../service/http/validate';
import { and, sql, type SQL } from 'drizzle-orm';
import { listJobs } from '../../../db/jobs/listing';
import { planList, type ListPlan } from '../../../db/jobs/listing/plan';
import { jobs } from '../../../db/schema';
import { bind, prepare } from '../../../db/sql';
import { freshDatabase, type TestDatabase } from '../../helpers/database';
import { DEFAULT_STATUSES, JOB_TYPES } from '../../../domain/job';
import type { ListFilter } from '../../../domain/list-filters';

const parseListQuery = queryReader(LIST_QUERY);

let database: TestDatabase;
let total: number;
beforeAll(async () => {
  database = await freshDatabase('deep_page_db');
  // Ten jobs a day (one every 2.4 hours) for 260 days.
  const rows = generateJobs({
    count: 2600,
    seed: 11,
    newest: new Date('2026-06-01T00:00:00Z'),
    spacingMs: 8_640_000,
    firstNumber: 1,
    statusFor: () => 'active',
  });
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

/**
 * planList (db/jobs/listing/plan.ts) where the mutation run found it unpinned: which index a
 * listing reads when a filter names every value, how a department is matched, and which listings
 * have day counts a deep page may start from (test/db/jobs/listing-windows.test.ts uses them).
 */
describe('planList', () => {
  /** A condition of the plan as drizzle writes it, with the plan's values. */
  const written = (plan: ListPlan, condition: SQL | undefined) => {
    const compiled = prepare({ one: sql`1` }, (select) => select.from(jobs).where(condition));
    const { sql: text, params } = bind(compiled, plan.values);
    return { sql: text.slice(text.indexOf(' where ') + ' where '.length), params };
  };
  /** Each range of the plan with the checks on its rows, as one read of the page states them. */
  const reads = (plan: ListPlan) => plan.ranges.map((range) => written(plan, and(range, ...plan.checks)));

  test('all six types is the unfiltered listing: one read of the listing index, with day counts for deep pages', () => {
    const plan = planList({ type: [...JOB_TYPES] });
    expect(plan).toMatchObject({ index: 'jobs_listed_idx', counted: true, statusesOnly: DEFAULT_STATUSES });
    expect(plan.checks).toEqual([]);
    expect(reads(plan)).toEqual([{ sql: '`jobs`.`listed` = ?', params: [true] }]);
    expect(written(plan, plan.matching)).toEqual({ sql: '`jobs`.`listed` = ?', params: [true] });
  });

  test('five of the six types is a type filter: one read of the type index per type', () => {
    const five = JOB_TYPES.slice(0, 5);
    const plan = planList({ type: [...five] });
    expect(plan.index).toBe('jobs_listed_type_idx');
    expect(reads(plan).map(({ params }) => params)).toEqual(five.map((type) => [true, type]));
  });

  test('department is matched as department_key is stored, lowered; no other filter value is', () => {
    // department_key is lower(trim(department)) in a binary collation, and the query keeps the partner's case.
    const plan = planList({ status: ['paused'], department: 'Finance', type: ['contract'], workplace: ['remote'] });
    expect(reads(plan)).toEqual([
      {
        sql: '((`jobs`.`visible_status` = ? and `jobs`.`department_key` = lower(?)) and `jobs`.`type` = ? and `jobs`.`workplace` = ?)',
        params: ['paused', 'Finance', 'contract', 'remote'],
      },
    ]);
  });

  test('several filters read the index of the one matching fewest jobs, one range per value, and check the others on its rows', () => {
    // A department matches fewer jobs than two types; two workplaces more than one type.
    const plan = planList({
      status: ['paused', 'closed'],
      department: 'Finance',
      type: ['contract', 'direct-hire'],
      workplace: ['remote', 'hybrid'],
    });
    expect(plan.index).toBe('jobs_status_department_idx');
    expect(reads(plan)).toEqual(
      ['paused', 'closed'].map((status) => ({
        sql: '((`jobs`.`visible_status` = ? and `jobs`.`department_key` = lower(?)) and `jobs`.`type` in (?, ?) and `jobs`.`workplace` in (?, ?))',
        params: [status, 'Finance', 'contract', 'direct-hire', 'remote', 'hybrid'],
      })),
    );
    expect(planList({ type: ['contract'], workplace: ['remote', 'hybrid'] }).index).toBe('jobs_listed_type_idx');
    expect(planList({ type: ['contract', 'direct-hire', 'full-time'], workplace: ['remote'] }).index).toBe(
      'jobs_listed_workplace_idx',
    );
  });

  test.each<[string, ListFilter['status'], readonly string[]]>([
    ['the default listing', undefined, DEFAULT_STATUSES],
    ['status=open,active', ['open', 'active'], ['open', 'active']],
    ['status=paused,closed', ['paused', 'closed'], ['paused', 'closed']],
  ])('%s filters on statuses only, so its deep pages may start at their day', (_name, status, statuses) => {
    expect(planList({ status }).statusesOnly).toEqual(statuses);
  });

  test.each<[string, ListFilter]>([
    ['a type', { type: ['contract'] }],
    ['a workplace', { workplace: ['remote'] }],
    ['a department', { department: 'Finance' }],
    ['a status and a department', { status: ['paused'], department: 'Finance' }],
  ])('a listing filtered by %s has no day counts: they count every type, workplace and department', (_name, query) => {
    expect(planList(query)).not.toHaveProperty('statusesOnly');
  });
});
