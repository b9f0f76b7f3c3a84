import { and, eq, getTableColumns, gt, sql } from 'drizzle-orm';
import type { MySqlColumn, MySqlTable } from 'drizzle-orm/mysql-core';
import type { Database } from '../client';
import { jobCounts, jobDayCounts } from '../schema';

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

/** Adds committed connection rows into slot 0, skipping the rows of open transactions. */
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
      // Property keys of the columns, for the insert builder's values.
      const keyOf = new Map(Object.entries(getTableColumns(table)).map(([key, column]) => [column, key]));
      const field = (column: MySqlColumn) => keyOf.get(column)!;
      await tx
        .insert(table)
        .values(
          folded.map(({ key, n: sum }) =>
            Object.fromEntries([
              ...keys.map((column, i) => [field(column), key[i]]),
              [field(slot), 0],
              [field(n), sum],
            ]),
          ),
        )
        .onDuplicateKeyUpdate({ set: { [field(n)]: sql`${n} + values(${n})` } });
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

/** Folds on `primary` in the background when a total read connection rows, unless a fold runs or ran in the last FOLD_INTERVAL_MS. */
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
