/**
 * Query plans of listing pages and totals on 20,000 jobs, for every kind of filter: status
 * (default, one, a list), type (none, one, a list), workplace (none, one, a list), department
 * (none, one) and state (with each of the others), in each paging mode. What this proves, per combination:
 * - the page reads ids from the index of the filter matching fewest jobs (its leading columns are
 *   the status lead and that filter, its last two the listing order): one `ref`/`range` read per
 *   value combination, index only unless other filters are checked on its rows, never a filesort or
 *   temporary table on `jobs`, never a full scan of the table or an index; then each of the page's
 *   rows by primary key (`eq_ref`);
 * - a list filter's reads are merged by one sort over their union, which holds at most
 *   combinations x (offset + limit) ids (each read stops there: LIMIT), never the matching rows;
 * - the storage engine hands over no more rows than that bound times the index entries per match
 *   (handler counters: the index entries, each row checked by key, then the ids again from the
 *   union): a property of the filters, not of the table's size;
 * - the total is a range read of job_counts' primary key, a few rows per filter group; or, for a
 *   filter job_counts does not keep (state), a count on the page's index that stops one past the bound;
 * - a page in the back half of a listing is read the same way from the end, stepping over the
 *   entries after it rather than before it;
 * - a deep page of a status-only filter (the default listing included) first walks the day
 *   counts (job_day_counts, in primary-key order, no sort) to the day holding its first row, then
 *   steps over that day's entries only;
 * - and the page is exactly what a plain ORDER BY over the base columns returns.
 */
import type { RowDataPacket } from 'mysql2';
import { JOB_TYPES } from '../../../domain/job';
import { COUNTED_UP_TO } from '../../../domain/list-filters';
import { planList } from '../../../db/jobs/listing/plan';
import { daysStatement, pageStatement } from '../../../db/jobs/listing/statements';
import { LIST_QUERY } from '../../../service/jobs/contract/queries';
import { queryReader } from '../../../service/http/validate';
import { count } from 'drizzle-orm';
import { prepare, query, type Statement } from '../../../db/sql';
import { jobs } from '../../../db/schema';
import { countJobs, dayReadsOn, listJobs, startAtDay, type ListMode } from '../../../db/jobs/listing';
import { pageRead, rowsRead as engineRowsRead, statementsOf, totalRead } from '../../helpers/statements';
import { freshDatabase, type TestDatabase } from '../../helpers/database';

const parseListQuery = queryReader(LIST_QUERY);

const ROWS = 20_000;
let database: TestDatabase;

const DIGITS =
  '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';

beforeAll(async () => {
  database = await freshDatabase('list_explain');
  // One job a minute, ids growing with created_at; statuses, types, workplaces (a quarter without
  // one) and departments (spelled in several cases) spread so every combination has rows; one in
  // fifty soft-deleted.
  await database.query(`
    INSERT INTO jobs (id, title, department, location, workplace, state, type, description, requirements, responsibilities, status, created_at, deleted_at)
    SELECT UNHEX(CONCAT(LPAD(HEX(n), 12, '0'), '7000', '8000', LPAD(HEX(n), 12, '0'))),
      CONCAT('Job ', n), ELT(1 + n % 7, 'Engineering', 'Finance', ' finance ', 'Sales', 'Data & Analytics', 'FINANCE', 'Operations'),
      '', ELT(1 + n % 4, 'on-site', 'hybrid', 'remote', NULL), ELT(1 + (n DIV 7) % 11, 'CA', 'TX', 'CO', 'IL', 'MA', 'WA', 'GA', 'NC', 'AZ', 'OH', NULL),
      ELT(1 + n % 6, 'full-time', 'part-time', 'contract', 'contract-to-hire', 'direct-hire', 'managed-teams'),
      'Generated for the plan tests.', '[]', '[]', ELT(1 + n % 5, 'draft', 'active', 'open', 'paused', 'closed'),
      TIMESTAMPADD(MINUTE, n, '2020-01-01'), IF(n % 50 = 7, '2024-01-01', NULL)
    FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n FROM ${DIGITS} a, ${DIGITS} b, ${DIGITS} c, ${DIGITS} e, ${DIGITS} f) numbers
    WHERE n < ${ROWS}`);
  await database.query('ANALYZE TABLE jobs, job_counts');
}, 120_000);
afterAll(() => database.close());

