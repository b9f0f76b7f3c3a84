/**
 * Property: the mirror check's digest (GET /api/v1/jobs/changes/digest) equals the digest a partner
 * computes from a full sync (docs/guides/keeping-a-mirror.md), under random creates, edits,
 * internal-only edits, status changes, removals and hard deletes by plain SQL, some in concurrent
 * bursts and some in transactions left open across checks; and a mirror kept from the feed through
 * the answer's `since` has that digest too. Random but seeded: a failure prints the seed.
 */
import { generateJobs, generator } from '../../../../db/seed-data';
import { rebuildDigests } from '../../../../db/jobs/mirror-digests';
import { reader } from '../../../helpers/consumers';
import { call } from '../../../helpers/http';
import { mirrorDigest } from '../../../helpers/mirror-digest';
import { sharedTestService } from '../../../helpers/service';

const service = sharedTestService({ name: 'mirror_digest_property', seed: true });
const BUCKETS = [1, 16, 256, 4096];

/** A full sync: every listable job, through the list's cursor walk. */
async function fullSync(): Promise<Array<{ id: string }>> {
  const found: Array<{ id: string }> = [];
  let cursor = '';
  for (;;) {
    const res = await call(`${service.url}/api/v1/jobs?status=active,open,paused,closed&limit=100&cursor=${cursor}`, {
      headers: reader,
    });
    expect(res.status).toBe(200);
    found.push(...res.body.data);
    if (res.body.meta.nextCursor === null) return found;
    cursor = res.body.meta.nextCursor;
  }
}

const check = async (buckets: number) => {
  const res = await call(`${service.url}/api/v1/jobs/changes/digest?buckets=${buckets}`, { headers: reader });
  expect(res.status).toBe(200);
  return res.body.data as { since: string; count: number; digest: string; buckets: string[] };
};

test.each([[58], [20261206], [9001]])('the digest equals a full sync under random changes (seed %i)', async (seed) => {
  const rnd = generator(seed);
  const mirror = new Map<string, { id: string }>();
  let since = '';
  let made = 0;
  const poll = async () => {
    for (;;) {
      const res = await call(`${service.url}/api/v1/jobs/changes?limit=500&since=${since}`, { headers: reader });
      for (const entry of res.body.data as Array<{ id: string; removed?: true }>) {
        if (entry.removed) mirror.delete(entry.id);
        else mirror.set(entry.id, entry);
      }
      since = res.body.meta.nextSince;
      if (!res.body.meta.hasMore) return;
    }
  };
  const sql = (text: string, values?: unknown[]) => service.database.query(text, values);
  const anyId = async () =>
    rnd.pick(await service.database.query<Array<{ id: Buffer }>>('select id from jobs order by id')).id;

  const write = async (run: (text: string, values?: unknown[]) => Promise<unknown>) => {
    const id = await anyId();
    switch (rnd.int(8)) {
      case 0: {
        const [job] = generateJobs({
          count: 1,
          seed: rnd.int(1e9),
          firstNumber: 50_000 + seed + made++,
          statusFor: () => rnd.pick(['draft', 'active', 'open', 'paused', 'closed'] as const),
        });
        await run(
          `insert into jobs (id, title, department, location, type, description, requirements, responsibilities, status, created_at, salary_min, salary_max, salary_currency, salary_disclosed)
           values (?, ?, ?, ?, ?, ?, '["a"]', '[]', ?, ?, ?, ?, ?, ?)`,
          [
            Buffer.from(job!.id.replace(/-/g, ''), 'hex'),
            job!.title,
            job!.department,
            job!.location,
            job!.type,
            job!.description,
            job!.status,
            job!.createdAt,
            job!.salaryMin,
            job!.salaryMax,
            job!.salaryCurrency,
            job!.salaryDisclosed,
          ],
        );
        return;
      }
      case 1:
        return run('update jobs set title = ?, updated_at = now(3) where id = ?', [`Retitled ${rnd.int(1e6)}`, id]);
      case 2:
        return run('update jobs set salary_disclosed = not salary_disclosed where id = ?', [id]);
      case 3:
        return run('update jobs set internal_notes = ? where id = ?', [`note ${rnd.int(1000)}`, id]);
      case 4:
        return run('update jobs set status = ? where id = ?', [rnd.pick(['draft', 'active', 'paused', 'closed']), id]);
      case 5:
        return run('update jobs set deleted_at = now(3) where id = ?', [id]);
      case 6:
        return run('update jobs set deleted_at = null where id = ?', [id]);
      default:
        return run('delete from jobs where id = ?', [id]);
    }
  };

  // As a partner checks: its mirror read through the feed, then the check, whose position is the mirror's.
  const agrees = async () => {
    const buckets = rnd.pick(BUCKETS);
    await poll();
    const answer = await check(buckets);
    expect(answer.since).toBe(since);
    expect(mirrorDigest(mirror.values(), buckets).digest).toBe(answer.digest);
    const truth = await fullSync();
    expect({ count: answer.count, ...mirrorDigest(truth, buckets) }).toEqual({
      count: truth.length,
      digest: answer.digest,
      buckets: answer.buckets,
    });
  };

  try {
    await agrees();
    for (let round = 0; round < 12; round++) {
      // A burst of concurrent writes, with checks racing them.
      await Promise.all([
        ...Array.from({ length: 4 + rnd.int(8) }, () => write(sql)),
        check(rnd.pick(BUCKETS)),
        poll(),
      ]);
      if (rnd.int(3) === 0) {
        // A transaction open across a check: what it wrote counts once it commits, not before.
        const connection = await service.database.pool.getConnection();
        try {
          await connection.query('start transaction');
          await write((text, values) => connection.query(text, values));
          await check(rnd.pick(BUCKETS));
          await connection.query(rnd.int(2) ? 'commit' : 'rollback');
        } finally {
          connection.release();
        }
      }
      await agrees();
    }
    // A rebuild from the table finds nothing to correct.
    expect(await rebuildDigests(service.database.db)).toMatchObject({ differed: false });
    await agrees();
  } catch (error) {
    throw new Error(`seed ${seed}: ${(error as Error).message}`, { cause: error });
  }
});
