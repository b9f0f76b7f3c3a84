import type { Database } from '../../../db/client';
import { listJobs, type ListMode, type ListPosition } from '../../../db/jobs/listing';
import { signingKey } from '../../../db/signing-key';
import { canonicalFilter, FILTER_NAMES } from '../../../domain/list-filters';
import { LIST_LIMIT_MESSAGE, LIST_QUERY, type ListQuery } from '../contract/queries';
import { JobList, LIST_PAGE_EXAMPLE } from '../contract/responses';
import { NEXT_PAGE_HEADERS, type HeaderValues } from '../../headers';
import { errorResponse } from '../../http/responses';
import { defineRoute } from '../../http/route';
import { decodeCursor, encodeCursor, filterDigest } from '../../http/tokens';

export interface ListPage {
  body: JobList;
  /** The next page's URL, relative to the origin the client called (for the Link header). */
  next: string | undefined;
}

/** The next page's URL: this request's filter and limit, and the cursor; never api_key. */
function nextUrl(query: ListQuery, cursor: string): string {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) {
    const value = query[name];
    if (value !== undefined) params.set(name, typeof value === 'string' ? value : value.join(','));
  }
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

/** GET /api/v1/jobs in either mode. */
export async function listPage(db: Database, key: Buffer, query: ListQuery): Promise<ListPage> {
  const filter = filterDigest(canonicalFilter(query));
  const walk = query.cursor === undefined ? undefined : resume(key, filter, query.cursor);
  const page = walk?.page ?? query.page;
  const mode: ListMode = walk ? { after: walk.after } : { page };
  const { rows, total, hasMore } = await listJobs(db, query, mode);
  const last = rows.at(-1);
  const nextCursor =
    hasMore && last
      ? encodeCursor(key, filter, { createdAt: new Date(last.createdAt), id: last.id, page: page + 1 })
      : null;
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

export const listJobsRoute = defineRoute({
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
  query: LIST_QUERY,
  conditional: true,
  database: true,
  responses: {
    '200': {
      description: 'A page of jobs',
      body: JobList,
      example: LIST_PAGE_EXAMPLE,
      headers: NEXT_PAGE_HEADERS,
    },
    '400': errorResponse('A query parameter or cursor is not valid; the message says which', LIST_LIMIT_MESSAGE),
  },
  handler:
    ({ db }) =>
    async (ctx, { query }) => {
      const { body, next } = await listPage(db, await signingKey(db), query);
      // Relative: behind the gateway the Host we see is the upstream's, not the one the partner called.
      if (next) ctx.set({ Link: `<${next}>; rel="next"` } satisfies HeaderValues<typeof NEXT_PAGE_HEADERS>);
      ctx.body = body;
    },
});
