import type { Database } from '../../../db/client';
import { readDigestSnapshot } from '../../../db/jobs/mirror-digests';
import { signingKey } from '../../../db/signing-key';
import { historyOf } from '../../../domain/feed';
import { hex64 } from '../../../domain/mirror-digest';
import { errorResponse } from '../../http/responses';
import { defineRoute } from '../../http/route';
import { encodeSince } from '../../http/tokens';
import {
  MIRROR_CHECK_MESSAGES,
  MIRROR_DIGEST_EXAMPLE,
  MIRROR_DIGEST_QUERY,
  MirrorDigest,
} from '../contract/mirror-check';

/** The digest of the listable jobs, per bucket and in all, with the feed position it is exact at. */
async function mirrorDigest(db: Database, buckets: number): Promise<MirrorDigest> {
  // Nothing is numbered here (a read never writes): the answer is exact at the last change numbered, which a poll numbers.
  const [snapshot, key] = await Promise.all([readDigestSnapshot(db, buckets), signingKey(db)]);
  const position = { history: historyOf(snapshot.lineage, snapshot.seq).id, seq: snapshot.seq };
  return {
    data: {
      since: encodeSince(key, position),
      count: snapshot.buckets.reduce((sum, { n }) => sum + n, 0),
      digest: hex64(snapshot.buckets.reduce((all, { digest }) => all ^ digest, 0n)),
      buckets: snapshot.buckets.map(({ digest }) => hex64(digest)),
    },
  };
}

export const mirrorDigestRoute = defineRoute({
  operationId: 'getMirrorDigest',
  method: 'get',
  path: '/api/v1/jobs/changes/digest',
  scope: 'jobs:read',
  tag: 'jobs',
  summary: 'Check a mirror: a digest of every listable job, per bucket, exact at a feed position',
  description:
    "A job's digest is the first 8 bytes of SHA-256 of its canonical JSON (keys sorted, no whitespace), as 16 hex digits; " +
    "a set's digest is the XOR of its jobs'. A job is in bucket floor(int(first 3 hex digits of SHA-256(id)) × buckets / 4096). " +
    'Read the feed to its end first (reading it numbers what changed): once your saved meta.nextSince equals data.since, ' +
    "your mirror's digest equals data.digest; where a bucket differs, " +
    'GET /api/v1/jobs/changes/digest/{bucket} lists that bucket to repair it. The answer reads a few thousand rows, however many jobs.',
  query: MIRROR_DIGEST_QUERY,
  conditional: true,
  database: true,
  responses: {
    '200': { description: 'The digests', body: MirrorDigest, example: MIRROR_DIGEST_EXAMPLE },
    '400': errorResponse('buckets is not a power of two from 1 to 4096', MIRROR_CHECK_MESSAGES.buckets),
  },
  handler:
    ({ db }) =>
    async (ctx, { query }) => {
      ctx.body = await mirrorDigest(db, query.buckets);
    },
});
