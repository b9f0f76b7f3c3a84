import type { ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';
import { JOB_TYPES, WORKPLACES } from '../../db/schema';
import { badRequest } from '../errors';

export const LISTED_STATUSES = ['active', 'open', 'paused', 'closed'] as const;
export const DEFAULT_STATUSES = ['active', 'open'] as const;

/**
 * A comma list of allowed values, e.g. `status=active,paused`. Each value may appear once;
 * an empty item (`a,,b`) is an error rather than something to guess about.
 */
function commaList<T extends string>(name: string, allowed: readonly T[], explain?: (value: string) => string | undefined) {
  return z.string().transform((raw, ctx) => {
    const values = raw.split(',').map((value) => value.trim());
    for (const value of values) {
      if (!(allowed as readonly string[]).includes(value)) {
        ctx.addIssue({
          code: 'custom',
          message:
            explain?.(value) ??
            `${name} must be one of ${allowed.join(', ')} (or a comma-separated list of them); got "${clip(value)}"`,
        });
        return z.NEVER;
      }
    }
    return [...new Set(values)] as T[];
  }).meta({ pattern: `^ *(${allowed.join('|')})( *, *(${allowed.join('|')}))* *$`, examples: [allowed.slice(0, 2).join(',')] });
}

function boundedInteger(min: number, max: number, fallback: number, message: string, tooBig = message) {
  return z
    .string()
    .regex(/^\d{1,16}$/, message)
    .transform(Number)
    // Digits only, so .int() fails only past Number.MAX_SAFE_INTEGER: too big, not "not whole".
    .pipe(z.number().int(tooBig).min(min, message).max(max, tooBig))
    .default(fallback);
}

export const ListQuery = z.object({
  status: commaList('status', LISTED_STATUSES, (value) =>
    value === 'draft'
      ? 'status=draft is not available: drafts are never listed (fetch your own draft by id)'
      : undefined,
  ).optional(),
  type: commaList('type', JOB_TYPES, (value) =>
    value === 'remote' ? 'remote is not a job type; to find remote roles filter on workplace=remote' : undefined,
  ).optional(),
  workplace: commaList('workplace', WORKPLACES).optional(),
  department: z
    .string()
    .trim()
    .min(1, 'department must not be empty')
    .max(100, 'department must be at most 100 characters')
    .optional(),
  page: boundedInteger(1, Number.MAX_SAFE_INTEGER, 1, 'page must be a whole number, 1 or more', `page must be at most ${Number.MAX_SAFE_INTEGER}`),
  // Opaque (tokens.ts); empty starts a cursor walk at the top, so a client can loop on one shape.
  cursor: z.string().max(200, 'cursor is not valid: pass meta.nextCursor back exactly as it was given').optional(),
  limit: boundedInteger(1, 100, 20, 'limit must be an integer from 1 to 100'),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** The parameters that choose which jobs are listed: a cursor belongs to exactly these. */
export const FILTER_PARAMETERS = ['status', 'type', 'workplace', 'department'] as const;

// api_key is the gateway's business (and never reaches us through it); tolerated, never echoed.
const TOLERATED = new Set(['api_key']);
const ALLOWED = Object.keys(ListQuery.shape);
// page and cursor exclude each other, so an error names the parameters of the request's own mode.
const ALLOWED_BY_MODE = {
  page: ALLOWED.filter((name) => name !== 'cursor'),
  cursor: ALLOWED.filter((name) => name !== 'page'),
};

const clip = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

/** Validates GET /api/v1/jobs's query string; throws a 400 naming the first problem. */
export function parseListQuery(query: ParsedUrlQuery): ListQuery {
  const input: Record<string, string> = {};
  const mode = 'cursor' in query ? 'cursor' : 'page';
  for (const [name, value] of Object.entries(query)) {
    if (TOLERATED.has(name)) continue;
    if (!ALLOWED.includes(name)) {
      throw badRequest(`Unknown query parameter "${clip(name)}". Allowed: ${ALLOWED_BY_MODE[mode].join(', ')}`);
    }
    if (Array.isArray(value)) {
      throw badRequest(`Query parameter "${name}" was given more than once; send one value (a comma-separated list where allowed)`);
    }
    // Stryker disable next-line StringLiteral: Node's querystring never yields undefined (a bare `?a` is ''); the fallback is for the type
    input[name] = value ?? '';
  }
  if ('cursor' in input && 'page' in input) {
    throw badRequest('cursor and page cannot be combined: cursor continues a walk (follow meta.nextCursor or the Link header), page asks for an offset page');
  }
  const parsed = ListQuery.safeParse(input);
  if (!parsed.success) {
    throw badRequest(parsed.error.issues[0]!.message);
  }
  return parsed.data;
}

/**
 * The filter in one canonical string: lists sorted, the default status spelled out, department
 * folded as the database folds it. Two requests that list the same jobs share it.
 */
export function canonicalFilter(query: ListQuery): string {
  const sorted = (values: readonly string[] | undefined) => (values ? [...values].sort() : null);
  return JSON.stringify({
    status: sorted(query.status ?? DEFAULT_STATUSES),
    type: sorted(query.type),
    workplace: sorted(query.workplace),
    department: query.department?.toLowerCase() ?? null,
  });
}
