import type { Database } from '../../db/client';
import { canonicalFilter, type ListQuery } from './list-query';
import { projectJob } from './project';
import { listJobs, type ListMode, type ListPosition } from './repository';
import type { JobList } from './responses';
import { decodeCursor, encodeCursor, filterDigest } from './tokens';

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
      data: rows.map(projectJob),
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
