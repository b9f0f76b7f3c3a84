import type { RouterMiddleware } from '@koa/router';
import { z } from 'zod';
import { findJob, insertJob } from '../../../db/jobs/job-store';
import { primaryOf } from '../../../db/sql';
import { HttpError, validationFailed, type FieldProblem } from '../../errors';
import { idempotent } from '../../middleware/idempotency';
import { jsonBody } from '../../middleware/json-body';
import { CURRENCIES } from '../contract/currencies';
import { JOB_STATUSES, JOB_TYPES, WORKPLACES } from '../contract/job';
import { errorResponse, JOB_EXAMPLE, JobEnvelope, ValidationErrorBody } from '../contract/responses';
import type { Route } from './route-spec';

// C0 controls (NUL, ESC, line breaks...), DEL, C1 controls and the Unicode line/paragraph
// separators: invisible, they break logs, CSV exports and the careers site's single-line fields,
// and NUL truncates strings in C-based consumers. Multi-line text keeps tab, LF and CR.
const SINGLE_LINE_FORBIDDEN = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/;
const MULTI_LINE_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
// A lone UTF-16 surrogate ("\ud800" in JSON) cannot be stored as UTF-8; it would come back as U+FFFD.
const wellFormed = (value: string) => (value as string & { isWellFormed(): boolean }).isWellFormed();

const plainText = (field: string, multiLine = false) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    // Trimmed first: a trailing newline pasted into a title is whitespace, not content.
    .trim()
    .refine(wellFormed, `${field} must be valid Unicode text (it holds a lone surrogate)`)
    .refine(
      (value) => !(multiLine ? MULTI_LINE_FORBIDDEN : SINGLE_LINE_FORBIDDEN).test(value),
      multiLine
        ? `${field} must not contain control characters other than tab and line breaks`
        : `${field} must not contain control characters or line breaks`,
    );

