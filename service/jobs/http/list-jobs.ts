import type { ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';
import type { Database } from '../../../db/client';
import { listJobs, type ListMode, type ListPosition } from '../../../db/jobs/listing';
import { signingKey } from '../../../db/signing-key';
import { badRequest } from '../../errors';
import { DEFAULT_STATUSES, JOB_TYPES, LISTED_STATUSES, WORKPLACES } from '../contract/job';
import { JobList, errorResponse, LIST_PAGE_EXAMPLE } from '../contract/responses';
import type { Route } from './route-spec';
import { decodeCursor, encodeCursor, filterDigest } from './tokens';

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
  }).meta({ pattern: `^ *(${allowed.join('|')})( *, *(${allowed.join('|')}))* *$` });
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

/** GET /api/v1/jobs's query: each parameter's rules, messages and documentation. */
export const ListQuery = z.object({
  status: commaList('status', LISTED_STATUSES, (value) =>
    value === 'draft'
      ? 'status=draft is not available: drafts are never listed (fetch your own draft by id)'
      : undefined,
  )
    .optional()
    .meta({ description: 'One of active, open, paused, closed, or a comma list of them. Default: active,open. draft is never listed (400).', examples: ['active,paused'] }),
  type: commaList('type', JOB_TYPES, (value) =>
    value === 'remote' ? 'remote is not a job type; to find remote roles filter on workplace=remote' : undefined,
  )
    .optional()
    .meta({ description: 'One of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams, or a comma list. remote is not a type (400): use workplace.', examples: ['full-time,contract'] }),
  workplace: commaList('workplace', WORKPLACES).optional().meta({ description: 'One of on-site, hybrid, remote, or a comma list.', examples: ['remote,hybrid'] }),
  department: z
    .string()
    .trim()
    .min(1, 'department must not be empty')
    .max(100, 'department must be at most 100 characters')
    .optional()
    .meta({
      description: 'Exact department name, case-insensitive, surrounding spaces ignored (+ and %20 are spaces). 1 to 100 characters.',
      examples: ['Engineering'],
    }),
  page: boundedInteger(1, Number.MAX_SAFE_INTEGER, 1, 'page must be a whole number, 1 or more', `page must be at most ${Number.MAX_SAFE_INTEGER}`).meta({
    description: 'Offset page, from 1 (default 1). A page past the end is empty with true meta. Not with cursor (400).',
  }),
  // Opaque (tokens.ts); empty starts a cursor walk at the top, so a client can loop on one shape.
  cursor: z
    .string()
    .max(200, 'cursor is not valid: pass meta.nextCursor back exactly as it was given')
    .optional()
    .meta({
      description:
        'Continue a cursor walk: meta.nextCursor of the previous page (or the Link header\'s URL). Empty starts a walk at the top. Belongs to the filter it was issued for: another filter, or an altered cursor, is a 400. Not with page (400).',
    }),
  limit: boundedInteger(1, 100, 20, 'limit must be an integer from 1 to 100').meta({
    description: 'Jobs per page, 1 to 100 (default 20); anything else is a 400, never clamped.',
  }),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** The parameters that choose which jobs are listed: a cursor belongs to exactly these. */
export const FILTER_PARAMETERS = ['status', 'type', 'workplace', 'department'] as const;

// api_key is the gateway's business (and never reaches us through it); tolerated, never echoed.
const TOLERATED = new Set(['api_key']);
const ALLOWED = Object.keys(ListQuery.shape);
// Every parameter, page and cursor as the alternatives they are: a partner learns both ways to page.
const ALLOWED_LIST = ALLOWED.filter((name) => name !== 'cursor')
  .map((name) => (name === 'page' ? 'page or cursor' : name))
  .join(', ');

const clip = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

/** Validates GET /api/v1/jobs's query string; throws a 400 naming the first problem. */
export function parseListQuery(query: ParsedUrlQuery): ListQuery {
  const input: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (TOLERATED.has(name)) continue;
    if (!ALLOWED.includes(name)) {
      throw badRequest(`Unknown query parameter "${clip(name)}". Allowed: ${ALLOWED_LIST}`);
    }
    if (Array.isArray(value)) {
      throw badRequest(`Query parameter "${name}" was given more than once; send one value (a comma-separated list where allowed)`);
    }
    // Stryker disable next-line StringLiteral: equivalent, Node's querystring never yields undefined
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

export interface ListPage {
  body: JobList;
  /** The next page's URL, relative to the origin the client called (for the Link header). */
  next: string | undefined;
}

/** The next page's URL: this request's filter and limit, and the cursor; never api_key. */
function nextUrl(query: ListQuery, cursor: string): string {
  const params = new URLSearchParams();
  if (query.status) params.set('status', query.status.join(','));
  if (query.type) params.set('type', query.type.join(','));
  if (query.workplace) params.set('workplace', query.workplace.join(','));
  if (query.department) params.set('department', query.department);
  params.set('limit', String(query.limit));
  params.set('cursor', cursor);
  return `/api/v1/jobs?${params.toString()}`;
}

/** Where a cursor walk goes on: the top for an empty cursor, else after the cursor's job. */
function resume(key: Buffer, filter: Buffer, cursor: string): { page: number; after: ListPosition | null } {
  if (cursor === '') return { page: 1, after: null };
  const { page, createdAt, id } = decodeCursor(key, filter, cursor);
  return { page, after: { createdAt, id } };
}

/**
 * GET /api/v1/jobs in either mode. `page` pages are offsets, as the spec has them; `cursor`
 * pages (an empty cursor starts at the top) walk the listing order from a signed position, so
 * creates during the walk never shift it. Both modes link to the next page by cursor.
 */
export async function listPage(db: Database, key: Buffer, query: ListQuery): Promise<ListPage> {
  const filter = filterDigest(canonicalFilter(query));
  const walk = query.cursor === undefined ? undefined : resume(key, filter, query.cursor);
  const page = walk?.page ?? query.page;
  const mode: ListMode = walk ? { after: walk.after } : { page };
  const { rows, total, hasMore } = await listJobs(db, query, mode);
  const last = rows.at(-1);
  const nextCursor =
    hasMore && last ? encodeCursor(key, filter, { createdAt: new Date(last.createdAt), id: last.id, page: page + 1 }) : null;
  return {
    body: {
      data: rows,
      meta: {
        total,
        page,
        limit: query.limit,
        totalPages: Math.ceil(total / query.limit),
        // Offset pages keep the spec's meta exactly; their next cursor is in the Link header.
        ...(walk ? { nextCursor } : {}),
      },
    },
    next: nextCursor === null ? undefined : nextUrl(query, nextCursor),
  };
}

export const listJobsRoute: Route = {
  operationId: 'listJobs',
  method: 'get',
  path: '/api/v1/jobs',
  scope: 'jobs:read',
  tag: 'jobs',
  summary: 'List jobs, newest first (createdAt desc, then id desc)',
  description:
    'Offset pages with page, or a cursor walk with cursor (empty to start): a walk never repeats or skips a job that ' +
    'existed when it began, however many are created meanwhile. Both modes send Link: <...>; rel="next" (a URL ' +
    'relative to the one called) while another page follows.',
  query: ListQuery,
  conditional: true,
  database: true,
  responses: {
    '200': {
      description: 'A page of jobs',
      body: JobList,
      example: LIST_PAGE_EXAMPLE,
      headers: { Link: '`</api/v1/jobs?...&cursor=...>; rel="next"` while another page follows' },
    },
    '400': errorResponse('A query parameter or cursor is not valid; the message says which', 'limit must be an integer from 1 to 100'),
  },
  handler: (db) => async (ctx) => {
    const query = parseListQuery(ctx.query);
    const { body, next } = await listPage(db, await signingKey(db), query);
    // Relative: behind the gateway the Host we see is the upstream's, not the one the partner called.
    if (next) ctx.set('Link', `<${next}>; rel="next"`);
    ctx.body = body;
  },
};
