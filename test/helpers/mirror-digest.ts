import { createHash } from 'node:crypto';

/**
 * The mirror check as a partner computes it, written from docs/guides/keeping-a-mirror.md alone
 * (not from domain/): what the tests hold the service's answers against.
 */
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(',')}]`
    : value !== null && typeof value === 'object'
      ? `{${Object.keys(value)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
          .join(',')}}`
      : JSON.stringify(value);

export const jobDigestOf = (job: object) => BigInt(`0x${sha256(canonical(job)).slice(0, 16)}`);
export const bucketOf = (id: string, buckets: number) =>
  Math.floor((parseInt(sha256(id).slice(0, 3), 16) * buckets) / 4096);
const hex = (digest: bigint) => digest.toString(16).padStart(16, '0');

/** A mirror's digest and its buckets' digests, as 16 hex digits each. */
export function mirrorDigest(jobs: Iterable<{ id: string }>, buckets: number): { digest: string; buckets: string[] } {
  const each = Array.from({ length: buckets }, () => 0n);
  for (const job of jobs) each[bucketOf(job.id, buckets)]! ^= jobDigestOf(job);
  return { digest: hex(each.reduce((a, b) => a ^ b, 0n)), buckets: each.map(hex) };
}
