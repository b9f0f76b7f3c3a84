import { createHash } from 'node:crypto';

/**
 * The mirror check's arithmetic (docs/guides/keeping-a-mirror.md), the same a partner runs on its
 * own mirror: a job's digest is the first 8 bytes of SHA-256 of its canonical JSON (keys sorted,
 * no whitespace); a set's digest is the XOR of its jobs' digests, so order never matters; a job
 * falls in the bucket named by the first 12 bits of SHA-256 of its id.
 */

/** Buckets the service keeps; a partner asks for any power of two up to this many. */
export const FINE_BUCKETS = 4096;

/** Bucket counts a check may ask for: 1, 2, 4, ... FINE_BUCKETS. */
export const isBucketCount = (n: number): boolean =>
  Number.isInteger(n) && n >= 1 && n <= FINE_BUCKETS && (n & (n - 1)) === 0;

/** JSON with every object's keys sorted and no whitespace: what JSON.stringify writes, in one order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A job's digest, as an unsigned 64-bit integer. */
export const jobDigest = (job: object): bigint =>
  createHash('sha256').update(canonicalJson(job)).digest().readBigUInt64BE(0);

/** The fine bucket (0 to FINE_BUCKETS - 1) of a job id. */
export function fineBucketOf(id: string): number {
  const hash = createHash('sha256').update(id).digest();
  return (hash[0]! << 4) | (hash[1]! >> 4);
}

/** The fine buckets bucket `bucket` of `buckets` covers: [first, last]. */
export function fineRange(bucket: number, buckets: number): { first: number; last: number } {
  const width = FINE_BUCKETS / buckets;
  return { first: bucket * width, last: (bucket + 1) * width - 1 };
}

/** A digest as partners see it: 16 lower-case hex digits. */
export const hex64 = (digest: bigint): string => digest.toString(16).padStart(16, '0');
