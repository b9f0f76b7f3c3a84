import { sql, type SQL } from 'drizzle-orm';
import type { SelectResultFields } from 'drizzle-orm/query-builders/select.types';
import { Salary, type Job } from '../../domain/job';
import { jobs } from '../schema';

/** DATETIME(3) read as the Job's ISO 8601 string. */
const DRIVER_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
export const toIso = (value: string) =>
  // The driver's form is already ISO 8601 but for the T and the Z; anything else goes through Date.
  DRIVER_DATETIME.test(value)
    ? `${value.slice(0, 10)}T${value.slice(11)}Z`
    : new Date(`${value.replace(' ', 'T')}Z`).toISOString();
const isoOrNull = (value: string | null) => (value === null ? null : toIso(value));

// MariaDB hands JSON_OBJECT back as text, MySQL 8 as an already parsed object.
const salaryOf = (value: string | Salary | null): Salary | null =>
  value === null ? null : Salary.parse(typeof value === 'string' ? JSON.parse(value) : value);

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
  salary:
    sql`case when ${jobs.salaryDisclosed} then json_object('min', ${jobs.salaryMin}, 'max', ${jobs.salaryMax}, 'currency', ${jobs.salaryCurrency}) end`.mapWith(
      salaryOf,
    ),
  status: jobs.status,
  submissionDueDate: sql`${jobs.submissionDueDate}`.mapWith(isoOrNull),
  clientName: sql<Job['clientName']>`case when ${jobs.clientNameDisclosed} then ${jobs.clientName} end`,
  vendorName: sql<Job['vendorName']>`case when ${jobs.vendorNameDisclosed} then ${jobs.vendorName} end`,
  postedByName: jobs.postedByName,
  createdAt: sql`${jobs.createdAt}`.mapWith(toIso),
  updatedAt: sql`${jobs.updatedAt}`.mapWith(isoOrNull),
} satisfies Record<keyof Job, (typeof jobs)['_']['columns'][keyof (typeof jobs)['_']['columns']] | SQL>;

/** A row of publicColumns as drizzle maps it: the Job, but with a missing workplace as null. */
type PublicRow = { [K in keyof Job]-?: undefined extends Job[K] ? Exclude<Job[K], undefined> | null : Job[K] };

/** The row as the Job: only `workplace` is left out, rather than null, when the row has none. */
export const toJob = (row: PublicRow): Job => ({ ...row, workplace: row.workplace ?? undefined });

type Decode = (value: never) => unknown;

/** Each field's decoder of the driver's value (dateStrings), as its `.mapWith()` or its column declares it; undefined: the value as it comes. */
const DECODERS: { readonly [K in keyof typeof publicColumns]: Decode | undefined } = {
  id: (value: Buffer) => jobs.id.mapFromDriverValue(value),
  postingId: undefined,
  title: undefined,
  department: undefined,
  location: undefined,
  workplace: undefined,
  state: undefined,
  type: undefined,
  description: undefined,
  requirements: (value: string) => jobs.requirements.mapFromDriverValue(value),
  responsibilities: (value: string) => jobs.responsibilities.mapFromDriverValue(value),
  salary: salaryOf,
  status: undefined,
  submissionDueDate: isoOrNull,
  clientName: undefined,
  vendorName: undefined,
  postedByName: undefined,
  createdAt: toIso,
  updatedAt: isoOrNull,
};
const FIELDS = Object.keys(publicColumns) as (keyof typeof publicColumns)[];
const DECODE = FIELDS.map((field) => DECODERS[field] as ((value: unknown) => unknown) | undefined);

/** A row of publicColumns' select list as the driver gives it (an array, dates as text) as the Job. */
export function rowToJob(values: unknown[]): Job {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < FIELDS.length; i++) {
    const value = values[i];
    const decode = DECODE[i];
    row[FIELDS[i]!] = value === null || decode === undefined ? value : decode(value);
  }
  return toJob(row as PublicRow);
}

// Compile-time proof that the selected row is exactly the Job's row shape, field for field.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const rowIsJobRow: Same<SelectResultFields<typeof publicColumns>, PublicRow> = true;
void rowIsJobRow;
