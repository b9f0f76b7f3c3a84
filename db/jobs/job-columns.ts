import { Column, is, sql, type DriverValueDecoder, type SQL } from 'drizzle-orm';
import type { SelectResultFields } from 'drizzle-orm/query-builders/select.types';
import { Salary, type Job } from '../../domain/job';
import { jobs } from '../schema';
import { queryBuilder } from '../sql';

/** DATETIME(3) read as the Job's ISO 8601 string. */
const DRIVER_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const toIso = (value: string) =>
  // The driver's form is already ISO 8601 but for the T and the Z; anything else goes through Date.
  DRIVER_DATETIME.test(value) ? `${value.slice(0, 10)}T${value.slice(11)}Z` : new Date(`${value.replace(' ', 'T')}Z`).toISOString();
const iso = (column: typeof jobs.createdAt) => sql`${column}`.mapWith(toIso);
const isoOrNull = (column: typeof jobs.updatedAt | typeof jobs.submissionDueDate) =>
  sql`${column}`.mapWith((value: string | null) => (value === null ? null : toIso(value)));

// MariaDB hands JSON_OBJECT back as text, MySQL 8 as an already parsed object.
const salary = (value: string | Salary): Salary => Salary.parse(typeof value === 'string' ? JSON.parse(value) : value);

/** The only columns the API ever reads, one per field of the Job (domain/job.ts), in its order, each already of the Job's type. */
export const publicColumns = {
  id: jobs.id,
  postingId: jobs.postingId,
  title: jobs.title,
  department: jobs.department,
  location: jobs.location,
  workplace: jobs.workplace,
  state: jobs.state,
  type: jobs.type,
  description: jobs.description,
  requirements: jobs.requirements,
  responsibilities: jobs.responsibilities,
  salary: sql`case when ${jobs.salaryDisclosed} then json_object('min', ${jobs.salaryMin}, 'max', ${jobs.salaryMax}, 'currency', ${jobs.salaryCurrency}) end`.mapWith(
    (value: string | Salary | null) => (value === null ? null : salary(value)),
  ),
  status: jobs.status,
  submissionDueDate: isoOrNull(jobs.submissionDueDate),
  clientName: sql<Job['clientName']>`case when ${jobs.clientNameDisclosed} then ${jobs.clientName} end`,
  vendorName: sql<Job['vendorName']>`case when ${jobs.vendorNameDisclosed} then ${jobs.vendorName} end`,
  postedByName: jobs.postedByName,
  createdAt: iso(jobs.createdAt),
  updatedAt: isoOrNull(jobs.updatedAt),
} satisfies Record<keyof Job, (typeof jobs)['_']['columns'][keyof (typeof jobs)['_']['columns']] | SQL>;

/** A row of publicColumns as drizzle maps it: the Job, but with a missing workplace as null. */
type PublicRow = { [K in keyof Job]-?: undefined extends Job[K] ? Exclude<Job[K], undefined> | null : Job[K] };

/** The row as the Job: only `workplace` is left out, rather than null, when the row has none. */
export const toJob = (row: PublicRow): Job => ({ ...row, workplace: row.workplace ?? undefined });

const FROM_JOBS = ' from `jobs`';
const selectAll = queryBuilder.select(publicColumns).from(jobs).toSQL().sql;

/** The select list of publicColumns, columns unqualified, for the hand-written listing statements. */
export const PUBLIC_SELECT_LIST = selectAll.slice('select '.length, selectAll.length - FROM_JOBS.length);
if (`select ${PUBLIC_SELECT_LIST}${FROM_JOBS}` !== selectAll) throw new Error('unexpected select text from drizzle');

type Decode = (value: unknown) => unknown;

/** The field's decoder, or undefined when it hands the driver's value over as it is. */
function decoderOf(field: (typeof publicColumns)[keyof typeof publicColumns]): Decode | undefined {
  if (is(field, Column)) {
    return field.mapFromDriverValue === Column.prototype.mapFromDriverValue ? undefined : (value) => field.mapFromDriverValue(value);
  }
  // `.mapWith()` sets it; drizzle's own row mapper reads the same property.
  const { decoder } = field as unknown as { decoder: DriverValueDecoder<unknown, unknown> };
  return (value) => decoder.mapFromDriverValue(value);
}

const FIELDS = Object.keys(publicColumns);
const DECODERS = Object.values(publicColumns).map(decoderOf);

/** One row of PUBLIC_SELECT_LIST (an array, in its order) as the Job, each field through its own decoder only. */
export function rowToJob(values: unknown[]): Job {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < FIELDS.length; i++) {
    const value = values[i];
    const decode = DECODERS[i];
    // As drizzle: NULL stays null without asking the decoder.
    // Stryker disable next-line ConditionalExpression: equivalent, every decoder of publicColumns maps NULL to null itself (docs/decisions.md)
    row[FIELDS[i]!] = value === null || decode === undefined ? value : decode(value);
  }
  return toJob(row as PublicRow);
}

// Compile-time proof that the selected row is exactly the Job's row shape, field for field.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const rowIsJobRow: Same<SelectResultFields<typeof publicColumns>, PublicRow> = true;
void rowIsJobRow;
