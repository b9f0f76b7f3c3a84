import { sequencePendingChanges } from '../../../db/jobs/change-numbering';
import { readBucketJobs } from '../../../db/jobs/mirror-digests';
import { fineBucketOf, fineRange } from '../../../domain/mirror-digest';
import { badRequest, notFound } from '../../errors';
import { errorResponse } from '../../http/responses';
import { defineRoute } from '../../http/route';
import {
  MIRROR_BUCKET_EXAMPLE,
  MIRROR_BUCKET_QUERY,
  MIRROR_CHECK_MESSAGES,
  MirrorBucket,
  MirrorBucketParams,
} from '../contract/mirror-check';

export const mirrorBucketRoute = defineRoute({
  operationId: 'listMirrorBucket',
  method: 'get',
  path: '/api/v1/jobs/changes/digest/:bucket',
  scope: 'jobs:read',
  tag: 'jobs',
  summary: "One bucket's listable jobs: what a mirror replaces its bucket with when the bucket's digest differs",
  description:
    'The jobs of bucket {bucket} of {buckets} (as GET /api/v1/jobs/changes/digest splits them), as they are now. ' +
    'Replace every job of that bucket in your mirror with these, following meta.nextAfter while it is not null.',
  params: MirrorBucketParams,
  query: MIRROR_BUCKET_QUERY,
  conditional: true,
  database: true,
  responses: {
    '200': { description: "The bucket's jobs", body: MirrorBucket, example: MIRROR_BUCKET_EXAMPLE },
    '400': errorResponse('A query parameter is not valid; the message says which', MIRROR_CHECK_MESSAGES.buckets),
    '404': errorResponse('No such bucket for this many buckets', MIRROR_CHECK_MESSAGES.bucketNotFound),
  },
  handler:
    ({ db }) =>
    async (ctx, { params: { bucket }, query: { buckets, after, limit } }) => {
      if (bucket >= buckets) throw notFound(MIRROR_CHECK_MESSAGES.bucketNotFound);
      const range = fineRange(bucket, buckets);
      const from =
        after === undefined ? undefined : { bucket: fineBucketOf(after.toLowerCase()), id: after.toLowerCase() };
      if (from && (from.bucket < range.first || from.bucket > range.last))
        throw badRequest(MIRROR_CHECK_MESSAGES.after);
      // A bucket's jobs are those numbered in it: what is committed is numbered first, as a poll does.
      if (!from) await sequencePendingChanges(db);
      const page = await readBucketJobs(db, range, from, limit);
      ctx.body = { data: page.jobs, meta: { bucket, buckets, nextAfter: page.next ?? null } };
    },
});
