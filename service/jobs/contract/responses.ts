import { z } from 'zod';
import { Job, Tombstone } from '../../../domain/job';

/** Response bodies of the jobs endpoints, built from the one Job (job.ts), with an example of each. */

/** The change feed's page size: its query parameter's bounds and its meta's. */
export const CHANGES_LIMIT = { min: 1, max: 500, default: 100 } as const;

export const JOB_EXAMPLE: Job = {
  id: '019a8f4e-7c21-7d3a-9b65-2f0c1e4d8a10',
  postingId: 'ENG-2026-041',
  title: 'Senior Backend Engineer',
  department: 'Engineering',
  location: 'Austin, TX',
  workplace: 'hybrid',
  state: 'TX',
  type: 'full-time',
  description: 'Build and run the services behind our job platform integrations.',
  requirements: ['5+ years of backend development', 'Experience with MySQL'],
  responsibilities: ['Design and ship API features', 'Keep the service fast and observable'],
  salary: { min: 140000, max: 170000, currency: 'USD' },
  status: 'active',
  submissionDueDate: '2026-12-31T00:00:00.000Z',
  clientName: null,
  vendorName: null,
  postedByName: 'Dana Smith',
  createdAt: '2026-11-20T14:03:11.482Z',
  updatedAt: null,
};

export const ListMeta = z.strictObject({
  total: z.int().min(0).meta({ description: 'Jobs matching the filter' }),
  page: z.int().min(1).meta({ description: 'This page\'s number (in a cursor walk, counted from its start)' }),
  limit: z.int().min(1).max(100),
  totalPages: z.int().min(0),
  nextCursor: z
    .string()
    .nullable()
    .optional()
    .meta({ description: 'Cursor walks only (a `cursor` was sent): pass it as `cursor` for the next page; null on the last page' }),
});

export const JobList = z.strictObject({ data: z.array(Job), meta: ListMeta });
export type JobList = z.infer<typeof JobList>;

export const LIST_PAGE_EXAMPLE: JobList = { data: [JOB_EXAMPLE], meta: { total: 1, page: 1, limit: 20, totalPages: 1 } };

export const JobEnvelope = z.strictObject({ data: Job });

export const ChangeList = z.strictObject({
  data: z
    .array(z.union([Job, Tombstone]))
    .meta({ description: 'In change order: each changed job as it is now, or a tombstone once it is no longer listable' }),
  meta: z.strictObject({
    nextSince: z.string().meta({ description: 'Pass as `since` to continue; unchanged when nothing changed' }),
    hasMore: z.boolean().meta({ description: 'More changes are waiting: ask again at once' }),
    limit: z.int().min(CHANGES_LIMIT.min).max(CHANGES_LIMIT.max),
  }),
});
export type ChangeList = z.infer<typeof ChangeList>;

export const CHANGE_PAGE_EXAMPLE: ChangeList = {
  data: [JOB_EXAMPLE, { id: '019a8f4e-0b17-7c55-8d2e-6a1f3b9c0e42', removed: true }],
  meta: { nextSince: 'AgAAAAAAAAAqp3Yh0s2dXvNq8y1WcI7Lfw', hasMore: false, limit: 100 },
};

// Errors may carry more than `error` (the gateway adds `request_id` to its own answers).
export const ErrorBody = z.looseObject({ error: z.string() }).meta({ description: 'Every error: a human-readable message' });

export const ScopeErrorBody = z
  .looseObject({ error: z.string(), requiredScope: z.enum(['jobs:read', 'jobs:write']).optional() })
  .meta({ description: 'Key disabled, or (with requiredScope) a scope the key lacks' });

export const ValidationErrorBody = z
  .looseObject({
    error: z.string(),
    details: z.array(z.strictObject({ field: z.string(), message: z.string() })).optional(),
  })
  .meta({ description: 'Validation failed (with every problem in details), malformed JSON, or a body that is not an object' });

/** A documented error answer: its description and the body it carries, as an example. */
export const errorResponse = (description: string, error: string, headers?: Record<string, string | { description: string; type: 'integer' }>) => ({
  description,
  body: ErrorBody,
  example: { error },
  ...(headers ? { headers } : {}),
});
