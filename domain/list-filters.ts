import { JOB_TYPES, LISTED_STATUSES, TEXT_LIMITS, WORKPLACES, DEFAULT_STATUSES } from './job';

/**
 * The listing's filters, each declared once. The query's rules and documentation
 * (service/jobs/contract/queries.ts), the SQL and its indexes (db/schema.ts, db/jobs/listing.ts),
 * a cursor's filter, the guides' "Allowed" text and the benchmark's baseline derive from this.
 * Adding a filter is an entry here and the migration `npm run db:generate` writes for its indexes;
 * then `npm run openapi`, and the guides test names the guide lines whose shown text to update.
 */

interface Declared {
  /** The jobs table's column the filter matches (its key in db/schema.ts), of the stored value as the filter folds it. */
  column: string;
  /** What the reference page says of it. */
  description: string;
  example: string;
  /** About how many jobs in a hundred one value matches: the planner reads the index of the filter matching fewest. */
  percentPerValue: number;
  /** Every job has a value: asking for all of them is no filter at all. */
  everyJobHasOne?: true;
  /** A cursor made before filters were declared one by one names this filter even when unset (as null). */
  inEveryCursor?: true;
  /** Totals kept exact by job_counts for any combination of these (its key columns); other filters count their totals up to a bound. */
  counted?: true;
}

/** One or more allowed values, e.g. `type=full-time&type=contract` or `type=full-time,contract`. */
export interface ValuesFilter extends Declared {
  kind: 'values';
  values: readonly string[];
  /** A message for a value that is a common mistake, instead of the list of allowed ones. */
  explain?: (value: string) => string | undefined;
}

/** One or more codes of one shape, e.g. `state=CA&state=TX` or `state=CA,TX`, read in upper case (as stored). */
export interface CodesFilter extends Declared {
  kind: 'codes';
  pattern: RegExp;
  /** Every code's length (the pattern's too): what the document bounds each with. */
  length: number;
  /** The rule, in the error for a value that breaks it. */
  rule: string;
}

/** One text value, matched exactly but case-insensitive, surrounding spaces ignored. */
export interface TextFilter extends Declared {
  kind: 'text';
  maxLength: number;
}

export type FilterDeclaration = ValuesFilter | CodesFilter | TextFilter;

/** Every filter, in the order the query string's documentation and its errors list them. `status` leads every index. */
export const LIST_FILTERS = {
  status: {
    kind: 'values',
    values: LISTED_STATUSES,
    column: 'visibleStatus',
    description: 'One or more of active, open, paused, closed. Default: active,open. draft is never listed (400).',
    example: 'active,paused',
    percentPerValue: 25,
    explain: (value) =>
      value === 'draft'
        ? 'status=draft is not available: drafts are never listed (fetch your own draft by id)'
        : undefined,
    inEveryCursor: true,
    counted: true,
  },
  type: {
    kind: 'values',
    values: JOB_TYPES,
    column: 'type',
    description:
      'One or more of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams. remote is not a type (400): use workplace.',
    example: 'full-time,contract',
    percentPerValue: 17,
    explain: (value) =>
      value === 'remote' ? 'remote is not a job type; to find remote roles filter on workplace=remote' : undefined,
    everyJobHasOne: true,
    inEveryCursor: true,
    counted: true,
  },
  workplace: {
    kind: 'values',
    values: WORKPLACES,
    column: 'workplace',
    description: 'One or more of on-site, hybrid, remote.',
    example: 'remote,hybrid',
    percentPerValue: 30,
    inEveryCursor: true,
    counted: true,
  },
  department: {
    kind: 'text',
    maxLength: TEXT_LIMITS.department,
    column: 'departmentKey',
    description: `Exact department name, case-insensitive, surrounding spaces ignored (+ and %20 are spaces). 1 to ${TEXT_LIMITS.department} characters.`,
    example: 'Engineering',
    percentPerValue: 10,
    inEveryCursor: true,
    counted: true,
  },
  state: {
    kind: 'codes',
    pattern: /^[A-Za-z]{2}$/,
    length: 2,
    rule: 'a two-letter code such as CA',
    column: 'state',
    description: 'One or more two-letter state codes (any case): the jobs whose state is one of them.',
    example: 'CA,TX',
    percentPerValue: 5,
  },
} as const satisfies Record<string, FilterDeclaration>;

/** A listing filtered on a filter job_counts does not keep counts its total up to this many: more reads as this many. */
export const COUNTED_UP_TO = 1000;

export type FilterName = keyof typeof LIST_FILTERS;
export const FILTER_NAMES = Object.keys(LIST_FILTERS) as FilterName[];

type ValueOf<D> = D extends { kind: 'values'; values: readonly (infer V)[] }
  ? ReadonlyArray<V>
  : D extends { kind: 'codes' }
    ? readonly string[]
    : string;

/** A listing's filter; each list holds distinct values (the query parser sees to that). */
export type ListFilter = { [K in FilterName]?: ValueOf<(typeof LIST_FILTERS)[K]> };

/** The declarations by name, for code that walks them without knowing which there are. */
export type Filters = Readonly<Record<string, FilterDeclaration>>;
/** A filter (or a whole query) read by name: only declared names count. */
export type AnyFilter = { readonly [name: string]: unknown };

/**
 * A filter in one canonical string, what a cursor is signed for: lists sorted, the default status
 * spelled out, text folded as the database folds it. A filter is named only when given, except the
 * ones every cursor has always named: so a filter declared later leaves every outstanding cursor valid.
 */
export function canonicalFilter(filter: AnyFilter, filters: Filters = LIST_FILTERS): string {
  const given: AnyFilter = { ...filter, status: filter.status ?? DEFAULT_STATUSES };
  const named = Object.entries(filters).filter(
    ([name, declared]) => given[name] !== undefined || declared.inEveryCursor,
  );
  const canonical = (value: unknown) =>
    value === undefined
      ? null
      : typeof value === 'string'
        ? value.toLowerCase()
        : [...(value as readonly string[])].sort();
  return JSON.stringify(Object.fromEntries(named.map(([name]) => [name, canonical(given[name])])));
}
