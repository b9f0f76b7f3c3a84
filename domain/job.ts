import { z } from 'zod';

/** The domain's words, defined once: db/schema.ts makes its columns of them, the HTTP contract its rules. */
export const JOB_STATUSES = ['draft', 'active', 'open', 'paused', 'closed'] as const;
export const JOB_TYPES = [
  'full-time',
  'part-time',
  'contract',
  'contract-to-hire',
  'direct-hire',
  'managed-teams',
] as const;
export const WORKPLACES = ['on-site', 'hybrid', 'remote'] as const;
/** The statuses a listing may ask for (drafts are never listed), and the ones it shows by default. */
export const LISTED_STATUSES = ['active', 'open', 'paused', 'closed'] as const;
export const DEFAULT_STATUSES = ['active', 'open'] as const;

const LETTERS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'];
/** Every state code a job may have, two upper-case letters: listed, so a typed client's compiler knows them (a pattern it ignores). */
export const STATE_CODES = LETTERS.flatMap((first) => LETTERS.map((second) => first + second)) as [string, ...string[]];

/** The longest text each settable field may hold, in characters: the columns are this wide (db/schema.ts). */
export const TEXT_LIMITS = { postingId: 64, title: 200, department: 100, location: 200 } as const;

/** The public Job, defined once: the spec's 19 fields in the spec's order. */
export const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ description: 'ISO 4217 code', examples: ['USD'] });

export const Salary = z
  .object({
    min: z.number().nullable(),
    max: z.number().nullable(),
    currency: Currency,
  })
  .meta({ description: 'Amounts in major units; present only when the salary is disclosed' });
export type Salary = z.infer<typeof Salary>;

// ISO 8601 in UTC with milliseconds, as every timestamp is written (decisions.md).
export const timestamp = z.iso.datetime({ precision: 3 });

export const Job = z.strictObject({
  id: z.uuid(),
  postingId: z.string().nullable(),
  title: z.string(),
  department: z.string(),
  location: z.string().meta({ description: 'City and state; empty for a remote role with no base' }),
  workplace: z.enum(WORKPLACES).optional().meta({ description: 'Absent on older postings' }),
  state: z.string().nullable(),
  type: z.enum(JOB_TYPES),
  description: z.string(),
  requirements: z.array(z.string()),
  responsibilities: z.array(z.string()),
  salary: Salary.nullable(),
  status: z.enum(JOB_STATUSES).meta({ description: 'draft only for the consumer that created it, by id' }),
  submissionDueDate: timestamp.nullable(),
  clientName: z.string().nullable(),
  vendorName: z.string().nullable(),
  postedByName: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp.nullable(),
});
export type Job = z.infer<typeof Job>;
/** Its field names in the spec's order. */
export const JOB_FIELDS = Job.keyof().options;

/** The change feed's word that a job is no longer listable (soft-deleted, deleted, back to draft). */
export const Tombstone = z.strictObject({
  id: z.uuid(),
  removed: z.literal(true),
});
export type Tombstone = z.infer<typeof Tombstone>;

/** One Job as a partner sees it: the example the OpenAPI document and the webhook events show. */
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
