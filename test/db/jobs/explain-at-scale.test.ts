/**
 * Query plans on 100,000 jobs: a cursor page and a change-feed page are index range reads in
 * their own order (no filesort), and one deep in the walk reads as few rows as the first.
 */
import type { RowDataPacket } from 'mysql2';
import { claimDue, subscriptionLags } from '../../../db/webhooks/delivery';
import { freshDatabase, type TestDatabase } from '../../helpers/database';
import { readChanges } from '../../../db/jobs/change-feed';
import { LIST_QUERY } from '../../../service/jobs/contract/queries';
import { queryReader } from '../../../service/http/validate';
import { listJobs, type ListMode, type ListPosition } from '../../../db/jobs/listing';
import type { Statement } from '../../../db/sql';
import { planList } from '../../../db/jobs/listing/plan';
import { readPage } from '../../../db/jobs/listing/statements';
import { pageRead, rowsRead as engineRowsRead, rowsReadBy, statementsOf } from '../../helpers/statements';

const parseListQuery = queryReader(LIST_QUERY);

const ROWS = 100_000;
let database: TestDatabase;

// 0..99,999 from five cross-joined digit tables: fast, and no sequence engine needed (MySQL too).
const DIGITS =
  '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';

beforeAll(async () => {
  database = await freshDatabase('explain');
  // A bulk load, not 100,000 changes: without the insert triggers the jobs go in at once, and
  // job_changes is filled and numbered in one statement, the way migration 0003 numbers the jobs
  // that predate the feed. (The triggers are tested where they matter: jobs-changes*.test.ts.)
  const triggers = await database.query<Array<{ name: string }>>(
    `SELECT trigger_name AS name FROM information_schema.triggers
     WHERE event_object_schema = DATABASE() AND event_object_table = 'jobs' AND event_manipulation = 'INSERT'`,
  );
  for (const { name } of triggers) await database.query(`DROP TRIGGER \`${name}\``);
  // And the secondary indexes are built once, sorted, after the rows are in (one ALTER TABLE),
  // instead of taking 100,000 inserts each: the schema's own definitions, read back.
  const [shown] = await database.query<Array<{ 'Create Table': string }>>('SHOW CREATE TABLE jobs');
  const keys = [...shown!['Create Table'].matchAll(/^\s*KEY `([^`]+)` (\(.+\))/gm)].map(([, name, columns]) => ({
    name: name!,
    columns: columns!,
  }));
  await database.query(`ALTER TABLE jobs ${keys.map(({ name }) => `DROP INDEX \`${name}\``).join(', ')}`);
  // Ids are UUIDv7-shaped and grow with created_at, one job a minute; a fifth are drafts, one in
  // fifty soft-deleted; departments, types, workplaces and statuses spread evenly.
  await database.query(`
    INSERT INTO jobs (id, title, department, location, workplace, state, type, description, requirements, responsibilities, status, created_at, deleted_at)
    SELECT UNHEX(CONCAT(LPAD(HEX(n), 12, '0'), '7000', '8000', LPAD(HEX(n), 12, '0'))),
      CONCAT('Job ', n), ELT(1 + n % 8, 'Engineering', 'Finance', 'Sales', 'Data & Analytics', 'Marketing', 'Operations', 'Healthcare', 'Human Resources'),
      '', ELT(1 + n % 3, 'on-site', 'hybrid', 'remote'), ELT(1 + (n DIV 7) % 10, 'CA', 'TX', 'CO', 'IL', 'MA', 'WA', 'GA', 'NC', 'AZ', 'OH'),
      ELT(1 + n % 6, 'full-time', 'part-time', 'contract', 'contract-to-hire', 'direct-hire', 'managed-teams'),
      'Generated for the plan tests.', '[]', '[]', ELT(1 + n % 5, 'draft', 'active', 'open', 'paused', 'closed'),
      TIMESTAMPADD(MINUTE, n, '2020-01-01'), IF(n % 50 = 7, '2024-01-01', NULL)
    FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n FROM ${DIGITS} a, ${DIGITS} b, ${DIGITS} c, ${DIGITS} e, ${DIGITS} f) numbers`);
  await database.query(
    `ALTER TABLE jobs ${keys.map(({ name, columns }) => `ADD INDEX \`${name}\` ${columns}`).join(', ')}`,
  );
  await database.query(`
    INSERT INTO job_changes (job_id, seq, changed_at, ever_public)
    SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id), created_at, status <> 'draft' FROM jobs`);
  await database.query(`UPDATE job_change_sequence SET last_seq = ${ROWS}`);
  await database.query('ANALYZE TABLE jobs, job_changes');
}, 120_000);
afterAll(() => database.close());

type Plan = Array<{ select_type: string; table: string; type: string; key: string | null; Extra: string | null }>;

async function explain({ sql, params }: Statement): Promise<Plan> {
  const [rows] = await database.pool.query<RowDataPacket[]>(`EXPLAIN ${sql}`, params);
  return rows as Plan;
}

/** Rows read for one run of the statement. */
const rowsRead = (statement: Statement) => engineRowsRead(database.pool, statement);

/** The position of the n-th job of a filter in listing order. */
async function positionAt(query: string, n: number): Promise<ListPosition> {
  const parsed = parseListQuery(Object.fromEntries(new URLSearchParams(query)));
  // Arrangement only: this table's rows were loaded without job_counts, so the statement is run directly.
  const [row] = await readPage(database.db, planList(parsed), { after: null, skip: n, take: 1 });
  return { createdAt: row!.createdAt, id: row!.id };
}

/** The page statement listJobs runs for this query and mode. */
async function pageStatementOf(query: Parameters<typeof listJobs>[1], mode: ListMode): Promise<Statement> {
  return pageRead((await statementsOf(() => listJobs(database.db, query, mode))).statements)!;
}

/** The statement readChanges runs for a feed page after `since`. */
async function feedStatementOf(since: number, limit: number): Promise<Statement> {
  const { statements } = await statementsOf(() => readChanges(database.db, since, limit));
  return statements.find((one) => one.sql.includes('`job_changes`'))!;
}

describe('a cursor page', () => {
  test.each([
    '',
    'type=contract',
    'department=finance',
    'workplace=remote',
    'status=paused',
    'state=CA',
    'department=finance&type=part-time',
    'status=paused&state=CA,TX&workplace=remote',
  ])('%s: its ids are a range read of one index in listing order, then the rows by primary key', async (query) => {
    const parsed = parseListQuery(Object.fromEntries(new URLSearchParams(`${query}&limit=100`)));
    const deep = await positionAt(query, 1_000);
    const plan = await explain(await pageStatementOf(parsed, { after: deep }));
    // One read per value of a list filter (several are merged by a sort of their LIMITed union).
    const reads = plan.filter((step) => step.table === 'jobs' && step.key !== 'PRIMARY');
    expect(reads.length).toBeGreaterThan(0);
    for (const ids of reads) {
      expect(['range', 'ref']).toContain(ids.type);
      expect(ids.key).toMatch(/^jobs_/);
      // Index only, unless other filters are checked on the rows the index finds.
      expect(ids.Extra).toMatch(query.includes('&') ? /Using where/ : /Using index/);
    }
    for (const step of plan) {
      // The page's own ids, at most limit + 1 of them, are read whole; no table is.
      if (!step.table.startsWith('<derived')) expect(step.type).not.toBe('ALL');
      if (reads.length === 1) expect(step.Extra ?? '').not.toMatch(/filesort|temporary/);
    }
    expect(plan.find((step) => step.table === 'jobs' && step.key === 'PRIMARY')).toMatchObject({ type: 'eq_ref' });
  });

  test.each([
    ['', 5 * 4_999],
    ['state=CA', 5 * 600],
  ])('%s: a page deep in the walk reads no more rows than page 1', async (query, depth) => {
    const parsed = parseListQuery(Object.fromEntries(new URLSearchParams(`${query}&limit=5`)));
    const first = await rowsRead(await pageStatementOf(parsed, { after: null }));
    const deep = await rowsRead(await pageStatementOf(parsed, { after: await positionAt(query, depth) }));
    expect(first).toBeLessThan(100);
    expect(deep).toBeLessThanOrEqual(first);
  });
});

describe('a change-feed page', () => {
  test('is a range read of job_changes_feed_idx in change order, then each job by primary key', async () => {
    const plan = await explain(await feedStatementOf(50_000, 100));
    expect(plan[0]).toMatchObject({ table: 'job_changes', type: 'range', key: 'job_changes_feed_idx' });
    expect(plan[1]).toMatchObject({ table: 'jobs', type: 'eq_ref', key: 'PRIMARY' });
    for (const step of plan) expect(step.Extra ?? '').not.toMatch(/filesort|temporary/);
  });

  test('deep in the feed reads no more rows than at its start', async () => {
    const start = await rowsRead(await feedStatementOf(0, 100));
    const deep = await rowsRead(await feedStatementOf(90_000, 100));
    expect(start).toBeLessThan(300);
    expect(deep).toBeLessThanOrEqual(start);
    // And what it reads is the feed: 100 entries after the position.
    const page = await readChanges(database.db, 90_000, 100);
    expect(page.entries).toHaveLength(100);
    expect(page.lastSeq).toBeGreaterThan(90_100);
  });
});

describe("the dispatchers' claim and the lag metrics", () => {
  test('read a few rows of the feed, not the feed: one subscription far behind, one caught up', async () => {
    const subscription = (n: number, position: number) =>
      database.query(
        `INSERT INTO webhook_subscriptions (id, consumer_id, url, secret, position, history, next_attempt_at, created_at)
         VALUES (UNHEX(CONCAT('0190000000007000800000000000000', ?)), 'partner', 'https://example.com/hook', X'00', ?,
           (SELECT history FROM job_change_histories ORDER BY id DESC LIMIT 1), '2020-01-01', '2020-01-01')`,
        [String(n), position],
      );
    await subscription(1, 50_000);
    await subscription(2, ROWS);
    const claim = await rowsReadBy(database.url, (db) => claimDue(db, 'a-dispatcher', 60_000, 10));
    expect(claim.result.map((one) => one.position)).toEqual([50_000]);
    expect(claim.rows).toBeLessThan(50);
    const lags = await rowsReadBy(database.url, (db) => subscriptionLags(db));
    // The behind one waits for job n = 50,001 (n = 50,000 is a draft, never public), created 50,001 minutes after 2020-01-01 UTC.
    expect(
      Object.fromEntries(lags.result.map((lag) => [lag.position, lag.oldestUndelivered?.toISOString() ?? null])),
    ).toEqual({
      50000: new Date(Date.UTC(2020, 0, 1) + 50_001 * 60_000).toISOString(),
      [ROWS]: null,
    });
    expect(lags.rows).toBeLessThan(50);
  });
});
