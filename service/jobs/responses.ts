import { z } from 'zod';
import { CHANGES_LIMIT } from './changes-query';
import { Job, Tombstone } from './job';

/**
 * Response bodies of the jobs endpoints, built from the one Job (job.ts). Handlers are typed by
 * them and the OpenAPI document is generated from them (openapi.ts).
 */
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
