/**
 * noticeRestore, the dispatchers' check each second: a freshly migrated database is no restore; a
 * backup loaded over it is, once the recreated table is 2 s old (a dump still loading may not have
 * reached the sequencer's counter), and then one history is minted, at the backup's next number, however
 * many processes ask at once.
 */
import { noticeRestore, readLineage } from '../../../db/jobs/change-history';
import { sequencePendingChanges, lastSequenced } from '../../../db/jobs/change-numbering';
import { storeJob } from '../../../db/jobs/job-store';
import { dumpDatabase, loadDump } from '../../helpers/backup';
import { freshDatabase, type TestDatabase } from '../../helpers/database';
import { MINIMAL_JOB } from '../../helpers/job-bodies';

let database: TestDatabase;
const told: Array<{ history: string; firstSeq: number }> = [];

beforeAll(async () => {
  database = await freshDatabase('notice_restore', { onNewHistory: (history) => told.push(history) });
});
afterAll(() => database.close());

const settle = () => new Promise((resolve) => setTimeout(resolve, 2100));
const job = (title: string) =>
  storeJob(
    database.db,
    { ...MINIMAL_JOB, title, status: 'active', requirements: [], responsibilities: [] } as never,
    'w',
  );

test('no restore after the migrations; after a backup is loaded, one history once the table settled, at the backup’s next number', async () => {
  const before = await readLineage(database.db);
  await settle();
  expect(await noticeRestore(database.db)).toBeUndefined();

  await job('in the backup');
  await sequencePendingChanges(database.db);
  const backupHead = await lastSequenced(database.db);
  const backup = dumpDatabase(database.name);
  for (const title of ['lost 1', 'lost 2', 'lost 3']) await job(title);
  await sequencePendingChanges(database.db);
  expect(await lastSequenced(database.db)).toBe(backupHead + 3);

  loadDump(database.name, backup);
  await settle();
  const minted = await Promise.all([
    noticeRestore(database.db),
    noticeRestore(database.db),
    noticeRestore(database.db),
  ]);
  const one = minted.filter((history) => history !== undefined);
  expect(one).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{16}$/) as string, firstSeq: backupHead + 1 }]);
  expect(told).toEqual([{ history: one[0]!.id, firstSeq: backupHead + 1 }]);
  expect(await readLineage(database.db)).toEqual([...before, one[0]]);
  expect(await noticeRestore(database.db)).toBeUndefined();
}, 30_000);

test('a table recreated just now may still be loading: no history until it is 2 s old', async () => {
  const before = await readLineage(database.db);
  await database.query('alter table job_change_histories engine = InnoDB');
  expect(await noticeRestore(database.db)).toBeUndefined();
  await settle();
  const minted = await noticeRestore(database.db);
  expect(minted).toBeDefined();
  expect(await readLineage(database.db)).toEqual([...before, minted]);
}, 30_000);
