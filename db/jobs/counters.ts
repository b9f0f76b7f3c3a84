import { and, eq, getTableColumns, gt, sql } from 'drizzle-orm';
import type { MySqlColumn, MySqlTable } from 'drizzle-orm/mysql-core';
import { jobCounts, jobDayCounts } from '../schema';
import { execute, qb, select, transaction, type Database, type Selection } from '../sql';

/** Connection rows folded per transaction. */
export const FOLD_BATCH = 100;
/** Batches per fold: a backlog (after a bulk import) is folded over a few runs. */
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
  // An idle table costs one plain read a run, not a transaction.
  const [waiting] = await select(db, { one: sql<number>`1` }, (query) => query.from(table).where(gt(slot, 0)).limit(1));
  if (waiting === undefined) return 0;
  return transaction(
    db,
    async (tx) => {
      const selected: Selection = Object.fromEntries([...keys, slot, n].map((column) => [column.name, column]));
      const rows: Array<Record<string, unknown>> = await select(tx, selected, (query) =>
        query.from(table).where(gt(slot, 0)).limit(FOLD_BATCH).for('update', { skipLocked: true }),
      );
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
      await execute(
        tx,
        qb
          .insert(table)
          .values(
            folded.map(({ key, n: sum }) =>
              Object.fromEntries<unknown>([
                ...keys.map((column, i) => [field(column), key[i]] as const),
                [field(slot), 0],
                [field(n), sum],
              ]),
            ),
          )
          .onDuplicateKeyUpdate({ set: { [field(n)]: sql`${n} + values(${n})` } }),
      );
      for (const row of rows) {
        await execute(
          tx,
          qb.delete(table).where(and(...[...keys, slot].map((column) => eq(column, row[column.name])))),
        );
      }
      return rows.length;
    },
    'read committed',
  );
}

/**
 * Folds connection rows into slot 0 until none are left or FOLD_BATCHES batches of every table are
 * done: the periodic task's step (service/housekeeping.ts). The rows folded, in all.
 */
export async function foldJobCounts(db: Database): Promise<number> {
  let folded = 0;
  for (let batch = 0; batch < FOLD_BATCHES; batch++) {
    let full = false;
    for (const counters of COUNTERS) {
      const rows = await foldTable(db, counters);
      folded += rows;
      full ||= rows === FOLD_BATCH;
    }
    if (!full) break;
  }
  return folded;
}
