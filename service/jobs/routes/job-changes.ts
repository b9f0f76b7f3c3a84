import type { Database } from '../../../db/client';
import { pollFeed } from '../../../db/jobs/change-feed';
import { signingKey } from '../../../db/signing-key';
import { badRequest, MESSAGES } from '../../errors';
import { CHANGES_QUERY, type ChangesQuery } from '../contract/queries';
import { CHANGE_PAGE_EXAMPLE, ChangeList } from '../contract/responses';
import { errorResponse } from '../../http/responses';
import { defineRoute } from '../../http/route';
import { decodeSince, encodeSince } from '../../http/tokens';

/** GET /api/v1/jobs/changes: the changes after the caller's position. */
async function changesPage(db: Database, key: Buffer, query: ChangesQuery): Promise<ChangeList> {
  const page = await pollFeed(db, query.since ? decodeSince(key, query.since) : undefined, query.limit);
  if ('refused' in page) throw badRequest(page.refused === 'ahead' ? MESSAGES.sinceAhead : MESSAGES.sinceRewritten);
  return {
    data: page.entries,
    meta: { nextSince: encodeSince(key, page.next), hasMore: page.hasMore, limit: query.limit },
  };
}

export const jobChangesRoute = defineRoute({
  operationId: 'listJobChanges',
  method: 'get',
  path: '/api/v1/jobs/changes',
  scope: 'jobs:read',
  tag: 'jobs',
  summary: 'Every job whose public view changed after a position, in change order',
  description:
    'Each entry is the job as it is now when listable (active, open, paused, closed), or {"id","removed":true} once it ' +
    'was soft-deleted, deleted or went back to draft. Drafts never appear. Replaying from the beginning yields exactly ' +
    'the listable jobs; continue with meta.nextSince, at once while meta.hasMore.',
  query: CHANGES_QUERY,
  conditional: true,
  database: true,
  responses: {
    '200': { description: 'A page of changes', body: ChangeList, example: CHANGE_PAGE_EXAMPLE },
    '400': errorResponse(
      'A query parameter or since token is not valid; the message says which',
      MESSAGES.sinceInvalid,
    ),
  },
  handler:
    ({ db }) =>
    async (ctx, { query }) => {
      ctx.body = await changesPage(db, await signingKey(db), query);
    },
});
