/**
 * The mirror check's digests through a restore as docs/operations.md does it (the database dropped,
 * the dump loaded, the service started: it migrates): the start rebuilds them, since the restore
 * recreated their table, and they equal the restored jobs' before and after more changes. A digest
 * corrupted in place is found and corrected by the rebuild (npm run db:digests). Changes numbered by an
 * older release, which keeps no digests (a rolling upgrade), are caught up by housekeeping; meanwhile
 * the check answers at the position its digests hold.
 */
import { insertInBatches } from '../../../db/seed';
import { demoJobs, generateJobs } from '../../../db/seed-data';
import { sequencePendingChanges } from '../../../db/jobs/change-numbering';
import { HOUSEKEEPING } from '../../../service/housekeeping';
import { readDigestSnapshot, rebuildDigests } from '../../../db/jobs/mirror-digests';
import { migrateDatabase } from '../../../db/migrate';
import { hex64 } from '../../../domain/mirror-digest';
import { listable } from '../../examples/support';
import { dumpDatabase, restoreDatabase } from '../../helpers/backup';
import { freshDatabase, type TestDatabase } from '../../helpers/database';
import { mirrorDigest } from '../../helpers/mirror-digest';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('mirror_digests_restore');
  await insertInBatches(database.db, demoJobs());
});
afterAll(() => database?.close());

/** The kept digests, as the check answers them, and a full sync's, after numbering what is pending. */
async function digests(): Promise<{ kept: string[]; synced: string[] }> {
  while (await sequencePendingChanges(database.db));
  const { buckets } = await readDigestSnapshot(database.db, 16);
  const kept = { digest: buckets.reduce((all, { digest }) => all ^ digest, 0n), buckets: buckets.map((b) => b.digest) };
  const synced = mirrorDigest(Object.values(await listable(database.db)) as Array<{ id: string }>, 16);
  return { kept: [hex64(kept.digest), ...kept.buckets.map(hex64)], synced: [synced.digest, ...synced.buckets] };
}

const expectExact = async () => {
  const { kept, synced } = await digests();
  expect(kept).toEqual(synced);
};

const change = async (label: string) => {
  await insertInBatches(
    database.db,
    generateJobs({ count: 30, seed: label.length, firstNumber: 500 + label.length * 40 }),
  );
  await database.query(`update jobs set title = concat(?, title) where status = 'active' order by id limit 5`, [label]);
  await database.query(`update jobs set status = 'closed' where status = 'open' order by id limit 3`);
  await database.query(`delete from jobs where status = 'paused' order by id limit 2`);
};

test('a restore from a dump: the start rebuilds the digests, which equal the restored jobs through later changes', async () => {
  await expectExact();
  const backup = dumpDatabase(database.name);
  await change('Lost ');
  await expectExact();
  // A second later at least: the restored table's creation time (whole seconds) must differ from the built one.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  restoreDatabase(database.name, backup);
  const stale = await database.query<Array<{ kept: string; now: string }>>(
    `select b.table_created as kept, cast(t.create_time as char) as now from job_digest_builds b, information_schema.tables t
     where t.table_schema = database() and t.table_name = 'job_digests'`,
  );
  expect(stale[0]!.kept).not.toBe(stale[0]!.now);
  await migrateDatabase(database.url);
  const built = await database.query<Array<{ same: number }>>(
    `select b.table_created = cast(t.create_time as char) as same from job_digest_builds b, information_schema.tables t
     where t.table_schema = database() and t.table_name = 'job_digests'`,
  );
  expect(built[0]!.same).toBe(1);
  await expectExact();
  await change('After ');
  await expectExact();
});

test('a digest wrong in place is found and corrected by a rebuild', async () => {
  await database.query('update job_digest_buckets set digest = digest ^ 1 where bucket = 7');
  expect((await digests()).kept).not.toEqual((await digests()).synced);
  expect(await rebuildDigests(database.db)).toMatchObject({ differed: true });
  await expectExact();
  expect(await rebuildDigests(database.db)).toMatchObject({ differed: false });
});

/** Numbers what is waiting as the release before the mirror check did: the counter and the rows, no digest. */
async function numberAsOlderRelease(): Promise<number> {
  const pending = await database.query<Array<{ id: Buffer }>>(
    'select job_id as id from job_changes where seq is null order by changed_at, job_id',
  );
  const counter = await database.query<Array<{ last: number }>>('select last_seq as last from job_change_sequence');
  const last = Number(counter[0]!.last);
  for (const [i, { id }] of pending.entries())
    await database.query('update job_changes set seq = ? where job_id = ?', [last + i + 1, id]);
  await database.query('update job_change_sequence set last_seq = ?', [last + pending.length]);
  return pending.length;
}

test("changes an older release numbered: the check answers at the digests' position until housekeeping or the next numbering catches them up", async () => {
  await expectExact();
  const before = await readDigestSnapshot(database.db, 16);
  const mirrorThen = mirrorDigest(Object.values(await listable(database.db)) as Array<{ id: string }>, 16);
  await change('Older release ');
  expect(await numberAsOlderRelease()).toBeGreaterThan(30);

  const behind = await readDigestSnapshot(database.db, 16);
  expect(behind.seq).toBe(before.seq);
  expect(behind.buckets.map((b) => hex64(b.digest))).toEqual(mirrorThen.buckets);

  await HOUSEKEEPING['catch up mirror digests'].run(database.db);
  const caughtUp = await readDigestSnapshot(database.db, 16);
  expect(caughtUp.seq).toBeGreaterThan(before.seq);
  await expectExact();

  // This release's sequencer, numbering the next changes, catches up first what an older one numbered.
  await change('Older release again ');
  await numberAsOlderRelease();
  await change('This release ');
  await expectExact();
});
