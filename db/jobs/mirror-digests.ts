import { and, asc, between, eq, gt, inArray, lte, max, or, sql } from 'drizzle-orm';
import { jobChangeSequence, jobChanges, jobDigestBuckets, jobDigestBuilds, jobDigests, jobs } from '../schema';
import { execute, qb, select, transaction, type Database, type Queryable } from '../sql';
import { lockSequencer, readLineage } from './change-history';
import { tableCreated } from './table-created';
import { jobColumns, toJob, type JobRow } from './job-columns';
import type { Job } from '../../domain/job';
import type { History } from '../../domain/feed';
import { FINE_BUCKETS, fineBucketOf, jobDigest } from '../../domain/mirror-digest';

// Listable now: not soft-deleted (visible_status is NULL then), not a draft, not deleted (no row).
const listable = sql<number>`coalesce(${jobs.visibleStatus} <> 'draft', false)`;
// Digests are read as hex: the driver reads an unsigned 64-bit integer as a lossy Number.
const hexOf = (column: typeof jobDigests.digest | typeof jobDigestBuckets.digest) => sql<string>`hex(${column})`;
const fromHex = (hex: string): bigint => BigInt(`0x${hex}`);
// Written as decimal text the server casts: never through a JavaScript Number.
const unsigned = (digest: bigint) => sql`cast(${digest.toString()} as unsigned)`;

/** A job row as the feed shows it: its digest when listable, none when not. */
const digestOf = (row: JobRow & { listable: number }): bigint | undefined =>
  row.listable === 1 ? jobDigest(toJob(row)) : undefined;

type Delta = { digest: bigint; n: number };

/** Jobs read per statement by a rebuild or a catch-up. */
const REBUILD_BATCH = 1000;

/** Adds `deltas` into the buckets' rows: XOR is its own inverse, so adding a job and taking it away are one operation. */
async function addToBuckets(tx: Queryable, deltas: Map<number, Delta>): Promise<void> {
  if (deltas.size === 0) return;
  await execute(
    tx,
    qb
      .insert(jobDigestBuckets)
      .values([...deltas].map(([bucket, { digest, n }]) => ({ bucket, digest: unsigned(digest), n })))
      .onDuplicateKeyUpdate({
        set: {
          digest: sql`${jobDigestBuckets.digest} ^ values(${jobDigestBuckets.digest})`,
          n: sql`${jobDigestBuckets.n} + values(${jobDigestBuckets.n})`,
        },
      }),
  );
}

/**
 * In the sequencer's transaction, for the jobs it has just numbered (their job_changes rows locked):
 * each job's digest as the feed now shows it replaces the one kept, and the buckets move by the
 * difference. A later write to one of them waits on that lock and leaves a change to number again.
 */
export async function refreshDigests(tx: Queryable, jobIds: readonly string[]): Promise<void> {
  if (jobIds.length === 0) return;
  const rows = await select(
    tx,
    { changed: jobChanges.jobId, listable, kept: hexOf(jobDigests.digest), ...jobColumns },
    (query) =>
      query
        .from(jobChanges)
        .leftJoin(jobs, eq(jobs.id, jobChanges.jobId))
        .leftJoin(jobDigests, eq(jobDigests.jobId, jobChanges.jobId))
        .where(inArray(jobChanges.jobId, [...jobIds])),
  );
  const deltas = new Map<number, Delta>();
  const kept: Array<{ jobId: string; bucket: number; digest: bigint }> = [];
  const dropped: string[] = [];
  for (const row of rows) {
    const before = row.kept === null ? undefined : fromHex(row.kept);
    const now = digestOf(row);
    if (before === now) continue;
    const bucket = fineBucketOf(row.changed);
    const delta = deltas.get(bucket) ?? { digest: 0n, n: 0 };
    if (before !== undefined) Object.assign(delta, { digest: delta.digest ^ before, n: delta.n - 1 });
    if (now !== undefined) Object.assign(delta, { digest: delta.digest ^ now, n: delta.n + 1 });
    deltas.set(bucket, delta);
    if (now === undefined) dropped.push(row.changed);
    else kept.push({ jobId: row.changed, bucket, digest: now });
  }
  if (kept.length > 0)
    await execute(
      tx,
      qb
        .insert(jobDigests)
        .values(kept.map((job) => ({ ...job, digest: unsigned(job.digest) })))
        .onDuplicateKeyUpdate({ set: { digest: sql`values(${jobDigests.digest})` } }),
    );
  if (dropped.length > 0) await execute(tx, qb.delete(jobDigests).where(inArray(jobDigests.jobId, dropped)));
  await addToBuckets(tx, deltas);
}

