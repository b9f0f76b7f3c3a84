import { and, eq, getTableName, gt, sql } from 'drizzle-orm';
import type { MySqlColumn, MySqlTable } from 'drizzle-orm/mysql-core';
import type { Database } from '../../db/client';
import { jobCounts, jobDayCounts } from '../../db/schema';
import type { Statement } from './job-rows';
import { DEFAULT_STATUSES, type ListQuery } from './list-query';

/**
 * A listing's exact total from job_counts (kept by triggers on `jobs`, migrations 0008 and 0010):
 * the sum of the counter rows of the filter's statuses, types and workplaces, over all
 * departments or in the one asked for. That is a read of one primary-key prefix, at most
 * 4 x 6 x 4 groups of a folded row plus the rows not folded yet, the same at 1,000 jobs as at
 * 10,000,000, where COUNT(*) read every matching index entry.
 */
const quote = (name: string) => `\`${name}\``;
const c = (column: { name: string }) => quote(column.name);
const inList = (column: { name: string }, values: readonly unknown[]) => `${c(column)} in (${values.map(() => '?').join(', ')})`;

export function countStatement(query: Pick<ListQuery, 'status' | 'type' | 'workplace' | 'department'>): Statement {
  const department = query.department === undefined ? `${c(jobCounts.departmentKey)} = ''` : `${c(jobCounts.departmentKey)} = lower(?)`;
  const statuses = query.status ?? DEFAULT_STATUSES;
  const conditions = [`${c(jobCounts.byDepartment)} = ?`, department, inList(jobCounts.status, statuses)];
  const params: unknown[] = [query.department !== undefined, ...(query.department === undefined ? [] : [query.department]), ...statuses];
  if (query.type) {
    conditions.push(inList(jobCounts.type, query.type));
    params.push(...query.type);
  }
  if (query.workplace) {
    conditions.push(inList(jobCounts.workplace, query.workplace));
    params.push(...query.workplace);
  }
  return {
    // SUMs of BIGINTs are DECIMALs: the pool reads DECIMALs as numbers (db/client.ts). The second
    // column counts the rows read that a fold would merge.
    sql: `select coalesce(sum(${c(jobCounts.n)}), 0), coalesce(sum(${c(jobCounts.slot)} <> 0), 0) from ${quote(getTableName(jobCounts))} where ${conditions.join(' and ')}`,
    params,
  };
}

/**
 * Up to `days` days of job_day_counts in listing order (newest first) or, `fromEnd`, oldest first,
 * after `past` when given: each day with its count of jobs in `statuses`. The primary key starts
 * with the day, so the rows are grouped in index order and the read stops after `days` days.
 */
export function dayCountsStatement(statuses: readonly string[], fromEnd: boolean, past: string | undefined, days: number): Statement {
  const day = c(jobDayCounts.day);
  const conditions = [inList(jobDayCounts.status, statuses), ...(past === undefined ? [] : [`${day} ${fromEnd ? '>' : '<'} ?`])];
  return {
    sql: `select ${day}, sum(${c(jobDayCounts.n)}) from ${quote(getTableName(jobDayCounts))} where ${conditions.join(' and ')} group by ${day} order by ${day}${fromEnd ? '' : ' desc'} limit ?`,
    params: [...statuses, ...(past === undefined ? [] : [past]), days],
  };
}

export interface Counted {
  total: number;
  /** Connection rows among those summed: a fold would make the next total cheaper. */
  unfolded: number;
}

export const countedOf = (rows: unknown[][]): Counted => ({ total: Number(rows[0]?.[0] ?? 0), unfolded: Number(rows[0]?.[1] ?? 0) });

/** Connection rows folded per transaction. */
export const FOLD_BATCH = 100;
/** Batches per background fold: a backlog (after a bulk import) is folded over a few reads. */
const FOLD_BATCHES = 10;

/** A counter table kept per connection: its key columns (without `slot`), `slot` and `n`. */
interface Counters {
  table: MySqlTable;
  keys: MySqlColumn[];
  slot: MySqlColumn;
  n: MySqlColumn;
}

