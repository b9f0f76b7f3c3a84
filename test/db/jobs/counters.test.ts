/**
 * Listing totals come from job_counts, and deep pages find their day in job_day_counts, which
 * triggers keep (migrations 0008, 0010, 0012) and the service's periodic task folds (db/jobs/counters.ts).
 * Property: whatever plain SQL does to `jobs` (inserts, status changes, soft deletes and
 * undeletes, department/type/workplace/created_at edits, hard deletes, id rewrites, several rows
 * at once, on several connections, in transactions that stay open, commit late or roll back,
 * with folds in between), every filter's total equals COUNT(*) over the committed rows, and every
 * day's count its COUNT(*), at every moment. Random but seeded: a failure names the seed and step.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/mysql2';
import { migrate } from 'drizzle-orm/mysql2/migrator';
import mysql, { type PoolConnection, type RowDataPacket } from 'mysql2/promise';
import { createDatabase } from '../../../db/client';
import { migrateDatabase, MIGRATIONS_FOLDER } from '../../../db/migrate';
import { foldJobCounts } from '../../../db/jobs/counters';
import { LIST_QUERY } from '../../../service/jobs/contract/queries';
import { queryReader } from '../../../service/http/validate';
import { countJobs } from '../../../db/jobs/listing';
import { freshDatabase, runDatabasePrefix, type TestDatabase } from '../../helpers/database';
import { testServerOptions, testServerUrl } from '../../helpers/server';
import { generator } from '../../../db/seed-data';

const parseListQuery = queryReader(LIST_QUERY);

const STATUSES = ['draft', 'active', 'open', 'paused', 'closed'] as const;
const TYPES = ['full-time', 'part-time', 'contract', 'contract-to-hire', 'direct-hire', 'managed-teams'] as const;
const WORKPLACES = [null, 'on-site', 'hybrid', 'remote'] as const;
// Spellings that fold together, one that folds to '' (the all-departments row's key), and others.
const DEPARTMENTS = [
  'Finance',
  ' finance ',
  'FINANCE',
  'Data & Analytics',
  'data & analytics',
  'Ünïcode',
  '   ',
  'Sales',
] as const;

/** Every kind of filter: default and explicit statuses, single values and lists, departments in any case. */
const FILTERS = (() => {
  const statuses = [undefined, 'paused', 'active,paused', 'open,active', 'open,closed', 'active,open,paused,closed'];
  const types = [undefined, 'contract', 'part-time,full-time', TYPES.join(',')];
  const workplaces = [undefined, 'remote', 'on-site,hybrid', 'on-site,hybrid,remote'];
  const departments = [undefined, 'finance', 'Data & Analytics', 'ÜNÏCODE', 'nowhere'];
  const filters: string[] = [];
  for (const status of statuses)
    for (const type of types)
      for (const workplace of workplaces)
        for (const department of departments) {
          const params = new URLSearchParams();
          if (status) params.set('status', status);
          if (type) params.set('type', type);
          if (workplace) params.set('workplace', workplace);
          if (department) params.set('department', department);
          filters.push(params.toString());
        }
  return filters;
})();

/** A filter's department as the database folds it (LOWER), looked up once per spelling. */
const loweredBySql = new Map<string, string>();
async function lowered(db: TestDatabase, department: string): Promise<string> {
  if (!loweredBySql.has(department)) {
    const [row] = await db.query<RowDataPacket[]>('SELECT LOWER(?) AS folded', [department]);
    loweredBySql.set(department, row!.folded as string);
  }
  return loweredBySql.get(department)!;
}

async function totalOf(db: TestDatabase, filter: string): Promise<number> {
  const query = parseListQuery(Object.fromEntries(new URLSearchParams(filter)));
  return (await countJobs(db.db, query)).total;
}

