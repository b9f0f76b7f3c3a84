import { uuidv7 } from '../../db/uuid';
import type { NewJobRow } from '../../db/schema';
import type { PublicJobRow } from './columns';
import type { CreateJobBody } from './create-body';

/**
 * The row a create stores, and the public view of it. Everything not settable through the API
 * (rates, client, vendor, recruiter) stays unset for a recruiter to fill in later.
 */
export function newJob(body: CreateJobBody, consumerId: string, now = new Date()): { row: NewJobRow; view: PublicJobRow } {
  const salary = body.salary ?? null;
  const view: PublicJobRow = {
    id: uuidv7(now),
    postingId: body.postingId ?? null,
    title: body.title,
    department: body.department,
    location: body.location,
    workplace: body.workplace ?? null,
    state: body.state ?? null,
    type: body.type,
    description: body.description,
    requirements: body.requirements,
    responsibilities: body.responsibilities,
    salaryMin: salary?.min ?? null,
    salaryMax: salary?.max ?? null,
    salaryCurrency: salary?.currency ?? null,
    status: body.status,
    submissionDueDate: body.submissionDueDate ?? null,
    clientName: null,
    vendorName: null,
    postedByName: null,
    createdAt: now,
    updatedAt: null,
  };
  const row: NewJobRow = {
    ...view,
    salaryDisclosed: salary !== null,
    createdByConsumer: consumerId,
  };
  return { row, view };
}
