/**
 * The benchmark's tables: one database per size, jobs_bench_<size>, kept between runs and
 * reseeded only when its row count is not the size asked for (or with --reseed).
 *
 * Seeding is fast at any size: db/seed.ts's generator writes a base block of realistic rows
 * (its status, type, department and workplace mix), then the table doubles with
 * INSERT ... SELECT inside MySQL, each copy moved to just before the oldest row so the listing
 * order stays a plain timeline with unique, time-ordered ids.
 */
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { connectionOptions, createDatabase } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { seedBulk } from '../db/seed';

const BASE_ROWS = 2000;
// seedBulk spaces rows one minute apart; copies keep that spacing.
const ROW_SPACING_MS = 60_000;
// Rows per INSERT ... SELECT, so no single statement holds a huge transaction.
const CHUNK_ROWS = 100_000;

export interface PreparedTable {
  url: string;
  rows: number;
  /** Seconds spent seeding; 0 when the table was reused. */
  seededSeconds: number;
}

async function count(connection: mysql.Connection): Promise<number> {
  const [[row]] = await connection.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM jobs');
  return Number(row!.n);
}

/** Column list and SELECT expressions that copy rows `shiftMs` earlier, with new v7 ids. */
async function copyExpressions(
  connection: mysql.Connection,
  database: string,
): Promise<{ columns: string; values: string }> {
  const [columns] = await connection.query<mysql.RowDataPacket[]>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
      WHERE table_schema = ? AND table_name = 'jobs' AND extra NOT LIKE '%GENERATED%' ORDER BY ordinal_position`,
    [database],
  );
  const names = columns.map((c) => `\`${c.name as string}\``);
  const values = columns.map((c) => {
    const name = `\`${c.name as string}\``;
    // A v7 id is 48 bits of Unix ms then random bits: the same random bits, the new time.
    if (c.name === 'id') {
      return `UNHEX(CONCAT(LPAD(HEX(CAST(CONV(HEX(LEFT(id, 6)), 16, 10) AS UNSIGNED) - @shift_ms), 12, '0'), HEX(SUBSTRING(id, 7))))`;
    }
    if (c.type === 'datetime' || c.type === 'timestamp') return `${name} - INTERVAL @shift_ms * 1000 MICROSECOND`;
    return name;
  });
  return { columns: names.join(', '), values: values.join(', ') };
}

/** jobs_bench_<size> on the server of `serverUrl`, migrated and holding exactly `size` jobs. */
export async function prepareTable(
  serverUrl: string,
  size: number,
  options: { reseed?: boolean; log?: (line: string) => void } = {},
): Promise<PreparedTable> {
  const database = `jobs_bench_${size}`;
  const url = `${serverUrl.replace(/\/+$/, '')}/${database}`;
  const log = options.log ?? (() => undefined);
  const { database: _none, ...serverOptions } = connectionOptions(url);
  const admin = await mysql.createConnection({ ...serverOptions, multipleStatements: false });
  try {
    await migrateDatabase(url);
    await admin.query(`USE \`${database}\``);
    const have = await count(admin);
    if (have === size && !options.reseed) {
      log(`${database}: ${size} jobs, reused`);
      return { url, rows: size, seededSeconds: 0 };
    }
    const started = performance.now();
    await admin.query(`DROP DATABASE \`${database}\``);
    await migrateDatabase(url);
    await admin.query(`USE \`${database}\``);
    const handle = createDatabase(url, { connectionLimit: 1 });
    try {
      await seedBulk(handle.db, Math.min(size, BASE_ROWS));
    } finally {
      await handle.close();
    }
    const { columns, values } = await copyExpressions(admin, database);
    await admin.query(`CREATE TABLE bench_seed_copy AS SELECT ${columns} FROM jobs LIMIT 0`);
    let rows = await count(admin);
    while (rows < size) {
      const copy = Math.min(rows, size - rows);
      // The copy of the newest `copy` rows lands just before the current oldest one, in chunks
      // bounded by primary-key values found before anything is inserted.
      await admin.query('SET @shift_ms = ?', [rows * ROW_SPACING_MS]);
      const bounds: Buffer[] = [];
      for (let done = Math.min(CHUNK_ROWS, copy); ; done = Math.min(done + CHUNK_ROWS, copy)) {
        const [[row]] = await admin.query<mysql.RowDataPacket[]>(
          'SELECT id FROM jobs ORDER BY id DESC LIMIT 1 OFFSET ?',
          [done - 1],
        );
        bounds.push(row!.id as Buffer);
        if (done === copy) break;
      }
      let upper: Buffer | undefined;
      for (const lower of bounds) {
        // Through a staging table: INSERT ... SELECT from the table itself would make the server
        // build an on-disk temporary table in its tmpdir, shared with everything else on the machine.
        await admin.query(
          `INSERT INTO bench_seed_copy (${columns}) SELECT ${values} FROM jobs WHERE id >= ?${upper ? ' AND id < ?' : ''}`,
          upper ? [lower, upper] : [lower],
        );
        await admin.query(`INSERT INTO jobs (${columns}) SELECT ${columns} FROM bench_seed_copy`);
        await admin.query('TRUNCATE TABLE bench_seed_copy');
        upper = lower;
      }
      rows += copy;
      log(`${database}: ${rows} / ${size} jobs`);
    }
    // One row a minute, newest first: a table that spans more than that was copied wrongly.
    const [[span]] = await admin.query<mysql.RowDataPacket[]>(
      'SELECT TIMESTAMPDIFF(MINUTE, MIN(created_at), MAX(created_at)) AS minutes FROM jobs',
    );
    if (Math.abs(Number(span!.minutes) - (size - 1)) > 1)
      throw new Error(`${database}: seeded rows span ${span!.minutes} minutes instead of ${size - 1}`);
    await admin.query('DROP TABLE bench_seed_copy');
    await admin.query('ANALYZE TABLE jobs');
    const seededSeconds = (performance.now() - started) / 1000;
    log(`${database}: seeded ${size} jobs in ${seededSeconds.toFixed(1)} s`);
    return { url, rows: await count(admin), seededSeconds };
  } finally {
    await admin.end();
  }
}