/**
 * In the sequencer's transaction: the digests of the jobs numbered in (from, to] by a sequencer that
 * kept none (an older release, in a rolling upgrade or after a rollback), at most `limit` numbers a
 * call. Returns the number through which the digests now hold every job.
 */
export async function catchUpDigests(tx: Queryable, from: number, to: number, limit: number): Promise<number> {
  let through = from;
  while (through < to && through - from < limit) {
    const rows = await select(tx, { jobId: jobChanges.jobId, seq: jobChanges.seq }, (query) =>
      query
        .from(jobChanges)
        .where(and(gt(jobChanges.seq, through), lte(jobChanges.seq, to)))
        .orderBy(asc(jobChanges.seq))
        .limit(REBUILD_BATCH)
        .for('update'),
    );
    await refreshDigests(
      tx,
      rows.map(({ jobId }) => jobId),
    );
    through = rows.length < REBUILD_BATCH ? to : rows.at(-1)!.seq!;
  }
  return through;
}

/** What a rebuild found: the jobs digested, and whether what was kept differed from what it computed. */
export interface Rebuilt {
  jobs: number;
  differed: boolean;
}

/**
 * Every digest computed again from `jobs` as it is, under the sequencer's lock (no numbering meanwhile):
 * after a restore, or whenever what is kept is in doubt. Jobs changed while it reads leave changes
 * the sequencer numbers afterwards, as always.
 */
export async function rebuildDigests(db: Database): Promise<Rebuilt> {
  return transaction(
    db,
    async (tx) => {
      const { lastSeq } = await lockSequencer(tx);
      const before = await readFine(tx);
      while ((await execute(tx, qb.delete(jobDigests).limit(10 * REBUILD_BATCH))).affectedRows > 0);
      const fine = Array.from({ length: FINE_BUCKETS }, () => ({ digest: 0n, n: 0 }));
      let after: string | undefined;
      for (;;) {
        const rows = await select(tx, { listable, ...jobColumns }, (query) =>
          query
            .from(jobs)
            .where(after === undefined ? undefined : gt(jobs.id, after))
            .orderBy(asc(jobs.id))
            .limit(REBUILD_BATCH),
        );
        const digested = rows.flatMap((row) => {
          const digest = digestOf(row);
          return digest === undefined ? [] : [{ jobId: row.id, bucket: fineBucketOf(row.id), digest }];
        });
        for (const { bucket, digest } of digested)
          Object.assign(fine[bucket]!, { digest: fine[bucket]!.digest ^ digest, n: fine[bucket]!.n + 1 });
        if (digested.length > 0)
          await execute(
            tx,
            qb.insert(jobDigests).values(digested.map((job) => ({ ...job, digest: unsigned(job.digest) }))),
          );
        if (rows.length < REBUILD_BATCH) break;
        after = rows.at(-1)!.id;
      }
      await execute(tx, qb.delete(jobDigestBuckets));
      await execute(
        tx,
        qb
          .insert(jobDigestBuckets)
          .values(fine.map(({ digest, n }, bucket) => ({ bucket, digest: unsigned(digest), n }))),
      );
      await execute(
        tx,
        qb.update(jobChangeSequence).set({ digestsThrough: lastSeq }).where(eq(jobChangeSequence.id, 1)),
      );
      const { created } = await tableCreated(tx, jobDigests);
      await execute(
        tx,
        qb
          .insert(jobDigestBuilds)
          .values({ id: 1, tableCreated: created })
          .onDuplicateKeyUpdate({ set: { tableCreated: created } }),
      );
      const differed = fine.some(
        ({ digest, n }, bucket) => before[bucket]!.digest !== digest || before[bucket]!.n !== n,
      );
      return { jobs: fine.reduce((sum, { n }) => sum + n, 0), differed };
    },
    'read committed',
  );
}