const STATUSES = ['', 'status=paused', 'status=open,active', 'status=active,open,paused,closed'];
const TYPES = ['', 'type=contract', 'type=contract,part-time', `type=${JOB_TYPES.join(',')}`];
const WORKPLACES = ['', 'workplace=remote', 'workplace=remote,hybrid'];
const DEPARTMENTS = ['', 'department=finance'];
// A filter job_counts does not keep (state) alone, as a list past the bound on totals, and with every other kind.
const STATES = [
  'state=CA',
  'state=ca,tx',
  'status=paused&state=CA',
  'type=contract,part-time&state=TX',
  'workplace=remote&department=finance&state=CA,TX,CO',
  'status=open,active&type=contract&workplace=remote,hybrid&department=finance&state=CO',
];
const FILTERS = [
  ...STATUSES.flatMap((s) =>
    TYPES.flatMap((t) => WORKPLACES.flatMap((w) => DEPARTMENTS.map((d) => [s, t, w, d].filter(Boolean).join('&')))),
  ),
  ...STATES,
];

type Step = {
  id: number | null;
  select_type: string;
  table: string;
  type: string;
  key: string | null;
  Extra: string | null;
};

async function explain({ sql, params }: Statement): Promise<Step[]> {
  const [rows] = await database.pool.query<RowDataPacket[]>(`EXPLAIN ${sql}`, params);
  return rows as Step[];
}

/** Rows read (key lookups included) for one run of the statement. */
const rowsRead = (statement: Statement) => engineRowsRead(database.pool, statement, { withKeyLookups: true });

const parse = (filter: string, extra = '') =>
  parseListQuery(Object.fromEntries(new URLSearchParams([filter, extra].filter(Boolean).join('&'))));

/** The filter's matching rows, from the base columns (not the service's derived ones). */
function matching(filter: string, after?: { createdAt: string; id: string }): { where: string; params: unknown[] } {
  const query = parse(filter);
  const statuses = query.status ?? ['active', 'open'];
  const conditions = ['deleted_at IS NULL', `status IN (${statuses.map(() => '?').join(',')})`];
  const params: unknown[] = [...statuses];
  if (query.type) {
    conditions.push(`type IN (${query.type.map(() => '?').join(',')})`);
    params.push(...query.type);
  }
  if (query.workplace) {
    conditions.push(`workplace IN (${query.workplace.map(() => '?').join(',')})`);
    params.push(...query.workplace);
  }
  if (query.department) {
    conditions.push('LOWER(TRIM(department)) = LOWER(?)');
    params.push(query.department);
  }
  if (query.state) {
    conditions.push(`state IN (${query.state.map(() => '?').join(',')})`);
    params.push(...query.state);
  }
  if (after) {
    conditions.push('(created_at, id) < (?, UNHEX(?))');
    params.push(after.createdAt.replace('T', ' ').replace('Z', ''), after.id.replace(/-/g, ''));
  }
  return { where: conditions.join(' AND '), params };
}

/** The filter's ids in listing order by a plain ORDER BY (whatever plan it takes). */
async function expectedIds(
  filter: string,
  skip: number,
  take: number,
  after?: { createdAt: string; id: string },
): Promise<string[]> {
  const { where, params } = matching(filter, after);
  const rows = await database.query<RowDataPacket[]>(
    `SELECT LOWER(HEX(id)) AS h FROM jobs WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
    [...params, take, skip],
  );
  return rows.map(({ h }) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`);
}

/** Index entries per matching job: the jobs the index's ranges hold over the jobs that pass every filter. */
async function entriesPerMatch(filter: string): Promise<number> {
  const plan = planList(parse(filter));
  if (plan.checks.length === 0) return 1;
  let entries = 0;
  for (const range of plan.ranges) {
    const inRange = prepare({ n: count() }, (select) => select.from(jobs).where(range));
    const [row] = await query(database.db, inRange, plan.values);
    entries += row!.n;
  }
  const { where, params } = matching(filter);
  const [[counted]] = await database.pool.query<RowDataPacket[]>(
    `SELECT COUNT(*) AS n FROM jobs WHERE ${where}`,
    params,
  );
  return entries / Math.max(1, Number(counted!.n));
}

