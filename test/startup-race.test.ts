import { readFileSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { migrateDatabase, migrationLockName } from '../db/migrate';
import { demoJobs } from '../db/seed-data';
import { freshDatabase } from './helpers/database';
import { startServiceProcess, type ServiceProcess } from './helpers/processes';
import { testServerOptions } from './helpers/server';

const INSTANCES = 4;
const journal = JSON.parse(readFileSync(path.join(__dirname, '../db/migrations/meta/_journal.json'), 'utf8')) as {
  entries: Array<{ tag: string }>;
};

describe('many instances starting at once on a fresh database', () => {
  let processes: ServiceProcess[] = [];
  let database: Awaited<ReturnType<typeof freshDatabase>>;

  beforeAll(async () => {
    // A name this run owns (dropped at teardown), then dropped so the instances find no database.
    database = await freshDatabase('startup_race');
    await database.query(`DROP DATABASE \`${database.name}\``);
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await database.close();
  });

  test(`${INSTANCES} service processes all come up, and the migrations and the demo seed run exactly once`, async () => {
    processes = Array.from({ length: INSTANCES }, () =>
      startServiceProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SEED_DEMO_DATA: 'true' }),
    );
    const outcomes = await Promise.all(processes.map((p) => p.listening));
    // Every instance serves (an exit would show its stderr here, e.g. ER_TABLE_EXISTS_ERROR).
    expect(outcomes).toEqual(Array.from({ length: INSTANCES }, () => ({ url: expect.stringMatching(/^http:/) })));
    for (const outcome of outcomes) {
      const response = await fetch(`${(outcome as { url: string }).url}/api/v1/jobs?limit=1`);
      expect(response.status).toBe(200);
    }

    const admin = await mysql.createConnection({ ...testServerOptions(), database: database.name });
    try {
      const [applied] = await admin.query<mysql.RowDataPacket[]>('SELECT hash FROM __drizzle_migrations');
      expect(applied).toHaveLength(journal.entries.length);
      const [[jobs]] = await admin.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM jobs');
      expect(Number(jobs!.n)).toBe(demoJobs().length);
    } finally {
      await admin.end();
    }
  }, 60_000);
});

describe('the migration lock', () => {
  test('an instance that cannot get the lock in time gives up with a clear reason instead of migrating', async () => {
    const database = await freshDatabase('migration_lock');
    const holder = await mysql.createConnection(testServerOptions());
    try {
      // Another instance is migrating this database and holds the lock.
      await holder.query('SELECT GET_LOCK(?, 0)', [migrationLockName(database.name)]);
      await expect(migrateDatabase(database.url, { lockTimeoutSeconds: 1 })).rejects.toThrow(
        'another instance held the migration lock for more than 1 s (MIGRATION_LOCK_TIMEOUT_SECONDS)',
      );
      // Released (or its holder gone): the next attempt goes through.
      await holder.query('SELECT RELEASE_LOCK(?)', [migrationLockName(database.name)]);
      await expect(migrateDatabase(database.url, { lockTimeoutSeconds: 1 })).resolves.toEqual({ applied: [] });
    } finally {
      await holder.end();
      await database.close();
    }
  });

  test("lock names fit the server's 64 characters and stay distinct per database", () => {
    const long = 'd'.repeat(64);
    expect(migrationLockName(long).length).toBeLessThanOrEqual(64);
    expect(migrationLockName(long)).not.toBe(migrationLockName(`${'d'.repeat(63)}e`));
    expect(migrationLockName('jobs')).toBe('jobs-migrate:jobs');
  });
});
