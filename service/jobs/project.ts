import type { PublicJobRow } from './columns';
import type { Job } from './job';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** Row to the spec's Job: its 19 fields in its order, `workplace` left out when the row has none. */
export function projectJob(row: PublicJobRow): Job {
  return {
    id: row.id,
    postingId: row.postingId,
    title: row.title,
    department: row.department,
    location: row.location,
    ...(row.workplace ? { workplace: row.workplace } : {}),
    state: row.state,
    type: row.type,
    description: row.description,
    requirements: row.requirements,
    responsibilities: row.responsibilities,
    salary:
      row.salaryCurrency === null
        ? null
        : { min: row.salaryMin, max: row.salaryMax, currency: row.salaryCurrency },
    status: row.status,
    submissionDueDate: iso(row.submissionDueDate),
    clientName: row.clientName,
    vendorName: row.vendorName,
    postedByName: row.postedByName,
    createdAt: row.createdAt.toISOString(),
    updatedAt: iso(row.updatedAt),
  };
}