const COUNTERS: Counters[] = [
  {
    table: jobCounts,
    keys: [jobCounts.byDepartment, jobCounts.departmentKey, jobCounts.status, jobCounts.type, jobCounts.workplace],
    slot: jobCounts.slot,
    n: jobCounts.n,
  },
  { table: jobDayCounts, keys: [jobDayCounts.day, jobDayCounts.status], slot: jobDayCounts.slot, n: jobDayCounts.n },
];

/**
 * Adds committed connection rows (slot > 0) of one counter table to their group's folded row
 * (slot 0) and deletes them, in one transaction, so totals never change. `SKIP LOCKED` passes
 * over the rows of connections whose transaction is still open (their count is not final; a
 * later fold takes them), so a fold never waits for a writer; a writer waits at most for a
 * fold's few statements. Each row is deleted by its whole primary key: a single DELETE naming
 * them all may be run as a scan of this small table, which would wait on the rows open
 * transactions hold. READ COMMITTED keeps the fold from taking gap locks that would hold up
 * writers' new rows. Folded rows are upserted in key order, so two folds (two instances) cannot
 * deadlock on them. Returns the number of rows folded.
 */
async function foldTable(db: Database, { table, keys, slot, n }: Counters): Promise<number> {
  return db.transaction(
    async (tx) => {
      const selected = Object.fromEntries([...keys, slot, n].map((column) => [column.name, column]));
      const rows = (await tx
        .select(selected)
        .from(table)
        .where(gt(slot, 0))
        .limit(FOLD_BATCH)
        .for('update', { skipLocked: true })) as Array<Record<string, unknown>>;
      if (rows.length === 0) return 0;
      const groups = new Map<string, { key: unknown[]; n: number }>();
      for (const row of rows) {
        const key = keys.map((column) => row[column.name]);
        const id = JSON.stringify(key);
        const group = groups.get(id) ?? { key, n: 0 };
        group.n += Number(row[n.name]);
        groups.set(id, group);
      }
      const folded = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, group]) => group);
      const names = sql.join([...keys, slot, n].map((column) => sql.identifier(column.name)), sql`, `);
      const values = folded.map(({ key, n: sum }) => sql`(${sql.join([...key, 0, sum].map((value) => sql`${value}`), sql`, `)})`);
      await tx.execute(
        sql`insert into ${table} (${names}) values ${sql.join(values, sql`, `)} on duplicate key update ${sql.identifier(n.name)} = ${sql.identifier(n.name)} + values(${sql.identifier(n.name)})`,
      );
      for (const row of rows) {
        await tx.delete(table).where(and(...[...keys, slot].map((column) => eq(column, row[column.name]))));
      }
      return rows.length;
    },
    { isolationLevel: 'read committed' },
  );
}

/** One fold of every counter table (job_counts, job_day_counts); the rows folded, in all. */
export async function foldJobCounts(db: Database): Promise<number> {
  let folded = 0;
  for (const counters of COUNTERS) folded += await foldTable(db, counters);
  return folded;
}

/** A fold at most this often per database and process: a handful of statements a second at most. */
export const FOLD_INTERVAL_MS = 1000;
const folds = new WeakMap<Database, { running: boolean; last: number }>();

/**
 * Folds on `primary` in the background when a total read connection rows, unless a fold runs or
 * ran in the last FOLD_INTERVAL_MS. A failed fold (shutdown, a deadlock with a writer) changes
 * nothing and is retried by a later read, so its error is dropped.
 */
export function foldSoon(primary: Database, now = Date.now()): void {
  const state = folds.get(primary) ?? { running: false, last: 0 };
  folds.set(primary, state);
  if (state.running || now - state.last < FOLD_INTERVAL_MS) return;
  state.running = true;
  state.last = now;
  (async () => {
    for (let batch = 0; batch < FOLD_BATCHES; batch++) {
      let full = false;
      for (const counters of COUNTERS) full = (await foldTable(primary, counters)) === FOLD_BATCH || full;
      if (!full) break;
    }
  })()
    .catch(() => undefined)
    .finally(() => {
      state.running = false;
    });
}