/** Builds the digests when they were never built, or the tables were recreated since (a restore from a dump). */
export async function ensureDigests(db: Database): Promise<Rebuilt | undefined> {
  const [built] = await select(db, { tableCreated: jobDigestBuilds.tableCreated }, (query) =>
    query.from(jobDigestBuilds).where(eq(jobDigestBuilds.id, 1)),
  );
  return built && built.tableCreated === (await tableCreated(db, jobDigests)).created ? undefined : rebuildDigests(db);
}

/** The fine buckets' digests and sizes, in bucket order (missing rows as empty). */
async function readFine(tx: Queryable): Promise<Delta[]> {
  const rows = await select(
    tx,
    { bucket: jobDigestBuckets.bucket, digest: hexOf(jobDigestBuckets.digest), n: jobDigestBuckets.n },
    (query) => query.from(jobDigestBuckets),
  );
  const fine = Array.from({ length: FINE_BUCKETS }, () => ({ digest: 0n, n: 0 }));
  for (const { bucket, digest, n } of rows) if (bucket < FINE_BUCKETS) fine[bucket] = { digest: fromHex(digest), n };
  return fine;
}

/** The mirror check, read in one snapshot: `buckets` digests and sizes, and the feed's last entry they are exact at. */
export interface DigestSnapshot {
  buckets: Delta[];
  /** The last feed entry the digests hold (0: none): a partner that has read the feed through it holds exactly these jobs. */
  seq: number;
  lineage: History[];
}

export async function readDigestSnapshot(db: Database, buckets: number): Promise<DigestSnapshot> {
  const width = FINE_BUCKETS / buckets;
  const coarse = sql<number>`${jobDigestBuckets.bucket} div ${width}`;
  return transaction(
    db,
    async (tx) => {
      // The server folds the fine buckets: a few hundred rows cross the wire, not 4,096.
      const rows = await select(
        tx,
        {
          bucket: coarse,
          digest: sql<string>`hex(bit_xor(${jobDigestBuckets.digest}))`,
          n: sql<number>`cast(sum(${jobDigestBuckets.n}) as signed)`,
        },
        (query) => query.from(jobDigestBuckets).groupBy(coarse),
      );
      const folded = Array.from({ length: buckets }, () => ({ digest: 0n, n: 0 }));
      for (const { bucket, digest, n } of rows) folded[Number(bucket)] = { digest: fromHex(digest), n: Number(n) };
      // Their position: the last feed entry among the numbers they hold every job of.
      const [counter] = await select(tx, { through: jobChangeSequence.digestsThrough }, (query) =>
        query.from(jobChangeSequence).where(eq(jobChangeSequence.id, 1)),
      );
      const [last] = await select(tx, { seq: max(jobChanges.seq) }, (query) =>
        query.from(jobChanges).where(and(eq(jobChanges.everPublic, true), lte(jobChanges.seq, counter?.through ?? 0))),
      );
      return { buckets: folded, seq: Number(last?.seq ?? 0), lineage: await readLineage(tx) };
    },
    'repeatable read',
  );
}

/** A page of the jobs of fine buckets [first, last], as they are now, in (bucket, id) order, after job `after`; `next` continues. */
export async function readBucketJobs(
  db: Queryable,
  range: { first: number; last: number },
  after: { bucket: number; id: string } | undefined,
  limit: number,
): Promise<{ jobs: Job[]; next: string | undefined }> {
  const rows = await select(db, { listable, ...jobColumns }, (query) =>
    query
      .from(jobDigests)
      .innerJoin(jobs, eq(jobs.id, jobDigests.jobId))
      .where(
        and(
          between(jobDigests.bucket, range.first, range.last),
          after &&
            or(
              gt(jobDigests.bucket, after.bucket),
              and(eq(jobDigests.bucket, after.bucket), gt(jobDigests.jobId, after.id)),
            ),
        ),
      )
      .orderBy(asc(jobDigests.bucket), asc(jobDigests.jobId))
      .limit(limit + 1),
  );
  const page = rows.slice(0, limit);
  // A job no longer listable (its removal not numbered yet) is left out, and the next page starts after it all the same.
  return {
    jobs: page.filter((row) => row.listable === 1).map(toJob),
    next: rows.length > limit ? page.at(-1)!.id : undefined,
  };
}