/** Every filter's total (the service's statement) against COUNT(*); returns the filters that differ. */
async function mismatches(db: TestDatabase): Promise<string[]> {
  const groups = await db.query<RowDataPacket[]>(
    'SELECT status, type, workplace, LOWER(TRIM(department)) AS department, COUNT(*) AS n FROM jobs WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4',
  );
  const expected = async (filter: string) => {
    const query = parseListQuery(Object.fromEntries(new URLSearchParams(filter)));
    const department = query.department === undefined ? undefined : await lowered(db, query.department);
    return groups
      .filter(
        (group) =>
          (query.status ?? ['active', 'open']).includes(group.status) &&
          (!query.type || query.type.includes(group.type)) &&
          (!query.workplace || query.workplace.includes(group.workplace)) &&
          (department === undefined || group.department === department),
      )
      .reduce((sum, group) => sum + Number(group.n), 0);
  };
  const wrong: string[] = [];
  // Day counts (job_day_counts) against COUNT(*) per day of created_at and status.
  const byDay = async (statement: string) =>
    new Map(
      (await db.query<RowDataPacket[]>(statement)).map((row) => [
        `${row.day as string} ${row.status as string}`,
        Number(row.n),
      ]),
    );
  const days = await byDay(
    "SELECT DATE_FORMAT(created_at, '%Y-%m-%d') AS day, status, COUNT(*) AS n FROM jobs WHERE deleted_at IS NULL AND status <> 'draft' GROUP BY 1, 2",
  );
  const kept = await byDay(
    "SELECT DATE_FORMAT(day, '%Y-%m-%d') AS day, status, SUM(n) AS n FROM job_day_counts GROUP BY 1, 2 HAVING SUM(n) <> 0",
  );
  for (const key of new Set([...days.keys(), ...kept.keys()])) {
    if (days.get(key) !== kept.get(key))
      wrong.push(`day ${key}: job_day_counts ${kept.get(key)}, COUNT(*) ${days.get(key)}`);
  }
  // A few at a time: the pool has ten connections.
  for (let i = 0; i < FILTERS.length; i += 8) {
    await Promise.all(
      FILTERS.slice(i, i + 8).map(async (filter) => {
        const [total, counted] = await Promise.all([totalOf(db, filter), expected(filter)]);
        if (total !== counted) wrong.push(`${filter || '(default)'}: total ${total}, COUNT(*) ${counted}`);
      }),
    );
  }
  return wrong;
}

let idCounter = 0;
/** A fresh 16-byte id, time-ordered like the service's. */
function newId(): Buffer {
  const id = Buffer.alloc(16);
  id.writeUIntBE(Date.now(), 0, 6);
  id.writeUInt32BE(++idCounter, 12);
  id[6] = 0x70;
  id[8] = 0x80;
  return id;
}

function jobValues(rnd: ReturnType<typeof generator>): unknown[] {
  return [
    newId(),
    rnd.pick(DEPARTMENTS),
    rnd.pick(TYPES),
    rnd.pick(WORKPLACES),
    rnd.pick(STATUSES),
    rnd.next() < 0.1 ? new Date('2026-01-01T00:00:00Z') : null,
    createdAt(rnd),
  ];
}
/** A moment in ten days, so day counts have several days to keep apart (and midnights to cross). */
const createdAt = (rnd: ReturnType<typeof generator>) =>
  new Date(Date.UTC(2026, 2, 1) + rnd.int(10 * 24 * 60) * 60_000 + rnd.int(60_000));
const INSERT = `INSERT INTO jobs (id, title, department, type, workplace, status, deleted_at, created_at, description, requirements, responsibilities)
  VALUES (?, 'Counted', ?, ?, ?, ?, ?, ?, 'x', '[]', '[]')`;

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('job_counts');
});
afterAll(() => database.close());

