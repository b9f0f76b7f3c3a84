import { and, eq, getTableColumns, inArray, sql, type SQL } from 'drizzle-orm';
import { getTableConfig, type MySqlColumn } from 'drizzle-orm/mysql-core';
import { DEFAULT_STATUSES } from '../../../domain/job';
import {
  FILTER_NAMES,
  LIST_FILTERS,
  type FilterDeclaration,
  type FilterName,
  type ListFilter,
} from '../../../domain/list-filters';
import { jobs } from '../../schema';

/**
 * How a listing page is read. Each filter but status has two indexes, (lead, its column,
 * created_at, id), one per lead: `listed` (active or open, not deleted) for the default statuses,
 * else `visible_status` (db/schema.ts). A page reads the index of the filter that matches fewest
 * jobs, one ordered range per value, and checks the other filters on the rows it meets.
 */

type Lead = 'listed' | 'status';
const LEADS: Record<Lead, MySqlColumn> = { listed: jobs.listed, status: jobs.visibleStatus };

interface Narrowing {
  name: FilterName;
  declared: FilterDeclaration;
  column: MySqlColumn;
}

/** The jobs column a declaration names (its key in db/schema.ts). */
export function columnOf(key: string): MySqlColumn {
  const column = (getTableColumns(jobs) as Record<string, MySqlColumn>)[key];
  if (!column) throw new Error(`domain/list-filters.ts names ${key}, which db/schema.ts's jobs table does not have`);
  return column;
}

/** Every filter but status (which picks the lead), in declared order. */
export const NARROWING: Narrowing[] = FILTER_NAMES.filter((name) => name !== 'status').map((name) => ({
  name,
  declared: LIST_FILTERS[name],
  column: columnOf(LIST_FILTERS[name].column),
}));

/** The schema's index for a lead and filter ('' for none), found by its columns: a missing one is a schema mistake, found at start-up. */
const INDEXES = (() => {
  const byColumns = new Map(
    getTableConfig(jobs).indexes.map((index) => [
      index.config.columns.map((column) => (column as MySqlColumn).name).join(),
      index.config.name,
    ]),
  );
  const found = new Map<string, string>();
  for (const [lead, leadColumn] of Object.entries(LEADS)) {
    for (const narrowing of [undefined, ...NARROWING]) {
      const key = [leadColumn, ...(narrowing ? [narrowing.column] : []), jobs.createdAt, jobs.id]
        .map((column) => column.name)
        .join();
      const name = byColumns.get(key);
      if (!name) throw new Error(`db/schema.ts has no index on (${key}) for listings`);
      found.set(`${lead}:${narrowing?.name ?? ''}`, name);
    }
  }
  return found;
})();

export interface ListPlan {
  /** The index every read of the page uses. */
  index: string;
  /** One ordered range of the index per lead value x index filter value: its conditions on the index's leading columns. */
  ranges: SQL[];
  /** The other filters' conditions, checked on the rows each range reads. */
  checks: SQL[];
  /** Every condition at once, value lists as `in`: what a bounded count reads. */
  matching: SQL;
  /** The total is exact from job_counts: no filter outside it is given. */
  counted: boolean;
  /** For a filter on statuses only (the default listing included): those statuses, whose day counts cover it. */
  statusesOnly?: readonly string[];
}

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value) => b.includes(value));
}

/** A filter's values as the query gives them, or undefined when it does not narrow the listing. */
function valuesOf({ declared, name }: Narrowing, query: ListFilter): readonly string[] | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value === 'string') return [value];
  // Every value of a filter every job has is no filter (type is never NULL; a NULL workplace is none of them).
  if (declared.kind === 'values' && declared.everyJobHasOne && sameSet(value, declared.values)) return undefined;
  return value;
}

export const among = (column: MySqlColumn, values: readonly unknown[]) => inArray(column, [...values]);
const oneOf = (column: MySqlColumn, values: readonly unknown[]) =>
  values.length === 1 ? eq(column, values[0]) : among(column, values);

/** The plan for a listing's filters; paging comes later. */
export function planList(query: ListFilter): ListPlan {
  // Asking for active and open is asking for the default listing: one read of `listed`.
  const listed = !query.status || sameSet(query.status, DEFAULT_STATUSES);
  const lead: Lead = listed ? 'listed' : 'status';
  const leadColumn = LEADS[lead];
  const leads: readonly unknown[] = listed ? [true] : query.status!;
  const used = NARROWING.flatMap((narrowing) => {
    const given = valuesOf(narrowing, query);
    // A text filter's value as the column stores it: folded (lower).
    const stored = (value: string) => (narrowing.declared.kind === 'text' ? sql`lower(${value})` : value);
    return given ? [{ narrowing, values: given.map(stored) }] : [];
  });
  // The index of the filter that matches fewest jobs; the others are checked on its rows.
  const share = ({ narrowing, values }: (typeof used)[number]) => values.length * narrowing.declared.percentPerValue;
  const chosen = used.reduce<(typeof used)[number] | undefined>(
    (best, next) => (best === undefined || share(next) < share(best) ? next : best),
    undefined,
  );
  const checks = used
    .filter((filter) => filter !== chosen)
    .map(({ narrowing, values }) => oneOf(narrowing.column, values));
  return {
    index: INDEXES.get(`${lead}:${chosen?.narrowing.name ?? ''}`)!,
    ranges: chosen
      ? leads.flatMap((value) =>
          chosen.values.map((one) => and(eq(leadColumn, value), eq(chosen.narrowing.column, one))!),
        )
      : leads.map((value) => eq(leadColumn, value)),
    checks,
    matching: and(
      oneOf(leadColumn, leads),
      ...(chosen ? [oneOf(chosen.narrowing.column, chosen.values)] : []),
      ...checks,
    )!,
    counted: used.every(({ narrowing }) => narrowing.declared.counted),
    ...(used.length === 0 ? { statusesOnly: query.status ?? DEFAULT_STATUSES } : {}),
  };
}
