/**
 * Checking a mirror without a full sync (docs/guides/keeping-a-mirror.md, "Checking a mirror"), as
 * examples/sync-client.ts and examples/webhook-receiver.ts do on start and every CHECK_SECONDS: ask
 * for the digest of every listable job per bucket, compute the same from the mirror, and where a
 * bucket differs, replace the mirror's jobs of that bucket with the API's. One wrong job costs two
 * requests (the check, and its bucket) where a full sync costs one per 500 jobs.
 */
import { createHash } from 'node:crypto';
import { apiGet } from './api-get';

type Job = { id: string; [field: string]: unknown };
/** What the check reads and repairs: the mirror's jobs, and the feed position they are exact at. */
export interface CheckedMirror {
  nextSince: string | null;
  jobs: Record<string, Job>;
}
interface DigestAnswer {
  data: { since: string; count: number; digest: string; buckets: string[] };
}
interface BucketPage {
  data: Job[];
  meta: { nextAfter: string | null };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON with keys sorted at every level and no whitespace. */
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(',')}]`
    : value !== null && typeof value === 'object'
      ? `{${Object.keys(value)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
          .join(',')}}`
      : JSON.stringify(value);

/** A job's bucket of `buckets`: the first 3 hex digits of SHA-256 of its id, scaled. */
const bucketOf = (id: string, buckets: number) => Math.floor((parseInt(sha256(id).slice(0, 3), 16) * buckets) / 4096);

/** Each bucket's digest: the XOR of its jobs' (the first 16 hex digits of SHA-256 of their canonical JSON). */
function bucketDigests(jobs: Iterable<Job>, buckets: number): string[] {
  const each = Array.from({ length: buckets }, () => 0n);
  for (const job of jobs) each[bucketOf(job.id, buckets)]! ^= BigInt(`0x${sha256(canonical(job)).slice(0, 16)}`);
  return each.map((digest) => digest.toString(16).padStart(16, '0'));
}

/** About 250 jobs a bucket, so one page of 500 repairs one: a power of two from 1 to 4096. */
const bucketsFor = (jobs: number) => 2 ** Math.min(12, Math.max(0, Math.ceil(Math.log2(jobs / 250))));

export interface CheckOptions {
  api: string;
  key: string;
  /** The mirror now (a full sync may have replaced it). */
  mirror(): CheckedMirror;
  /** When the check was taken at another feed position: brings the mirror to the feed's end and says true to check again now, or false to stop. */
  catchUp(): Promise<boolean>;
  save(): Promise<void>;
}

/** What a check found: exact, repaired (how many buckets), or never at the same position as the API; and the requests it took. */
export interface CheckReport {
  outcome: 'exact' | 'repaired' | 'moving';
  buckets: number;
  requests: number;
}

/** Checks the mirror and repairs each bucket that differs. */
export async function checkMirror(options: CheckOptions): Promise<CheckReport> {
  let requests = 0;
  const get = async <T>(path: string): Promise<T> => {
    requests++;
    const res = await apiGet(`${options.api}${path}`, options.key);
    if (!res.ok) throw new Error(`mirror check: ${path} answered ${res.status}`);
    return (await res.json()) as T;
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    const mirror = options.mirror();
    const buckets = bucketsFor(Object.keys(mirror.jobs).length);
    const { data } = await get<DigestAnswer>(`/api/v1/jobs/changes/digest?buckets=${buckets}`);
    // Comparable only at the same feed position: changes came in between, read them first.
    if (data.since !== mirror.nextSince) {
      if (await options.catchUp()) continue;
      break;
    }
    const mine = bucketDigests(Object.values(mirror.jobs), buckets);
    const differ = mine.flatMap((digest, bucket) => (digest === data.buckets[bucket] ? [] : [bucket]));
    for (const bucket of differ) {
      for (const id of Object.keys(mirror.jobs)) if (bucketOf(id, buckets) === bucket) delete mirror.jobs[id];
      let after = '';
      do {
        const page = await get<BucketPage>(
          `/api/v1/jobs/changes/digest/${bucket}?buckets=${buckets}${after ? `&after=${after}` : ''}`,
        );
        for (const job of page.data) mirror.jobs[job.id] = job;
        after = page.meta.nextAfter ?? '';
      } while (after);
    }
    if (differ.length > 0) await options.save();
    return { outcome: differ.length > 0 ? 'repaired' : 'exact', buckets: differ.length, requests };
  }
  return { outcome: 'moving', buckets: 0, requests };
}

/** The check's one log line. */
export const describeCheck = (report: CheckReport, mirrored: number) =>
  report.outcome === 'exact'
    ? `mirror check: exact (${mirrored} jobs, ${report.requests} request${report.requests === 1 ? '' : 's'})`
    : report.outcome === 'repaired'
      ? `mirror check: ${report.buckets} bucket${report.buckets === 1 ? '' : 's'} differed, repaired in ${report.requests} requests (${mirrored} jobs mirrored)`
      : `mirror check: the feed kept moving (${report.requests} requests); checking again at the next interval`;
