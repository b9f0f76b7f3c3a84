/**
 * Upgrades (docs/operations.md, "Upgrades"): a migration that drops or renames a column or table is
 * refused unless marked as the contract step of an earlier expand (db/migration-safety.ts, the check
 * the migrator runs; test/db/migration-refusal.test.ts runs it as the command); the instance that applies
 * migrations logs each one once with its duration; a release started against a database newer than
 * it knows logs one warning naming the newest migration it knows.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { knownMigrations, MIGRATIONS_FOLDER } from '../../db/migrate';
import { migrationRefusal, unjournalledMigrations, unsafeMigrations } from '../../db/migration-safety';
import { runDatabasePrefix } from '../helpers/database';
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
    expect(unjournalledMigrations(MIGRATIONS_FOLDER)).toEqual([]);
    expect(migrationRefusal(MIGRATIONS_FOLDER)).toBeUndefined();
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
    expect(unsafeMigrations(dir)).toEqual([{ tag: '9999_hand_made', what, statement: sql }]);
    expect(migrationRefusal(dir)).toBe(
      `Refusing to migrate, nothing applied: 9999_hand_made ${what} (${sql}) and has no "-- contract-of:" line; once the release before it no longer reads what it removes, start its file with "-- contract-of: <the earlier migration that expanded>" (docs/operations.md, "Upgrades").`,
    );
  });

  test('the refusal names the statement that drops, not the harmless ones before it', () => {
    add(
      '9999_two_steps',
      '-- Moves titles out.\nALTER TABLE `jobs` ADD `name` varchar(200);--> statement-breakpoint\n-- The old column.\nALTER TABLE `jobs`\n  DROP COLUMN `title`;',
    );
    expect(unsafeMigrations(dir)).toEqual([
      { tag: '9999_two_steps', what: 'drops a column', statement: 'ALTER TABLE `jobs` DROP COLUMN `title`;' },
    ]);
  });

  test('marked as the contract of an earlier migration, the same DROP COLUMN passes; marked with a later or unknown one, it does not', () => {
    const earlier = knownMigrations(dir).at(-1)!.tag;
    add('9999_drop_old', `-- contract-of: ${earlier}\nALTER TABLE \`jobs\` DROP COLUMN \`salary_max\`;`);
    expect(unsafeMigrations(dir)).toEqual([]);
    add('9998_drop_more', '-- contract-of: 9999_later\nALTER TABLE `jobs` DROP COLUMN `salary_min`;');
    expect(unsafeMigrations(dir)).toEqual([
      {
        tag: '9998_drop_more',
        what: 'drops a column',
        statement: 'ALTER TABLE `jobs` DROP COLUMN `salary_min`;',
        marker: '9999_later',
      },
    ]);
    expect(migrationRefusal(dir)).toContain(
      '9998_drop_more drops a column (ALTER TABLE `jobs` DROP COLUMN `salary_min`;) and its "-- contract-of: 9999_later" names no earlier migration;',
    );
  });

  test('a migration the journal lists whose file is missing is named', () => {
    add('9999_lost', 'SELECT 1;');
    rmSync(path.join(dir, '9999_lost.sql'));
    expect(migrationRefusal(dir)).toBe(
      "Refusing to migrate, nothing applied: meta/_journal.json lists 9999_lost.sql, which is not in the migrations folder; deploy the release's db/migrations whole.",
    );
  });

  test('a .sql file the journal does not list is named, however harmless it is', () => {
    writeFileSync(path.join(dir, '0100_forgotten.sql'), 'ALTER TABLE `jobs` ADD `remote_policy` varchar(20);');
    expect(unjournalledMigrations(dir)).toEqual(['0100_forgotten.sql']);
    expect(migrationRefusal(dir)).toMatch(
      /^Refusing to migrate, nothing applied: 0100_forgotten\.sql is not in meta\/_journal\.json, so drizzle would skip it; /,
    );
  });

  test('what expands or changes no shape passes: an added column, a dropped index or trigger, a changed type', () => {
    add(
      '9999_expand',
      'ALTER TABLE `jobs` ADD `remote_policy` varchar(20);\n--> statement-breakpoint\nALTER TABLE `jobs` DROP INDEX `jobs_status_idx`;\n--> statement-breakpoint\nDROP TRIGGER `t`;\n--> statement-breakpoint\nALTER TABLE `jobs` CHANGE `title` `title` varchar(300) NOT NULL;',
    );
    expect(unsafeMigrations(dir)).toEqual([]);
  });
});

/** A line of the service's JSON log, with the fields these tests read. */
interface LogLine extends Record<string, unknown> {
  level: number;
  migration?: string;
  durationMs?: number;
}

describe('start-up migrations in the log', () => {
  const database = `${runDatabasePrefix()}migrations_log`;
  const url = `${testServerUrl()}/${database}`;
  const start = async () => {
    const service = startServiceProcess({ DATABASE_URL: url, LOG_LEVEL: 'info' });
    const outcome = await service.listening;
    // The JSON log is written in batches after the banner; a SIGTERM before its last line is out can lose what is in flight.
    const deadline = Date.now() + 10_000;
    while ('url' in outcome && !service.stdout().includes('"msg":"jobs service listening"') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await service.stop();
    if (!('url' in outcome)) throw new Error(`the service did not start: ${outcome.stderr}`);
    return service
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
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