const text = (field: string, max: number, multiLine = false) =>
  plainText(field, multiLine)
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`);

const bulletList = (field: string) =>
  z
    .array(text(`each item of ${field}`, 1000), { error: `${field} must be an array of strings` })
    .max(100, `${field} may hold at most 100 items`)
    .default([]);

const amount = (field: string) =>
  z
    .number({ error: `${field} must be a number or null` })
    .nonnegative(`${field} must not be negative`)
    .max(99_999_999, `${field} must be at most 99999999`)
    // Exact: the JSON number is the double nearest some amount in cents iff rounding it to cents
    // gives it back (0.01000001 and 1e-8 do not; a tolerance would let them be rounded in storage).
    .refine((value) => Number(value.toFixed(2)) === value, `${field} may have at most 2 decimal places`)
    .nullable()
    .default(null);

const SalaryInput = z
  .strictObject(
    {
      min: amount('salary.min'),
      max: amount('salary.max'),
      currency: z
        .string({ error: 'salary.currency must be a string' })
        .refine((code) => CURRENCIES.has(code), 'salary.currency must be an active ISO 4217 currency code in upper case, e.g. USD'),
    },
    { error: 'salary must be an object with min, max and currency, or null' },
  )
  .superRefine((salary, ctx) => {
    if (salary.min === null && salary.max === null) {
      ctx.addIssue({ code: 'custom', path: ['min'], message: 'salary needs min or max; send null when it is not disclosed' });
    } else if (salary.min !== null && salary.max !== null && salary.min > salary.max) {
      ctx.addIssue({ code: 'custom', path: ['min'], message: 'salary.min must not be greater than salary.max' });
    }
  });

const DUE_DATE_PROBLEMS = {
  format: 'submissionDueDate must be an ISO 8601 date (2026-12-31) or date-time with a time zone (2026-12-31T17:00:00Z)',
  calendar: 'submissionDueDate is not a real calendar date',
  range: 'submissionDueDate must be from 1970-01-01 to 9999-12-31 in UTC',
} as const;

/** A calendar date (midnight UTC) or a date-time with an explicit offset; nothing ambiguous (parseDueDate below). */
const dueDate = z.string({ error: 'submissionDueDate must be a string' }).transform((value, ctx) => {
  const parsed = parseDueDate(value);
  if ('date' in parsed) return parsed.date;
  ctx.addIssue({ code: 'custom', message: DUE_DATE_PROBLEMS[parsed.problem] });
  return z.NEVER;
});

/** POST /api/v1/jobs's body: every settable field (decisions.md). */
export const CreateJobBody = z.object({
  title: text('title', 200),
  department: text('department', 100),
  type: z.enum(JOB_TYPES, {
    error: (issue) =>
      issue.input === undefined
        ? 'type is required'
        : issue.input === 'remote'
          ? 'remote is not a job type; send workplace: "remote" and one of the types'
          : `type must be one of ${JOB_TYPES.join(', ')}`,
  }),
  description: text('description', 20_000, true),
  postingId: text('postingId', 64).nullable().optional(),
  location: plainText('location')
    .max(200, 'location must be at most 200 characters')
    .default(''),
  workplace: z.enum(WORKPLACES, { error: `workplace must be one of ${WORKPLACES.join(', ')}` }).nullable().optional(),
  state: z
    .string({ error: 'state must be a string' })
    .regex(/^[A-Z]{2}$/, 'state must be a two-letter upper-case code, e.g. TX')
    .nullable()
    .optional(),
  requirements: bulletList('requirements'),
  responsibilities: bulletList('responsibilities'),
  salary: SalaryInput.nullable().optional(),
  submissionDueDate: dueDate.nullable().optional(),
  status: z
    .enum(JOB_STATUSES, { error: `status must be one of ${JOB_STATUSES.join(', ')}` })
    .default('draft'),
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

const SETTABLE = new Set(Object.keys(CreateJobBody.shape));

// Fields of the Job object, or internal ones, that exist but belong to the organisation.
const NOT_SETTABLE = new Set(['id', 'createdAt', 'updatedAt', 'clientName', 'vendorName', 'postedByName']);
const INTERNAL_HINT = /rate|bill|margin|recruit|client|vendor|contact|internal|consumer|created|deleted|posted/i;

function fieldProblems(body: Record<string, unknown>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const field of Object.keys(body)) {
    if (SETTABLE.has(field)) continue;
    const name = field.length > 64 ? `${field.slice(0, 64)}…` : field;
    problems.push({
      field: name,
      message:
        NOT_SETTABLE.has(field) || INTERNAL_HINT.test(field)
          ? `${name} cannot be set through the API`
          : `${name} is not a known field`,
    });
  }
  return problems;
}

/** Checks a JSON object body (json-body.ts refuses anything else); throws 400 with every problem at once. */
export function parseCreateJobBody(body: Record<string, unknown>): CreateJobBody {
  const problems = fieldProblems(body);
  const parsed = CreateJobBody.safeParse(body);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path.map(String).join('.');
      if (!problems.some((problem) => problem.field === field)) {
        problems.push({ field, message: issue.message });
      }
    }
  }
  if (problems.length > 0 || !parsed.success) throw validationFailed(problems);
  return parsed.data;
}

/** Create takes JSON only; anything else is refused before the body is read. */
export const requireJson: RouterMiddleware = async (ctx, next) => {
  if (!ctx.is('application/json')) {
    throw new HttpError(415, 'Content-Type must be application/json');
  }
  await next();
};

export const requireConsumer: RouterMiddleware = async (ctx, next) => {
  if (!ctx.state.consumer) {
    throw new HttpError(401, 'Missing consumer identity: requests must come through the API gateway');
  }
  await next();
};

export const createJobRoute: Route = {
  operationId: 'createJob',
  method: 'post',
  path: '/api/v1/jobs',
  scope: 'jobs:write',
  tag: 'jobs',
  summary: 'Create a job (stored as draft unless a status is sent)',
  headers: {
    'Idempotency-Key': {
      description: 'Makes a retry safe: the same body with the same key within 24 hours answers the first 201 again instead of creating a second job',
      pattern: '^[\\x21-\\x7E]{1,255}$',
    },
  },
  body: {
    schema: CreateJobBody,
    description:
      'application/json, at most 100 KB (gzip allowed with Content-Encoding: gzip, 100 KB decoded). Unknown and organisation-only fields are refused by name.',
    example: CREATE_BODY_EXAMPLE,
  },
  database: true,
  responses: {
    '201': {
      description: 'Created; the body is what GET /api/v1/jobs/{id} answers',
      body: JobEnvelope,
      example: { data: { ...JOB_EXAMPLE, status: 'active' } },
      headers: {
        Location: '/api/v1/jobs/{id}',
        'Idempotent-Replayed': 'true when this is the stored answer to an earlier request with the same Idempotency-Key',
      },
    },
    '400': {
      description: 'Validation failed (every problem in details), malformed JSON, or not a JSON object',
      body: ValidationErrorBody,
      example: {
        error: 'Validation failed',
        details: [
          { field: 'title', message: 'title is required' },
          { field: 'payRate', message: 'payRate cannot be set through the API' },
        ],
      },
    },
    '409': errorResponse(
      'A request with this Idempotency-Key is still being processed: retry after Retry-After',
      'A request with this Idempotency-Key is still being processed; retry in a moment',
      { 'Retry-After': { description: 'Seconds to wait', type: 'integer' } },
    ),
    '413': errorResponse('Body over 100 KB ("Request size limit exceeded" from the gateway)', 'Request size limit exceeded'),
    '415': errorResponse('Content-Type is not application/json, or an unsupported body encoding', 'Content-Type must be application/json'),
    '422': errorResponse(
      'This Idempotency-Key was used with a different body',
      'This Idempotency-Key was already used with a different request body: resend the original body to get its response, or use a new key for a new job',
    ),
  },
  handler: (db) => {
    // Writes, and the read-back after them, go to the primary: a replica may not have the job yet.
    const primary = primaryOf(db);
    const create = idempotent(primary, async (ctx, write) => {
      const consumerId = ctx.state.consumer!.id;
      const id = await insertJob(write, parseCreateJobBody(ctx.request.body!), consumerId);
      // Read back through the one projection, where it was just written: the 201 is exactly what GET will answer.
      const job = (await findJob(write, id, consumerId))!;
      ctx.status = 201;
      ctx.set('Location', `/api/v1/jobs/${job.id}`);
      ctx.body = { data: job };
    });
    return [requireConsumer, requireJson, jsonBody(), create];
  },
};

/** The deadlines a job may have, in UTC: from the Unix epoch to the last instant DATETIME holds. */
export const EARLIEST_DUE_DATE = new Date('1970-01-01T00:00:00.000Z');
export const LATEST_DUE_DATE = new Date('9999-12-31T23:59:59.999Z');

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

export type DueDate = { date: Date } | { problem: 'format' | 'calendar' | 'range' };

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const daysIn = (year: number, month: number) => (month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!);

/**
 * A calendar date (midnight UTC) or a date-time with an explicit offset. Every part is checked
 * as written, before any conversion: `Date` would roll 2026-02-31 over to March 3rd, accept
 * 24:00, and turn a year-9999 time with a negative offset into year 10000, which no DATETIME holds.
 */
export function parseDueDate(value: string): DueDate {
  const match = DATE.exec(value) ?? DATE_TIME.exec(value);
  if (!match) return { problem: 'format' };
  // Stryker disable next-line StringLiteral: Number('') is 0 too; the defaults only keep NaN out
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', sign, offsetH = '0', offsetM = '0'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return { problem: 'calendar' };
  if (hour > 23 || minute > 59 || second > 59 || Number(offsetH) > 23 || Number(offsetM) > 59) return { problem: 'calendar' };
  // Milliseconds are what is stored; further digits are cut, never rounded up into the next second.
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  const offsetMinutes = (sign === '-' ? -1 : 1) * (Number(offsetH) * 60 + Number(offsetM));
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMinutes * 60_000;
  // Date.UTC maps years 0-99 to 1900-1999; those are out of range either way, so say so.
  // Stryker disable next-line EqualityOperator: the year 1000 is before 1970 as well
  if (year < 1000 || utc < EARLIEST_DUE_DATE.getTime() || utc > LATEST_DUE_DATE.getTime()) return { problem: 'range' };
  return { date: new Date(utc) };
}