/** The plan checks of the file's comment, for a statement that skips `skip` and takes `take` per read. */
async function checkStatement(filter: string, statement: Statement, skip: number, take: number): Promise<void> {
  const plan = planList(parse(filter));
  const reads = plan.ranges.length;
  const checked = plan.checks.length > 0;
  const steps = await explain(statement);
  const idReads = steps.filter((step) => step.table === 'jobs' && step.key === plan.index);
  expect(idReads).toHaveLength(reads);
  for (const step of idReads) {
    expect(['ref', 'range']).toContain(step.type);
    // Index only, unless another filter is checked on the rows.
    if (!checked) expect(step.Extra).toMatch(/Using index/);
  }
  expect(steps.filter((step) => step.table === 'jobs' && step.key === 'PRIMARY').map((step) => step.type)).toEqual([
    'eq_ref',
  ]);
  for (const step of steps) {
    // Only derived results (the page's ids, their union) are read whole; `jobs` never is.
    if (step.table === 'jobs') {
      expect(['ALL', 'index']).not.toContain(step.type);
      expect(step.Extra ?? '').not.toMatch(/filesort|temporary/);
    } else {
      expect(step.table).toMatch(/^<(derived|union)[\d,]+>$/);
    }
  }
  // One read: no sort at all. Several: one sort, over the union of the reads (each LIMITed).
  expect(steps.filter((step) => /filesort/.test(step.Extra ?? ''))).toHaveLength(reads === 1 ? 0 : 1);

  // What the engine reads: each combination's entries until its first skip + take matches (the
  // filters checked on rows multiply them by the entries per match, and read each row by key),
  // those ids again from the union, then the page's ids and rows by key. Never the table's size.
  const perMatch = await entriesPerMatch(filter);
  const entries = reads * (skip + take + 1) * perMatch * 1.2;
  expect(await rowsRead(statement)).toBeLessThanOrEqual(
    (checked ? 2 : 1) * entries + reads * (skip + take + 1) + 2 * take + 10,
  );
}

/**
 * A page as listJobs reads it: plan checks of the statement it ran, then its page against a plain
 * ORDER BY. A page past the end runs no page statement at all.
 */
async function checkPage(
  filter: string,
  mode: ListMode,
  { skip, take, after }: { skip: number; take: number; after?: { createdAt: string; id: string } },
): Promise<void> {
  const query = parse(filter, 'limit=20');
  const { result: page, statements } = await statementsOf(() => listJobs(database.db, query, mode));
  const statement = pageRead(statements);
  if (statement) await checkStatement(filter, statement, skip, take);
  else expect('page' in mode && (mode.page - 1) * 20 >= page.total).toBe(true);
  expect(page.rows.map((row) => row.id)).toEqual(await expectedIds(filter, skip, 20, after));
}

