import { count } from 'drizzle-orm';
import type { Database } from './client';
import { jobs, type NewJobRow } from './schema';
import { demoJobs, generateJobs } from './seed-data';

const BATCH_SIZE = 1000;

export async function insertInBatches(db: Database, rows: NewJobRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += BATCH_SIZE) {
    await db.insert(jobs).values(rows.slice(start, start + BATCH_SIZE));
  }
}

export async function countJobs(db: Database): Promise<number> {
  const [row] = await db.select({ n: count() }).from(jobs);
  return row?.n ?? 0;
}

/** Loads the demo set when the table is empty; returns how many rows it inserted. */
export async function seedIfEmpty(db: Database): Promise<number> {
  if ((await countJobs(db)) > 0) return 0;
  const rows = demoJobs();
  await insertInBatches(db, rows);
  return rows.length;
}

/**
 * Appends `total` generated jobs for benchmarks, built and inserted one batch at a time so
 * memory stays flat however large the set.
 */
export async function seedBulk(db: Database, total: number, onProgress?: (done: number) => void): Promise<void> {
  const newest = new Date();
  for (let done = 0; done < total; done += BATCH_SIZE) {
    const batch = generateJobs({
      count: Math.min(BATCH_SIZE, total - done),
      seed: 7 + done,
      newest: new Date(newest.getTime() - done * 60_000),
      spacingMs: 60_000,
      firstNumber: done,
    });
    await db.insert(jobs).values(batch);
    onProgress?.(done + batch.length);
  }
}

export interface SeedArgs {
  jobs?: number;
  reset: boolean;
}

export function parseSeedArgs(argv: string[]): SeedArgs {
  const args: SeedArgs = { reset: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--reset') args.reset = true;
    else if (arg === '--jobs') {
      const value = argv[++i] ?? '';
      if (!/^[1-9]\d{0,7}$/.test(value)) throw new Error(`--jobs takes a whole number from 1 to 99999999 (got "${value}")`);
      args.jobs = Number(value);
    } else throw new Error(`Unknown argument "${arg}". Usage: npm run db:seed -- [--reset] [--jobs N]`);
  }
  return args;
}

async function main(): Promise<void> {
  const { loadConfig } = await import('../service/config');
  const { createDatabase, describeDatabaseUrl } = await import('./client');
  const { migrateDatabase, startupDatabaseError } = await import('./migrate');
  const args = parseSeedArgs(process.argv.slice(2));
  const url = loadConfig().databaseUrl;
  await migrateDatabase(url).catch((error: unknown) => {
    throw new Error(startupDatabaseError(url, error));
  });
  const { db, close } = createDatabase(url);
  try {
    if (args.reset) await db.delete(jobs);
    if (args.jobs !== undefined) {
      const started = Date.now();
      await seedBulk(db, args.jobs, (done) => process.stdout.write(`\r${done} / ${args.jobs} jobs`));
      console.log(`\nInserted ${args.jobs} jobs into ${describeDatabaseUrl(url)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } else {
      const inserted = await seedIfEmpty(db);
      console.log(
        inserted > 0
          ? `Loaded ${inserted} demo jobs into ${describeDatabaseUrl(url)}`
          : `${describeDatabaseUrl(url)} already has jobs; run with --reset to replace them with the demo set`,
      );
    }
  } finally {
    await close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
