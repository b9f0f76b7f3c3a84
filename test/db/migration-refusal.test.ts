/**
 * The migrator refuses what the expand/contract check refuses (db/migration-safety.ts), as an
 * operator runs it: `npm run db:migrate`'s command and the service, built, in a copy of dist/ whose
 * db/migrations holds a hand-written migration. A refusal is one line and exit code 1, and applies
 * nothing, not even the harmless migrations pending before the refused one.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { knownMigrations, migrateDatabase, MIGRATIONS_FOLDER } from '../../db/migrate';
import { buildDist } from '../helpers/built';
import { runDatabasePrefix } from '../helpers/database';
import { testServerOptions, testServerUrl } from '../helpers/server';

const ROOT = path.resolve(__dirname, '..', '..');
const database = `${runDatabasePrefix()}${process.env.JEST_WORKER_ID ?? '0'}_migration_refusal`;
const url = `${testServerUrl()}/${database}`;
const newest = knownMigrations().at(-1)!;

let release: string;
let root: mysql.Connection;

/** This release as the Dockerfile lays it out: dist/ built, docs/guides, and db/migrations beside it (dist/db/migrate.js reads ../../db/migrations). */
beforeAll(async () => {
  await buildDist();
  release = mkdtempSync(path.join(os.tmpdir(), 'release-'));
  cpSync(path.join(ROOT, 'dist'), path.join(release, 'dist'), {
    recursive: true,
    filter: (source) => !source.includes('.tsbuildinfo') && !source.includes('.build-lock'),
  });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(release, 'node_modules'));
  symlinkSync(path.join(ROOT, 'docs'), path.join(release, 'docs'));
  root = await mysql.createConnection(testServerOptions());
}, 300_000);
afterAll(async () => {
  await root.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await root.end();
  rmSync(release, { recursive: true, force: true });
});

/** The database at this release's schema, and db/migrations as the repository holds it. */
beforeEach(async () => {
  await root.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await migrateDatabase(url);
  rmSync(path.join(release, 'db'), { recursive: true, force: true });
  cpSync(MIGRATIONS_FOLDER, path.join(release, 'db', 'migrations'), { recursive: true });
});

/** Writes a migration file; with a journal entry after the last one, as drizzle-kit would. */
function write(tag: string, sql: string, { journalled = true } = {}): void {
  const folder = path.join(release, 'db', 'migrations');
  writeFileSync(path.join(folder, `${tag}.sql`), sql);
  if (!journalled) return;
  const file = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(file, 'utf8')) as {
    entries: Array<{ idx: number; when: number; tag: string }>;
  };
  const last = journal.entries.at(-1)!;
  journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1000, tag });
  writeFileSync(file, JSON.stringify(journal, null, 2));
}

/** Runs a built script of the release as production does, against the test database. */
function run(script: string): { status: number | null; stdout: string; stderrLines: string[] } {
  const result = spawnSync(process.execPath, [path.join(release, 'dist', script)], {
    cwd: release,
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'warn' },
    // A service that does not refuse listens until killed here.
    timeout: 30_000,
  });
  return { status: result.status, stdout: result.stdout, stderrLines: result.stderr.split('\n').filter(Boolean) };
}

const migrate = () => run('service/commands/migrate.js');

async function titleColumn(): Promise<number> {
  const [rows] = await root.query<mysql.RowDataPacket[]>(
    "SELECT 1 FROM information_schema.columns WHERE table_schema = ? AND table_name = 'jobs' AND column_name = 'title'",
    [database],
  );
  return rows.length;
}

async function appliedCount(): Promise<number> {
  const [[row]] = await root.query<mysql.RowDataPacket[]>(
    `SELECT COUNT(*) AS applied FROM \`${database}\`.__drizzle_migrations`,
  );
  return Number(row!.applied);
}

const refusal = (tag: string) =>
  `Refusing to migrate, nothing applied: ${tag} drops a column (ALTER TABLE jobs DROP COLUMN title;) and has no "-- contract-of:" line; once the release before it no longer reads what it removes, start its file with "-- contract-of: <the earlier migration that expanded>" (docs/operations.md, "Upgrades").`;

test('npm run db:migrate refuses a hand-written DROP COLUMN without its contract-of line: one line, exit code 1, nothing applied (not even the expand pending before it)', async () => {
  write('0019_add_remote_policy', 'ALTER TABLE `jobs` ADD `remote_policy` varchar(20);');
  write('0020_drop_title', 'ALTER TABLE jobs DROP COLUMN title;');
  const result = migrate();
  expect(result).toEqual({ status: 1, stdout: '', stderrLines: [refusal('0020_drop_title')] });
  expect(await titleColumn()).toBe(1);
  expect(await appliedCount()).toBe(knownMigrations().length);
  const [added] = await root.query<mysql.RowDataPacket[]>(
    "SELECT 1 FROM information_schema.columns WHERE table_schema = ? AND column_name = 'remote_policy'",
    [database],
  );
  expect(added).toEqual([]);
}, 60_000);

test('with "-- contract-of:" naming an earlier migration, the same DROP COLUMN is applied', async () => {
  write('0019_drop_title', `-- contract-of: ${newest.tag}\nALTER TABLE jobs DROP COLUMN title;`);
  const result = migrate();
  expect(result.status).toBe(0);
  expect(result.stdout).toMatch(/^Applied 0019_drop_title in \d+ ms\n/);
  expect(await titleColumn()).toBe(0);
  expect(await appliedCount()).toBe(knownMigrations().length + 1);
}, 60_000);

test('a migration file the journal does not list is refused, not skipped', async () => {
  write('0019_add_remote_policy', 'ALTER TABLE `jobs` ADD `remote_policy` varchar(20);', { journalled: false });
  const result = migrate();
  expect(result.status).toBe(1);
  expect(result.stderrLines).toEqual([
    expect.stringMatching(
      /^Refusing to migrate, nothing applied: 0019_add_remote_policy\.sql is not in meta\/_journal\.json, so drizzle would skip it; write a migration with npm run db:generate/,
    ),
  ]);
  expect(await appliedCount()).toBe(knownMigrations().length);
}, 60_000);

test('the service refuses to start on the same migration, with the same one line, and applies nothing', async () => {
  write('0019_drop_title', 'ALTER TABLE jobs DROP COLUMN title;');
  const result = run('service/server.js');
  expect(result).toEqual({ status: 1, stdout: '', stderrLines: [refusal('0019_drop_title')] });
  expect(await titleColumn()).toBe(1);
  expect(await appliedCount()).toBe(knownMigrations().length);
}, 60_000);

test('docs/operations.md shows the refusal as the migrator prints it', () => {
  expect(readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8')).toContain(`\n${refusal('0019_drop_title')}\n`);
});
