import { z } from 'zod';
import { isUuid } from '../../../domain/uuid';
import { JOB_EXAMPLE } from '../../../domain/job';
import {
  FILTER_NAMES,
  LIST_FILTERS,
  type FilterDeclaration,
  type FilterName,
  type ListFilter,
} from '../../../domain/list-filters';
import { clip, MESSAGES } from '../../errors';
import type { QueryString } from '../../http/input';
import { CHANGES_LIMIT } from './responses';

/** A comma list whose every value passes `allowed`, e.g. `status=active,paused`; `rule` says what is allowed. */
function commaList(
  name: string,
  allowed: (value: string) => boolean,
  rule: () => string,
  explain?: (value: string) => string | undefined,
) {
  return z.string().transform((raw, ctx) => {
    const values = raw.split(',');
    for (const value of values) {
      if (!allowed(value)) {
        ctx.addIssue({
          code: 'custom',
          message:
            explain?.(value) ??
            // Not trimmed: the document's items are the values alone, and a server more lenient than its document misleads.
            (allowed(value.trim())
              ? `${name} takes its values without spaces around them; got "${clip(value, 40)}"`
              : `${name} must be ${rule()} (or a comma-separated list of them); got "${clip(value, 40)}"`),
        });
        return z.NEVER;
      }
    }
    return [...new Set(values)];
  });
}

/** An integer query parameter from `min` to `max`, `fallback` when absent; `tooBig` (else `message`) past `max`. */
interface IntegerBounds {
  min: number;
  max: number;
  fallback: number;
  message: string;
  tooBig?: string;
}

function boundedInteger({ min, max, fallback, message, tooBig = message }: IntegerBounds) {
  return (
    z
      .string()
      .regex(/^\d{1,16}$/, message)
      .transform(Number)
      // Digits only, so .int() fails only past Number.MAX_SAFE_INTEGER: too big, not "not whole".
      .pipe(z.number().int(tooBig).min(min, message).max(max, tooBig))
      .default(fallback)
  );
}

/** The most codes one code filter takes: a bound a request's array must have (OWASP API4). */
const CODES_AT_MOST = 100;

export const LIST_LIMIT_MESSAGE = 'limit must be an integer from 1 to 100';

/** A filter's rule, message and documentation, from its declaration. */
function filterRule(name: string, declared: FilterDeclaration): z.ZodType {
  const documented = { description: declared.description, examples: [declared.example] };
  switch (declared.kind) {
    case 'values':
      return (
        commaList(
          name,
          (value) => declared.values.includes(value),
          () => `one of ${declared.values.join(', ')}`,
          declared.explain,
        )
          // What the document says it is: OpenAPI's comma list (style form, not exploded) of the allowed values.
          // Duplicates are dropped first, so no list holds more than the allowed values.
          .pipe(
            z
              .array(z.enum(declared.values as readonly [string, ...string[]]))
              .min(1)
              .max(declared.values.length),
          )
          .optional()
          .meta(documented)
      );
    case 'codes':
      return commaList(
        name,
        (value) => declared.pattern.test(value),
        () => declared.rule,
      )
        .transform((values) => [...new Set(values.map((value) => value.toUpperCase()))])
        .pipe(
          z
            .array(z.string().length(declared.length).regex(declared.pattern))
            .min(1)
            .max(CODES_AT_MOST, `${name} takes at most ${CODES_AT_MOST} codes`),
        )
        .optional()
        .meta(documented);
    case 'text':
      return z
        .string()
        .trim()
        .min(1, `${name} must not be empty`)
        .max(declared.maxLength, `${name} must be at most ${declared.maxLength} characters`)
        .optional()
        .meta(documented);
  }
}

/** The list filters' rules, messages and documentation, in their declared order. */
const FILTERS = Object.fromEntries(
  Object.entries(LIST_FILTERS).map(([name, declared]) => [name, filterRule(name, declared)]),
) as {
  [K in FilterName]: z.ZodType<ListFilter[K], string | undefined>;
};

/** GET /api/v1/jobs's query: the filters, then how to page. */
export const ListQuery = z.object({
  ...FILTERS,
  page: boundedInteger({
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    fallback: 1,
    message: 'page must be a whole number, 1 or more',
    tooBig: `page must be at most ${Number.MAX_SAFE_INTEGER}`,
  }).meta({
    description: 'Offset page, from 1 (default 1). A page past the end is empty with true meta. Not with cursor (400).',
  }),
  // Opaque (tokens.ts); empty starts a cursor walk at the top, so a client can loop on one shape.
  cursor: z
    .string()
    .max(200, 'cursor is not valid: pass meta.nextCursor back exactly as it was given')
    .optional()
    .meta({
      description:
        "Continue a cursor walk: meta.nextCursor of the previous page (or the Link header's URL). Empty starts a walk at the top. Belongs to the filter it was issued for: another filter, or an altered cursor, is a 400. Not with page (400).",
    }),
  limit: boundedInteger({ min: 1, max: 100, fallback: 20, message: LIST_LIMIT_MESSAGE }).meta({
    description: 'Jobs per page, 1 to 100 (default 20); anything else is a 400, never clamped.',
  }),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** GET /api/v1/jobs's query string: page and cursor choose the mode, so they never come together. */
export const LIST_QUERY: QueryString<typeof ListQuery> = {
  parameters: ListQuery,
  apart: {
    first: 'cursor',
    second: 'page',
    message:
      'cursor and page cannot be combined: cursor continues a walk (follow meta.nextCursor or the Link header), page asks for an offset page',
  },
  lists: FILTER_NAMES.filter((name) => LIST_FILTERS[name].kind !== 'text'),
};

const LIMIT_MESSAGE = `limit must be an integer from ${CHANGES_LIMIT.min} to ${CHANGES_LIMIT.max}`;

/** GET /api/v1/jobs/changes's query: each parameter's rules, messages and documentation. */
export const ChangesQuery = z.object({
  // Opaque (tokens.ts); absent reads the feed from the beginning.
  since: z.string().max(200, 'since is not valid: pass meta.nextSince back exactly as it was given').optional().meta({
    description:
      'meta.nextSince of the previous call. Absent (or empty): the feed from the beginning. An altered or invented token is a 400.',
  }),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, LIMIT_MESSAGE)
    .transform(Number)
    .pipe(z.number().int().min(CHANGES_LIMIT.min, LIMIT_MESSAGE).max(CHANGES_LIMIT.max, LIMIT_MESSAGE))
    .default(CHANGES_LIMIT.default)
    .meta({ description: 'Changes per page, 1 to 500 (default 100).' }),
});
export type ChangesQuery = z.infer<typeof ChangesQuery>;

/** GET /api/v1/jobs/changes's query string. */
export const CHANGES_QUERY: QueryString<typeof ChangesQuery> = { parameters: ChangesQuery };

/** GET /api/v1/jobs/:id's path. */
export const JobIdParams = z.object({
  // Not a UUID: no job has that id.
  id: z
    .string()
    .refine(isUuid, MESSAGES.jobNotFound)
    .meta({ description: "The job's UUID (any case)", format: 'uuid', maxLength: 36, examples: [JOB_EXAMPLE.id] }),
});
