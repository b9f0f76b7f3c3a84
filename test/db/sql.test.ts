/**
 * db/sql.ts, the one executor, on the test server: a statement compiled once reads each run's own
 * values, a cache by shape never serves one shape's text for another, and InnoDB's deadlock victims
 * (a statement alone, or a transaction's work) are run again rather than answered as failures.
 */
import { eq } from 'drizzle-orm';
import { jobs } from '../../db/schema';
import { bound, execute, perShape, prepare, query, text, transaction } from '../../db/sql';
import { insertInBatches } from '../../db/seed';
import { generateJobs } from '../../db/seed-data';
import { formatUuid } from '../../domain/uuid';
import { freshDatabase, type TestDatabase } from '../helpers/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('sql');
  await database.query('create table locks (id int primary key, n int not null)');
  await database.query('insert into locks values (1, 0), (2, 0)');
});
afterAll(() => database.close());

test('a compiled statement reads the values of each run, encoded as its column declares (ids as 16 bytes)', async () => {
  await insertInBatches(database.db, generateJobs({ count: 3, seed: 5, newest: new Date('2026-05-01T00:00:00Z') }));
  const stored = await database.query<Array<{ bytes: Buffer; title: string }>>('select id as bytes, title from jobs');
  const byId = prepare({ title: jobs.title }, (select) => select.from(jobs).where(eq(jobs.id, bound('id', jobs.id))));
  for (const { bytes, title } of stored)
    expect(await query(database.db, byId, { id: formatUuid(bytes) })).toEqual([{ title }]);
  expect(new Set(stored.map((row) => row.title)).size).toBe(3);
});

test('a cache by shape gives each shape its own statement, the same one for the same shape', () => {
  const built: string[] = [];
  const statementOf = perShape((shape: { columns: string[]; byTitle: boolean }) => {
    const selection = Object.fromEntries(shape.columns.map((column) => [column, jobs[column as 'id']]));
    const statement = prepare(selection, (select) =>
      select.from(jobs).where(shape.byTitle ? eq(jobs.title, bound('title', jobs.title)) : undefined),
    );
    built.push(statement.sql);
    return statement;
  });
  const shapes = [
    { columns: ['id'], byTitle: false },
    { columns: ['id'], byTitle: true },
    { columns: ['id', 'title'], byTitle: false },
    { columns: ['title', 'id'], byTitle: false },
  ];
  const statements = shapes.map(statementOf);
  expect(new Set(statements.map((statement) => statement.sql)).size).toBe(shapes.length);
  expect(statementOf({ columns: ['id'], byTitle: true })).toBe(statements[1]);
  expect(built).toHaveLength(shapes.length);
});

/** Two transactions that take the two rows in opposite orders, each waiting for the other to hold its first. */
async function crossLocks(): Promise<{ results: string[]; tries: number }> {
  let tries = 0;
  let holding = 0;
  const bothHold = async () => {
    holding++;
    for (const deadline = Date.now() + 5000; holding < 2 && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 10));
  };
  const work = (first: number, second: number) =>
    transaction(database.db, async (tx) => {
      tries++;
      await execute(tx, text(`update locks set n = n + 1 where id = ${first}`));
      await bothHold();
      await execute(tx, text(`update locks set n = n + 1 where id = ${second}`));
      return `${first} then ${second}`;
    });
  const results = await Promise.all([work(1, 2), work(2, 1)]);
  return { results, tries };
}

test("a transaction InnoDB chose as a deadlock's victim is run again: both commit, each row counted twice", async () => {
  const { results, tries } = await crossLocks();
  expect(results).toEqual(['1 then 2', '2 then 1']);
  expect(tries).toBe(3);
  const rows = await database.query<Array<{ n: number }>>('select n from locks order by id');
  expect(rows.map((row) => row.n)).toEqual([2, 2]);
});
