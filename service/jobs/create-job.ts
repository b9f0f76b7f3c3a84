import { uuidv7 } from '../../db/uuid';
import type { NewJobRow } from '../../db/schema';
import type { CreateJobBody } from './create-body';

/**
 * The row a create stores. Everything not settable through the API (rates, client, vendor,
 * recruiter) stays unset for a recruiter to fill in later. The 201 answers with the stored row
 * read back through the one projection (routes.ts), so it is exactly what GET returns.
 */
export function newJobRow(body: CreateJobBody, consumerId: string, now = new Date()): NewJobRow {
  const salary = body.salary ?? null;
  return {
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
    salaryDisclosed: salary !== null,
    salaryMin: salary?.min ?? null,
    salaryMax: salary?.max ?? null,
    salaryCurrency: salary?.currency ?? null,
    status: body.status,
    submissionDueDate: body.submissionDueDate ?? null,
    createdAt: now,
    createdByConsumer: consumerId,
  };
}
