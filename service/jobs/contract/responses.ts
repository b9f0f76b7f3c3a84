import { z } from 'zod';
import { Job, JOB_EXAMPLE, Tombstone } from '../../../domain/job';

/** Response bodies of the jobs endpoints, built from the one Job (domain/job.ts), with an example of each. */

/** The change feed's page size: its query parameter's bounds and its meta's. */
export const CHANGES_LIMIT = { min: 1, max: 500, default: 100 } as const;

export const ListMeta = z.strictObject({
  total: z.int().min(0).meta({ description: 'Jobs matching the filter' }),
  page: z.int().min(1).meta({ description: "This page's number (in a cursor walk, counted from its start)" }),
  limit: z.int().min(1).max(100),
  totalPages: z.int().min(0),
  nextCursor: z.string().nullable().optional().meta({
    description:
      'Cursor walks only (a `cursor` was sent): pass it as `cursor` for the next page; null on the last page',
  }),
});

export const JobList = z.strictObject({ data: z.array(Job), meta: ListMeta });
export type JobList = z.infer<typeof JobList>;

export const LIST_PAGE_EXAMPLE: JobList = {
  data: [JOB_EXAMPLE],
  meta: { total: 1, page: 1, limit: 20, totalPages: 1 },
};

export const JobEnvelope = z.strictObject({ data: Job });

export const ChangeList = z.strictObject({
  data: z.array(z.union([Job, Tombstone])).meta({
    description: 'In change order: each changed job as it is now, or a tombstone once it is no longer listable',
  }),
  meta: z.strictObject({
    nextSince: z.string().meta({ description: 'Pass as `since` to continue; unchanged when nothing changed' }),
    hasMore: z.boolean().meta({ description: 'More changes are waiting: ask again at once' }),
    limit: z.int().min(CHANGES_LIMIT.min).max(CHANGES_LIMIT.max),
  }),
});
export type ChangeList = z.infer<typeof ChangeList>;

export const CHANGE_PAGE_EXAMPLE: ChangeList = {
  data: [JOB_EXAMPLE, { id: '019a8f4e-0b17-7c55-8d2e-6a1f3b9c0e42', removed: true }],
  meta: { nextSince: 'A3weKp1Lb4A1AAAAAAAAACqhvLOt3gsFuRgAQMYmpDy-', hasMore: false, limit: 100 },
};
