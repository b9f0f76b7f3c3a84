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
import { bound, perShape, type Values } from '../../sql';

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

/** What a plan's statements' text depends on: which lead and filters, and how many values each has. */
export interface PlanShape {
  lead: Lead;
  leads: number;
  /** The filter whose index is read, and its values' count. */
  chosen?: [FilterName, number];
  /** The filters checked on the rows read, with their values' counts. */
  checked: Array<[FilterName, number]>;
}

export interface ListPlan {
  /** The plan's statements are compiled once per shape (db/sql.ts perShape). */
  shape: PlanShape;
  /** The values of the plan's placeholders, by name. */
  values: Values;
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

/** `count` placeholders `name0`, `name1`, ... bound to `column`. */
export const placeholders = (name: string, count: number, column: MySqlColumn) =>
  Array.from({ length: count }, (_, i) => bound(`${name}${i}`, column));

/** Values for placeholders(name, values.length, ...). */
export const valuesFor = (name: string, values: readonly unknown[]): Values =>
  Object.fromEntries(values.map((value, i) => [`${name}${i}`, value]));

const NARROWING_BY_NAME = new Map(NARROWING.map((narrowing) => [narrowing.name, narrowing]));

/** A filter's placeholders as its column stores the value: a text filter's folded (lower). */
function filterValues(name: FilterName, count: number): SQL[] {
  const { declared, column } = NARROWING_BY_NAME.get(name)!;
  return placeholders(name, count, column).map((value) =>
    declared.kind === 'text' ? sql`lower(${value})` : sql`${value}`,
  );
}

/** A shape's index and conditions, with placeholders for its values. */
export const planConditions = perShape(({ lead, leads, chosen, checked }: PlanShape) => {
  const leadColumn = LEADS[lead];
  const leadValues = placeholders('lead', leads, leadColumn);
  const chosenColumn = chosen && NARROWING_BY_NAME.get(chosen[0])!.column;
  const chosenValues = chosen ? filterValues(...chosen) : [];
  const checks = checked.map(([name, count]) => oneOf(NARROWING_BY_NAME.get(name)!.column, filterValues(name, count)));
  return {
    index: INDEXES.get(`${lead}:${chosen?.[0] ?? ''}`)!,
    ranges: chosenColumn
      ? leadValues.flatMap((value) => chosenValues.map((one) => and(eq(leadColumn, value), eq(chosenColumn, one))!))
      : leadValues.map((value) => eq(leadColumn, value)),
    checks,
    matching: and(
      oneOf(leadColumn, leadValues),
      ...(chosenColumn ? [oneOf(chosenColumn, chosenValues)] : []),
      ...checks,
    )!,
  };
});

/** The plan for a listing's filters; paging comes later. */
export function planList(query: ListFilter): ListPlan {
  // Asking for active and open is asking for the default listing: one read of `listed`.
  const listed = !query.status || sameSet(query.status, DEFAULT_STATUSES);
  const lead: Lead = listed ? 'listed' : 'status';
  const leads: readonly unknown[] = listed ? [true] : query.status!;
  const used = NARROWING.flatMap((narrowing) => {
    const given = valuesOf(narrowing, query);
    return given ? [{ narrowing, values: given }] : [];
  });
  // The index of the filter that matches fewest jobs; the others are checked on its rows.
  const share = ({ narrowing, values }: (typeof used)[number]) => values.length * narrowing.declared.percentPerValue;
  const chosen = used.reduce<(typeof used)[number] | undefined>(
    (best, next) => (best === undefined || share(next) < share(best) ? next : best),
    undefined,
  );
  const checked = used.filter((filter) => filter !== chosen);
  const shape: PlanShape = {
    lead,
    leads: leads.length,
    ...(chosen ? { chosen: [chosen.narrowing.name, chosen.values.length] } : {}),
    checked: checked.map(({ narrowing, values }) => [narrowing.name, values.length]),
  };
  const values = Object.assign(
    valuesFor('lead', leads),
    ...used.map(({ narrowing, values: given }) => valuesFor(narrowing.name, given)),
  ) as Values;
  return {
    shape,
    values,
    ...planConditions(shape),
    counted: used.every(({ narrowing }) => narrowing.declared.counted),
    ...(used.length === 0 ? { statusesOnly: query.status ?? DEFAULT_STATUSES } : {}),
  };
}
