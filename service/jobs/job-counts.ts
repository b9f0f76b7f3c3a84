import { and, eq, getTableName, gt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { jobCounts } from '../../db/schema';
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

/**
 * Adds committed connection rows (slot > 0) to their group's folded row (slot 0) and deletes
 * them, in one transaction, so totals never change. `SKIP LOCKED` passes over the rows of
 * connections whose transaction is still open (their count is not final; a later fold takes
 * them), so a fold never waits for a writer; a writer waits at most for a fold's few statements.
 * Each row is deleted by its whole primary key: a single DELETE naming them all may be run as a
 * scan of this small table, which would wait on the rows open transactions hold. READ COMMITTED
 * keeps the fold from taking gap locks that would hold up writers' new rows. Folded rows are
 * upserted in key order, so two folds (two instances) cannot deadlock on them. Returns the
 * number of rows folded.
 */
export async function foldJobCounts(db: Database): Promise<number> {
  return db.transaction(
    async (tx) => {
      const rows = await tx
        .select()
        .from(jobCounts)
        .where(gt(jobCounts.slot, 0))
        .limit(FOLD_BATCH)
        .for('update', { skipLocked: true });
      if (rows.length === 0) return 0;
      const groups = new Map<string, (typeof rows)[number]>();
      for (const row of rows) {
        const key = JSON.stringify([row.byDepartment, row.departmentKey, row.status, row.type, row.workplace]);
        const group = groups.get(key);
        if (group) group.n += row.n;
        else groups.set(key, { ...row, slot: 0 });
      }
      const folded = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, group]) => group);
      await tx
        .insert(jobCounts)
        .values(folded)
        .onDuplicateKeyUpdate({ set: { n: sql`${jobCounts.n} + values(${jobCounts.n})` } });
      for (const row of rows) {
        await tx
          .delete(jobCounts)
          .where(
            and(
              eq(jobCounts.byDepartment, row.byDepartment),
              eq(jobCounts.departmentKey, row.departmentKey),
              eq(jobCounts.status, row.status),
              eq(jobCounts.type, row.type),
              eq(jobCounts.workplace, row.workplace),
              eq(jobCounts.slot, row.slot),
            ),
          );
      }
      return rows.length;
    },
    { isolationLevel: 'read committed' },
  );
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
      if ((await foldJobCounts(primary)) < FOLD_BATCH) break;
    }
  })()
    .catch(() => undefined)
    .finally(() => {
      state.running = false;
    });
}