test.each([[20261122], [5]])(
  'every filter total equals COUNT(*) through random plain-SQL changes (seed %i)',
  async (seed) => {
    const rnd = generator(seed);
    const connections: PoolConnection[] = [];
    for (let i = 0; i < 3; i++) {
      const connection = await database.pool.getConnection();
      // No writer may wait for another writer's counter row: a wait would fail within a second.
      await connection.query('SET SESSION innodb_lock_wait_timeout = 1');
      connections.push(connection);
    }
    // Each connection changes only its own jobs (by primary key), so only counters could make two
    // of them wait for each other.
    const owned: Buffer[][] = [[], [], []];
    const open = [false, false, false];
    const log: string[] = [];
    try {
      for (let i = 0; i < 120; i++) {
        const values = jobValues(rnd);
        const c = i % 3;
        await connections[c]!.query(INSERT, values);
        owned[c]!.push(values[0] as Buffer);
      }
      for (let step = 0; step < 300; step++) {
        const c = rnd.int(3);
        const connection = connections[c]!;
        const run = async (statement: string, params: unknown[]) => {
          log.push(`${step} c${c}: ${statement.replace(/\s+/g, ' ').slice(0, 80)}`);
          await connection.query(statement, params);
        };
        if (!open[c] && rnd.next() < 0.25) {
          await run('START TRANSACTION', []);
          open[c] = true;
        }
        const mine = owned[c]!;
        const id = rnd.pick(mine);
        switch (rnd.int(12)) {
          case 0: {
            const values = jobValues(rnd);
            await run(INSERT, values);
            mine.push(values[0] as Buffer);
            break;
          }
          case 1:
            await run('UPDATE jobs SET status = ? WHERE id = ?', [rnd.pick(STATUSES), id]);
            break;
          case 2:
            await run('UPDATE jobs SET deleted_at = ? WHERE id = ?', [rnd.next() < 0.5 ? new Date() : null, id]);
            break;
          case 3:
            await run('UPDATE jobs SET department = ? WHERE id = ?', [rnd.pick(DEPARTMENTS), id]);
            break;
          case 4:
            await run('UPDATE jobs SET type = ?, workplace = ? WHERE id = ?', [
              rnd.pick(TYPES),
              rnd.pick(WORKPLACES),
              id,
            ]);
            break;
          case 5:
            await run('DELETE FROM jobs WHERE id = ?', [id]);
            break;
          case 6: {
            const some = [rnd.pick(mine), rnd.pick(mine), rnd.pick(mine)];
            await run('UPDATE jobs SET status = ?, department = ? WHERE id IN (?, ?, ?)', [
              rnd.pick(STATUSES),
              rnd.pick(DEPARTMENTS),
              ...some,
            ]);
            break;
          }
          case 7: {
            const moved = newId();
            await run('UPDATE jobs SET id = ? WHERE id = ?', [moved, id]);
            mine.push(moved);
            break;
          }
          case 8:
            await run('UPDATE jobs SET title = ? WHERE id = ?', [`Edited ${step}`, id]);
            break;
          case 9:
            await run(
              'UPDATE jobs SET status = ?, type = ?, workplace = ?, department = ?, deleted_at = NULL WHERE id = ?',
              [rnd.pick(STATUSES), rnd.pick(TYPES), rnd.pick(WORKPLACES), rnd.pick(DEPARTMENTS), id],
            );
            break;
          case 10:
            await run('UPDATE jobs SET created_at = ? WHERE id = ?', [createdAt(rnd), id]);
            break;
          default:
            // A fold, while other connections' transactions may be open.
            log.push(`${step}: fold`);
            await foldJobCounts(database.db);
        }
        if (open[c] && rnd.next() < 0.2) {
          await run(rnd.next() < 0.75 ? 'COMMIT' : 'ROLLBACK', []);
          open[c] = false;
        }
        if (step % 100 === 99) {
          // Totals read while transactions are open count only what has committed, as COUNT(*) does.
          const wrong = await mismatches(database);
          expect({ seed, step, wrong, recent: wrong.length ? log.slice(-30) : [] }).toEqual({
            seed,
            step,
            wrong: [],
            recent: [],
          });
        }
      }
      for (let c = 0; c < 3; c++) if (open[c]) await connections[c]!.query('COMMIT');
      expect(await mismatches(database)).toEqual([]);
      // With no transaction open, folding leaves only folded rows, and the totals unchanged.
      while ((await foldJobCounts(database.db)) > 0);
      const [[left]] = await database.pool.query<RowDataPacket[]>(
        'SELECT (SELECT COUNT(*) FROM job_counts WHERE slot <> 0) + (SELECT COUNT(*) FROM job_day_counts WHERE slot <> 0) AS n',
      );
      expect(Number(left!.n)).toBe(0);
      expect(await mismatches(database)).toEqual([]);
    } finally {
      for (const connection of connections) {
        await connection.query('ROLLBACK');
        connection.release();
      }
    }
  },
  120_000,
);

