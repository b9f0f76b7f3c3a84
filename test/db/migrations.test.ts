/**
 * Upgrades (docs/operations.md, "Upgrades"): a migration that drops or renames a column or table is
 * refused unless marked as the contract step of an earlier expand; the instance that applies
 * migrations logs each one once with its duration; a release started against a database newer than
 * it knows logs one warning naming the newest migration it knows.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { knownMigrations, MIGRATIONS_FOLDER } from '../../db/migrate';
import { runDatabasePrefix } from '../helpers/database';
import { unsafeMigrations } from '../helpers/migration-safety';
import { startServiceProcess } from '../helpers/processes';
import { testServerOptions, testServerUrl } from '../helpers/server';

describe('expand/contract', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
    cpSync(MIGRATIONS_FOLDER, dir, { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Adds a migration after the last one, as drizzle-kit would (a journal entry and its file). */
  const add = (tag: string, sql: string) => {
    const file = path.join(dir, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(file, 'utf8')) as {
      entries: Array<{ idx: number; when: number; tag: string }>;
    };
    const last = journal.entries.at(-1)!;
    journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1000, tag });
    writeFileSync(file, JSON.stringify(journal));
    writeFileSync(path.join(dir, `${tag}.sql`), sql);
  };

  test('the real migrations pass (whatever db/migrations holds)', () => {
    expect(unsafeMigrations(MIGRATIONS_FOLDER)).toEqual([]);
  });

  test.each([
    ['ALTER TABLE `jobs` DROP COLUMN `salary_max`;', 'drops a column'],
    ['ALTER TABLE `jobs` DROP `salary_max`;', 'drops a column'],
    ['DROP TABLE `webhook_attempts`;', 'drops a table'],
    ['ALTER TABLE `jobs` RENAME COLUMN `title` TO `name`;', 'renames a column'],
    ['ALTER TABLE `jobs` CHANGE `title` `name` varchar(200) NOT NULL;', 'renames a column (CHANGE)'],
    ['RENAME TABLE `jobs` TO `listings`;', 'renames a table'],
  ])('a hand-made migration `%s` is refused: it %s', (sql, what) => {
    add('9999_hand_made', sql);
    expect(unsafeMigrations(dir)).toEqual([
      `9999_hand_made ${what}, and it has no "-- contract-of: <earlier migration>" line`,
    ]);
  });

  test('marked as the contract of an earlier migration, the same DROP COLUMN passes; marked with a later or unknown one, it does not', () => {
    const earlier = knownMigrations(dir).at(-1)!.tag;
    add('9999_drop_old', `-- contract-of: ${earlier}\nALTER TABLE \`jobs\` DROP COLUMN \`salary_max\`;`);
    expect(unsafeMigrations(dir)).toEqual([]);
    add('9998_drop_more', '-- contract-of: 9999_later\nALTER TABLE `jobs` DROP COLUMN `salary_min`;');
    expect(unsafeMigrations(dir)).toEqual([
      '9998_drop_more drops a column, and its contract-of names 9999_later, which is not an earlier migration',
    ]);
  });

  test('what expands or changes no shape passes: an added column, a dropped index or trigger, a changed type', () => {
    add(
      '9999_expand',
      'ALTER TABLE `jobs` ADD `remote_policy` varchar(20);\n--> statement-breakpoint\nALTER TABLE `jobs` DROP INDEX `jobs_status_idx`;\n--> statement-breakpoint\nDROP TRIGGER `t`;\n--> statement-breakpoint\nALTER TABLE `jobs` CHANGE `title` `title` varchar(300) NOT NULL;',
    );
    expect(unsafeMigrations(dir)).toEqual([]);
  });
});

describe('start-up migrations in the log', () => {
  const database = `${runDatabasePrefix()}migrations_log`;
  const url = `${testServerUrl()}/${database}`;
  const start = async () => {
    const service = startServiceProcess({ DATABASE_URL: url, LOG_LEVEL: 'info' });
    const outcome = await service.listening;
    await service.stop();
    if (!('url' in outcome)) throw new Error(`the service did not start: ${outcome.stderr}`);
    return service
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };
  afterAll(async () => {
    const root = await mysql.createConnection(testServerOptions());
    await root.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await root.end();
  });

  test('a fresh database: each migration applied is one line with its name and duration, in order; the next start applies and logs none', async () => {
    const lines = (await start()).filter((line) => 'migration' in line);
    expect(lines.map((line) => line.migration)).toEqual(knownMigrations().map((m) => m.tag));
    for (const line of lines)
      expect(line).toMatchObject({
        level: 30,
        durationMs: expect.any(Number),
        msg: `migration ${line.migration} applied in ${line.durationMs} ms`,
      });
    expect((await start()).filter((line) => 'migration' in line || line.level === 40)).toEqual([]);
  }, 60_000);

  test('a database a newer release migrated: this one starts, applies nothing and logs one warning naming the newest migration it knows', async () => {
    const newest = knownMigrations().at(-1)!;
    const root = await mysql.createConnection(testServerOptions());
    await root.query(
      `INSERT INTO \`${database}\`.__drizzle_migrations (hash, created_at) VALUES ('from-a-newer-release', ?)`,
      [newest.when + 60_000],
    );
    await root.end();
    const lines = await start();
    expect(lines.filter((line) => 'migration' in line)).toEqual([]);
    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings).toEqual([
      expect.objectContaining({
        newestKnownMigration: newest.tag,
        msg: expect.stringContaining(`the newest it knows is ${newest.tag}`),
      }),
    ]);
  }, 60_000);
});
