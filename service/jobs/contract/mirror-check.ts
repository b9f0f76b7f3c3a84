import { z } from 'zod';
import { Job, JOB_EXAMPLE } from '../../../domain/job';
import { FINE_BUCKETS, isBucketCount } from '../../../domain/mirror-digest';
import { isUuid } from '../../../domain/uuid';
import type { QueryString } from '../../http/input';

/** The mirror check's contract (docs/guides/keeping-a-mirror.md, "Checking a mirror"): its queries, answers and messages. */

export const MIRROR_CHECK_MESSAGES = {
  buckets: `buckets must be a power of two from 1 to ${FINE_BUCKETS}`,
  bucketNotFound: 'Bucket not found: buckets are numbered from 0 to buckets - 1',
  after: 'after must be meta.nextAfter of the previous page of this bucket, exactly as it was given',
  limit: 'limit must be an integer from 1 to 500',
} as const;

/** Buckets the check answers with when not asked: one request narrows one job's difference down to ~0.4% of the jobs. */
const DEFAULT_BUCKETS = 256;
const hex64 = z.string().regex(/^[0-9a-f]{16}$/);

const buckets = z
  .string()
  .regex(/^\d{1,4}$/, MIRROR_CHECK_MESSAGES.buckets)
  .transform(Number)
  .pipe(
    z
      .number()
      .int()
      .min(1, MIRROR_CHECK_MESSAGES.buckets)
      .max(FINE_BUCKETS, MIRROR_CHECK_MESSAGES.buckets)
      .refine(isBucketCount, MIRROR_CHECK_MESSAGES.buckets),
  )
  .default(DEFAULT_BUCKETS)
  .meta({
    description: `How many buckets the jobs are split into: a power of two from 1 to ${FINE_BUCKETS} (default ${DEFAULT_BUCKETS}).`,
  });

export const MirrorDigestQuery = z.object({ buckets });
export type MirrorDigestQuery = z.infer<typeof MirrorDigestQuery>;
export const MIRROR_DIGEST_QUERY: QueryString<typeof MirrorDigestQuery> = { parameters: MirrorDigestQuery };

export const MirrorBucketQuery = z.object({
  buckets,
  after: z.string().refine(isUuid, MIRROR_CHECK_MESSAGES.after).optional().meta({
    description: "meta.nextAfter of the previous page: the bucket's jobs after it.",
    format: 'uuid',
    maxLength: 36,
  }),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, MIRROR_CHECK_MESSAGES.limit)
    .transform(Number)
    .pipe(z.number().int().min(1, MIRROR_CHECK_MESSAGES.limit).max(500, MIRROR_CHECK_MESSAGES.limit))
    .default(500)
    .meta({ description: 'Jobs per page, 1 to 500 (default 500).' }),
});
export type MirrorBucketQuery = z.infer<typeof MirrorBucketQuery>;
export const MIRROR_BUCKET_QUERY: QueryString<typeof MirrorBucketQuery> = { parameters: MirrorBucketQuery };

export const MirrorBucketParams = z.object({
  bucket: z
    .string()
    .regex(/^\d{1,4}$/, MIRROR_CHECK_MESSAGES.bucketNotFound)
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(0)
        .max(FINE_BUCKETS - 1),
    )
    .meta({ description: 'The bucket, from 0 to buckets - 1', examples: [17] }),
});

export const MirrorDigest = z.strictObject({
  data: z.strictObject({
    since: z.string().meta({
      description:
        'The feed position the digest is exact at: equal to your saved meta.nextSince once your mirror has read the feed through it',
    }),
    count: z.int().min(0).meta({ description: 'Listable jobs, as a full sync lists them' }),
    digest: hex64.meta({ description: "XOR of every listable job's digest, 16 hex digits" }),
    buckets: z.array(hex64).meta({ description: "Bucket i's digest: the XOR of the digests of its jobs" }),
  }),
});
export type MirrorDigest = z.infer<typeof MirrorDigest>;

export const MIRROR_DIGEST_EXAMPLE: MirrorDigest = {
  data: {
    since: 'A3weKp1Lb4A1AAAAAAAAACqhvLOt3gsFuRgAQMYmpDy-',
    count: 2,
    digest: '5f0c2a9e41d7b388',
    buckets: ['1b4e0f2a9c3d7e65', '443225b4dd0acded'],
  },
};

export const MirrorBucket = z.strictObject({
  data: z.array(Job).meta({ description: "The bucket's listable jobs as they are now, in the bucket's order" }),
  meta: z.strictObject({
    bucket: z.int().min(0),
    buckets: z.int().min(1).max(FINE_BUCKETS),
    nextAfter: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `after` for the rest of this bucket; null on its last page' }),
  }),
});
export type MirrorBucket = z.infer<typeof MirrorBucket>;

export const MIRROR_BUCKET_EXAMPLE: MirrorBucket = {
  data: [JOB_EXAMPLE],
  meta: { bucket: 1, buckets: 2, nextAfter: null },
};