describe('writers never wait for each other on a counter', () => {
  let a: PoolConnection;
  let b: PoolConnection;
  beforeEach(async () => {
    a = await database.pool.getConnection();
    b = await database.pool.getConnection();
    await b.query('SET SESSION innodb_lock_wait_timeout = 1');
  });
  afterEach(async () => {
    await a.query('ROLLBACK');
    await b.query('ROLLBACK');
    a.release();
    b.release();
  });

  const insertActive = (connection: PoolConnection) =>
    connection.query(INSERT, [newId(), 'Waitless', 'contract', 'remote', 'active', null, new Date()]);
  const waitlessTotal = () => totalOf(database, 'department=waitless');

  test('two open transactions create jobs of the same group; each counts once it commits, a rollback never', async () => {
    await a.query('START TRANSACTION');
    await insertActive(a);
    await b.query('START TRANSACTION');
    await insertActive(b); // would wait for A's commit (and fail after 1 s) with one shared counter row
    await b.query('COMMIT');
    expect(await waitlessTotal()).toBe(1);
    await a.query('ROLLBACK');
    expect(await waitlessTotal()).toBe(1);
  });

  test('a fold neither waits for an open transaction nor takes its rows, and folds them once it commits', async () => {
    await insertActive(a);
    await a.query('START TRANSACTION');
    await a.query("UPDATE jobs SET status = 'paused' WHERE department = 'Waitless' AND status = 'active' LIMIT 1");
    const started = Date.now();
    await foldJobCounts(database.db);
    expect(Date.now() - started).toBeLessThan(1000);
    const unfolded = async () => {
      const [[row]] = await database.pool.query<RowDataPacket[]>(
        'SELECT COUNT(*) AS n FROM job_counts WHERE slot <> 0',
      );
      return Number(row!.n);
    };
    expect(await unfolded()).toBeGreaterThan(0);
    expect(await waitlessTotal()).toBe(2);
    await a.query('COMMIT');
    expect(await waitlessTotal()).toBe(1);
    while ((await foldJobCounts(database.db)) > 0);
    expect(await unfolded()).toBe(0);
    expect(await mismatches(database)).toEqual([]);
  });
});

test('the migration counts the jobs that were there before it', async () => {
  const name = `${runDatabasePrefix()}${process.env.JEST_WORKER_ID ?? '0'}_counts_before`;
  const url = `${testServerUrl()}/${name}`;
  const admin = await mysql.createConnection(testServerOptions());
  const folder = mkdtempSync(path.join(os.tmpdir(), 'jobs-migrations-'));
  try {
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    // The schema as it was before job_counts (migrations up to 0006).
    cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
    const journalPath = path.join(folder, 'meta/_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
    journal.entries = journal.entries.slice(
      0,
      journal.entries.findIndex((entry) => entry.tag.startsWith('0007')),
    );
    writeFileSync(journalPath, JSON.stringify(journal));
    const before = createDatabase(url, { connectionLimit: 1 });
    const rnd = generator(99);
    try {
      await migrate(drizzle(before.pool), { migrationsFolder: folder });
      for (let i = 0; i < 200; i++) await before.pool.query(INSERT, jobValues(rnd));
    } finally {
      await before.close();
    }
    await migrateDatabase(url);
    const after = createDatabase(url, { connectionLimit: 2 });
    try {
      const view: TestDatabase = {
        ...after,
        url,
        name,
        query: async <T>(statement: string, values?: unknown[]) => (await after.pool.query(statement, values))[0] as T,
        close: after.close,
      };
      expect(await mismatches(view)).toEqual([]);
      expect(await totalOf(view, '')).toBeGreaterThan(0);
    } finally {
      await after.close();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
  }
}, 60_000);
