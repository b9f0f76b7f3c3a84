import { sql, type SQL } from 'drizzle-orm';
import type { SelectResultFields } from 'drizzle-orm/query-builders/select.types';
import { Salary, type Job } from '../../domain/job';
import { jobs } from '../schema';

/** DATETIME(3) read as the Job's ISO 8601 string. */
const DRIVER_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
export const toIso = (value: string) =>
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

// Compile-time proof that the selected row is exactly the Job's row shape, field for field.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const rowIsJobRow: Same<SelectResultFields<typeof publicColumns>, PublicRow> = true;
void rowIsJobRow;
