import { Salary, type Job } from '../../domain/job';
import { jobs } from '../schema';
import type { RowOf } from '../sql';

/** The columns a Job is read from: its public fields, and the flags that say which of them are disclosed. */
export const jobColumns = {
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
  salaryDisclosed: jobs.salaryDisclosed,
  salaryMin: jobs.salaryMin,
  salaryMax: jobs.salaryMax,
  salaryCurrency: jobs.salaryCurrency,
  status: jobs.status,
  submissionDueDate: jobs.submissionDueDate,
  clientNameDisclosed: jobs.clientNameDisclosed,
  clientName: jobs.clientName,
  vendorNameDisclosed: jobs.vendorNameDisclosed,
  vendorName: jobs.vendorName,
  postedByName: jobs.postedByName,
  createdAt: jobs.createdAt,
  updatedAt: jobs.updatedAt,
};

export type JobRow = RowOf<typeof jobColumns>;

/** A row of jobColumns as the API shows the job: undisclosed salary and names as null, times as ISO 8601, no workplace when it has none. */
export function toJob(row: JobRow): Job {
  return {
    id: row.id,
    postingId: row.postingId,
    title: row.title,
    department: row.department,
    location: row.location,
    ...(row.workplace === null ? {} : { workplace: row.workplace }),
    state: row.state,
    type: row.type,
    description: row.description,
    requirements: row.requirements,
    responsibilities: row.responsibilities,
    salary: row.salaryDisclosed
      ? Salary.parse({ min: row.salaryMin, max: row.salaryMax, currency: row.salaryCurrency })
      : null,
    status: row.status,
    submissionDueDate: row.submissionDueDate?.toISOString() ?? null,
    clientName: row.clientNameDisclosed ? row.clientName : null,
    vendorName: row.vendorNameDisclosed ? row.vendorName : null,
    postedByName: row.postedByName,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt?.toISOString() ?? null,
  };
}
