/**
 * --before: another checkout of this repository (another commit, or a worktree with changes of
 * its own) as a second reference for the data-layer scenarios. Its service runs from its own
 * dist with its own Dockerfile's flags, on a database of its own that its own start-up migrated
 * (an older schema may lack columns and indexes) and that holds a copy of the same jobs, ids
 * included, so get by id asks both for the same rows.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { connectionOptions } from '../db/client';
import type { Server } from './servers';
import type { PreparedTable } from './tables';

// Rows per INSERT ... SELECT, so no single statement holds a huge transaction.
const CHUNK_ROWS = 100_000;

export interface BeforeCheckout {
  dir: string;
  /** git rev-parse HEAD there, or why there is none. */
  commit: string;
  /** Tracked files there differ from its commit: the service is not that commit's alone. */
  changes: boolean;
}

export function describeCheckout(dir: string): BeforeCheckout {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  try {
    return {
      dir,
      commit: git('rev-parse', 'HEAD'),
      changes: git('status', '--porcelain', '--untracked-files=no') !== '',
    };
  } catch (error) {
    return { dir, commit: `unknown (${(error as Error).message.split('\n')[0]})`, changes: false };
  }
}

/** The checkout as the run's header names it. */
export function checkoutLine(checkout: BeforeCheckout): string {
  return `${checkout.dir} at ${checkout.commit}${checkout.changes ? ' with uncommitted changes' : ''}`;
}

async function jobColumns(connection: mysql.Connection, database: string): Promise<string[]> {
  const [rows] = await connection.query<mysql.RowDataPacket[]>(
    `SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = ? AND table_name = 'jobs' AND extra NOT LIKE '%GENERATED%' ORDER BY ordinal_position`,
    [database],
  );
  return rows.map((row) => row.name as string);
}

/**
 * jobs_bench_<size>_before, made afresh each run (the checkout may have changed since): migrated
 * by one start of the before service (`migrate`), then every job of `source` copied into the
 * columns both schemas have, its own triggers filling its own feed and counts.
 */
export async function prepareBeforeTable(
  source: PreparedTable,
  size: number,
  migrate: (url: string) => Promise<Server>,
  log: (line: string) => void,
): Promise<PreparedTable> {
  const sourceDatabase = new URL(source.url).pathname.slice(1);
  const database = `jobs_bench_${size}_before`;
  const url = source.url.replace(/\/[^/]*$/, `/${database}`);
  const { database: _none, ...serverOptions } = connectionOptions(source.url);
  const admin = await mysql.createConnection(serverOptions);
  const started = performance.now();
  try {
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await (await migrate(url)).stop();
    const theirs = await jobColumns(admin, database);
    const ours = await jobColumns(admin, sourceDatabase);
    const common = theirs.filter((name) => ours.includes(name));
    const onlyOurs = ours.filter((name) => !theirs.includes(name));
    const onlyTheirs = theirs.filter((name) => !ours.includes(name));
    if (onlyOurs.length || onlyTheirs.length) {
      log(
        `${database}: columns not copied: ${onlyOurs.join(', ') || 'none'}; the before schema's own, left to their defaults: ${onlyTheirs.join(', ') || 'none'}`,
      );
    }
    const columns = common.map((name) => `\`${name}\``).join(', ');
    let copied = 0;
    let last: Buffer | undefined;
    for (;;) {
      const [result] = await admin.query<mysql.ResultSetHeader>(
        `INSERT INTO \`${database}\`.jobs (${columns}) SELECT ${columns} FROM \`${sourceDatabase}\`.jobs${last ? ' WHERE id > ?' : ''} ORDER BY id LIMIT ${CHUNK_ROWS}`,
        last ? [last] : [],
      );
      if (result.affectedRows === 0) break;
      copied += result.affectedRows;
      const [[row]] = await admin.query<mysql.RowDataPacket[]>(`SELECT MAX(id) AS id FROM \`${database}\`.jobs`);
      last = row!.id as Buffer;
      if (copied % (5 * CHUNK_ROWS) === 0 || copied === source.rows)
        log(`${database}: ${copied} / ${source.rows} jobs copied`);
    }
    if (copied !== source.rows) throw new Error(`${database}: copied ${copied} jobs of ${source.rows}`);
    await admin.query(`ANALYZE TABLE \`${database}\`.jobs`);
    const seededSeconds = (performance.now() - started) / 1000;
    log(`${database}: migrated by the before checkout, ${copied} jobs copied in ${seededSeconds.toFixed(1)} s`);
    return { url, rows: copied, seededSeconds };
  } finally {
    await admin.end();
  }
}