describe.each(FILTERS.map((filter) => [filter || '(default)', filter]))('%s', (_name, filter) => {
  const reads = planList(parse(filter)).ranges.length;

  test.concurrent(
    `pages 1 and 3 and a cursor page: ${reads} index read(s) in order, rows by primary key, at most ${reads} x (offset + limit) ids sorted`,
    async () => {
      // A position some way into the filter, for the cursor page.
      const [row] = (await listJobs(database.db, { ...parse(filter), limit: 1 }, { page: 50 })).rows;
      const after = row && { createdAt: row.createdAt, id: row.id };
      await Promise.all([
        checkPage(filter, { page: 1 }, { skip: 0, take: 20 }),
        checkPage(filter, { page: 3 }, { skip: 40, take: 20 }),
        checkPage(
          filter,
          { after: after ? { createdAt: new Date(after.createdAt), id: after.id } : null },
          { skip: 0, take: 21, after },
        ),
      ]);
    },
  );

  test.concurrent(
    'a page in the back half is read from the end: the same plan, stepping over the entries after it',
    async () => {
      const { where, params } = matching(filter);
      const [[counted]] = await database.pool.query<RowDataPacket[]>(
        `SELECT COUNT(*) AS n FROM jobs WHERE ${where}`,
        params,
      );
      const total = Number(counted!.n);
      // The second-to-last page; where that is not in the back half, the forward pages cover it.
      const page = Math.ceil(total / 20) - 1;
      const offset = (page - 1) * 20;
      if (page < 2 || offset < total / 2) return;
      const plan = planList(parse(filter));
      if (!plan.counted && total > COUNTED_UP_TO) {
        // Past the bound the end is not known: the page is read forward, its total the bound.
        const served = await listJobs(database.db, parse(filter, 'limit=20'), { page });
        expect(served.total).toBe(COUNTED_UP_TO);
        expect(served.rows.map((row) => row.id)).toEqual(await expectedIds(filter, offset, 20));
        return;
      }
      const take = Math.min(20, total - offset);
      const fromEnd = total - offset - take;
      await checkStatement(
        filter,
        pageStatement(plan, { after: null, skip: fromEnd, take, fromEnd: true }),
        fromEnd,
        take,
      );
      const served = await listJobs(database.db, parse(filter, 'limit=20'), { page });
      expect(served.total).toBe(total);
      expect(served.rows.map((row) => row.id)).toEqual(await expectedIds(filter, offset, 20));
    },
  );

  test.concurrent('a deep page of a status-only filter starts at its day and skips within that day only', async () => {
    const plan = planList(parse(filter));
    if (!plan.statusesOnly) return; // Only status filters have day counts; the others step over entries.
    const { where, params } = matching(filter);
    const [[counted]] = await database.pool.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM jobs WHERE ${where}`,
      params,
    );
    const total = Number(counted!.n);
    // One job a minute: a day holds at most 1,440 of a filter's jobs.
    const days = plan.statusesOnly;
    const dayStatement = daysStatement({ statuses: days, fromEnd: false, past: undefined, days: 100 });
    const daySteps = await explain(dayStatement);
    expect(daySteps).toHaveLength(1);
    expect(daySteps[0]).toMatchObject({ table: 'job_day_counts', key: 'PRIMARY' });
    expect(daySteps[0]!.Extra ?? '').not.toMatch(/filesort|temporary/);
    expect(await rowsRead(dayStatement)).toBeLessThanOrEqual(100 * 4 * 2 + 2);
    for (const share of [0.3, 0.7]) {
      const page = Math.floor((total * share) / 20);
      const offset = (page - 1) * 20;
      const fromEnd = total - offset - 20;
      const window =
        fromEnd < offset
          ? { after: null, skip: fromEnd, take: 20, fromEnd: true }
          : { after: null, skip: offset, take: 20 };
      expect(window.skip).toBeGreaterThanOrEqual(1000);
      const started = await startAtDay(dayReadsOn(database.db), days, window);
      expect(started.from).toBeDefined();
      expect(started.skip).toBeLessThan(1440);
      await checkStatement(filter, pageStatement(plan, started), started.skip, 20);
      const served = await listJobs(database.db, parse(filter, 'limit=20'), { page });
      expect(served.rows.map((row) => row.id)).toEqual(await expectedIds(filter, offset, 20));
    }
  });

  test.concurrent(
    "the total: exact from job_counts by primary key, or counted on the page's index up to the bound",
    async () => {
      const { result: counted, statements } = await statementsOf(() => countJobs(database.db, parse(filter)));
      const { where, params } = matching(filter);
      const [[row]] = await database.pool.query<RowDataPacket[]>(
        `SELECT COUNT(*) AS n FROM jobs WHERE ${where}`,
        params,
      );
      const actual = Number(row!.n);
      const plan = planList(parse(filter));
      if (plan.counted) {
        const count = totalRead(statements)!;
        const steps = await explain(count);
        expect(steps).toHaveLength(1);
        expect(steps[0]).toMatchObject({ table: 'job_counts', key: 'PRIMARY' });
        expect(['ref', 'range']).toContain(steps[0]!.type);
        // The counter rows of the filter's groups: at most 4 x 6 x 4 groups, each a folded row and
        // the rows of connections not folded yet (here: the one that loaded the table).
        expect(await rowsRead(count)).toBeLessThanOrEqual(2 * 4 * 6 * 4 + 2);
        expect(counted).toMatchObject({ total: actual, exact: true });
        return;
      }
      const [count] = statements;
      const steps = await explain(count!);
      const read = steps.find((step) => step.table === 'jobs')!;
      expect(read.key).toBe(plan.index);
      expect(['ref', 'range']).toContain(read.type);
      if (plan.checks.length === 0) expect(read.Extra).toMatch(/Using index/);
      // Never more than the bound's worth of matches, however large the table.
      expect(await rowsRead(count!)).toBeLessThanOrEqual(
        (COUNTED_UP_TO + 1) * (await entriesPerMatch(filter)) * 2.4 + 10,
      );
      expect(counted).toMatchObject(
        actual > COUNTED_UP_TO ? { total: COUNTED_UP_TO, exact: false } : { total: actual, exact: true },
      );
    },
  );
});

test('a deep offset page of one index reads offset + limit entries of it, and no more', async () => {
  const query = parse('', 'limit=20');
  const shallow = await rowsRead(
    pageRead((await statementsOf(() => listJobs(database.db, query, { page: 1 }))).statements)!,
  );
  const deep = await rowsRead(
    pageRead((await statementsOf(() => listJobs(database.db, query, { page: 200 }))).statements)!,
  );
  // Page 1: 20 index entries, the 20 ids read back, 20 rows by key. Page 200: 3,980 more entries.
  expect(shallow).toBeLessThanOrEqual(3 * 20 + 10);
  expect(deep).toBeLessThanOrEqual(199 * 20 + 3 * 20 + 10);
});

test('a page that starts exactly at the end reads the total and nothing else', async () => {
  const query = parse('', 'limit=20');
  const { total } = await countJobs(database.db, query);
  const page = Math.floor(total / 20) + 1;
  // Only a page whose offset equals the total exercises the boundary; the fixture's size says whether this one does.
  expect(total % 20).toBe(0);
  const { result: served, statements } = await statementsOf(() => listJobs(database.db, query, { page }));
  expect(served).toEqual({ rows: [], total, hasMore: false });
  expect(pageRead(statements)).toBeUndefined();
  expect(statements.filter((one) => !one.sql.includes('from `job_counts`'))).toEqual([]);
});
