import { z } from 'zod';
import { CURRENCIES } from '../../../domain/currencies';
import { JOB_STATUSES, JOB_TYPES, STATE_CODES, TEXT_LIMITS, WORKPLACES } from '../../../domain/job';
import { dueDate } from './due-date';
import { documented } from '../../http/documented';
import { plainText, text } from '../../http/text';
import type { RequestBody } from '../../http/input';

const bulletList = (field: string) =>
  z
    .array(text(`each item of ${field}`, 1000), { error: `${field} must be an array of strings` })
    .max(100, `${field} may hold at most 100 items`)
    .default([]);

const amountValue = (field: string) =>
  z
    .number({ error: `${field} must be a number or null` })
    .nonnegative(`${field} must not be negative`)
    .max(99_999_999, `${field} must be at most 99999999`)
    // Exact: the JSON number is the double nearest some amount in cents iff rounding it to cents gives it back.
    .refine((value) => Number(value.toFixed(2)) === value, `${field} may have at most 2 decimal places`);

const SALARY_FIELDS = {
  min: amountValue('salary.min').nullable().default(null),
  max: amountValue('salary.max').nullable().default(null),
  currency: z
    .string({ error: 'salary.currency must be a string' })
    .refine(
      (code) => CURRENCIES.has(code),
      'salary.currency must be an active ISO 4217 currency code in upper case, e.g. USD',
    )
    .meta({ enum: [...CURRENCIES] }),
};

const SalaryInput = z
  .strictObject(SALARY_FIELDS, { error: 'salary must be an object with min, max and currency, or null' })
  .superRefine((salary, ctx) => {
    if (salary.min === null && salary.max === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['min'],
        message: 'salary needs min or max; send null when it is not disclosed',
      });
    } else if (salary.min !== null && salary.max !== null && salary.min > salary.max) {
      ctx.addIssue({ code: 'custom', path: ['min'], message: 'salary.min must not be greater than salary.max' });
    }
  });
// The rule above as the document states it: currency with min, max or both, a number.
const disclosedWith = (bound: 'min' | 'max'): z.ZodType =>
  z.strictObject({ ...SALARY_FIELDS, [bound]: amountValue(`salary.${bound}`) });
documented.set(SalaryInput, z.union([disclosedWith('min'), disclosedWith('max')]));

/** POST /api/v1/jobs's body: every settable field (decisions.md). */
export const CreateJobBody = z.object({
  title: text('title', TEXT_LIMITS.title),
  department: text('department', TEXT_LIMITS.department),
  type: z.enum(JOB_TYPES, {
    error: (issue) =>
      issue.input === undefined
        ? 'type is required'
        : issue.input === 'remote'
          ? 'remote is not a job type; send workplace: "remote" and one of the types'
          : `type must be one of ${JOB_TYPES.join(', ')}`,
  }),
  description: text('description', 20_000, true),
  postingId: text('postingId', TEXT_LIMITS.postingId).nullable().optional(),
  location: plainText('location')
    .max(TEXT_LIMITS.location, `location must be at most ${TEXT_LIMITS.location} characters`)
    .default(''),
  workplace: z
    .enum(WORKPLACES, { error: `workplace must be one of ${WORKPLACES.join(', ')}` })
    .nullable()
    .optional(),
  state: z
    .enum(STATE_CODES, {
      error: (issue) =>
        typeof issue.input === 'string'
          ? 'state must be a two-letter upper-case code, e.g. TX'
          : 'state must be a string',
    })
    .meta({ pattern: '^[A-Z]{2}$', minLength: 2, maxLength: 2 })
    .nullable()
    .optional(),
  requirements: bulletList('requirements'),
  responsibilities: bulletList('responsibilities'),
  salary: SalaryInput.nullable().optional(),
  submissionDueDate: dueDate.nullable().optional(),
  status: z.enum(JOB_STATUSES, { error: `status must be one of ${JOB_STATUSES.join(', ')}` }).default('draft'),
});
export type CreateJobBody = z.infer<typeof CreateJobBody>;

/** A create body as a partner sends it (the OpenAPI document's example). */
export const CREATE_BODY_EXAMPLE = {
  title: 'Senior Backend Engineer',
  department: 'Engineering',
  type: 'full-time',
  description: 'Build and run the services behind our job platform integrations.',
  postingId: 'ENG-2026-041',
  location: 'Austin, TX',
  workplace: 'hybrid',
  state: 'TX',
  requirements: ['5+ years of backend development'],
  responsibilities: ['Design and ship API features'],
  salary: { min: 140000, max: 170000, currency: 'USD' },
  submissionDueDate: '2026-12-31',
  status: 'active',
};

// Fields of the Job object, or internal ones, that exist but belong to the organisation.
const NOT_SETTABLE = new Set(['id', 'createdAt', 'updatedAt', 'clientName', 'vendorName', 'postedByName']);
const INTERNAL_HINT = /rate|bill|margin|recruit|client|vendor|contact|internal|consumer|created|deleted|posted/i;

/** POST /api/v1/jobs's body as the route declares it. */
export const CREATE_BODY: RequestBody<typeof CreateJobBody> = {
  schema: CreateJobBody,
  description:
    'application/json, at most 100 KB (gzip allowed with Content-Encoding: gzip, 100 KB decoded). Unknown and organisation-only fields are refused by name.',
  example: CREATE_BODY_EXAMPLE,
  internal: (field) => NOT_SETTABLE.has(field) || INTERNAL_HINT.test(field),
};
