import { createDatabase, describeDatabaseUrl } from '../../db/client';
import { migrateDatabase, startupDatabaseError } from '../../db/migrate';
import { removeAllJobs, seedBulk, seedIfEmpty } from '../../db/seed';
import { loadConfig } from '../config';

// `npm run db:seed`: the demo set into an empty table, or (--jobs N) N generated jobs appended.

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
      if (!/^[1-9]\d{0,7}$/.test(value))
        throw new Error(`--jobs takes a whole number from 1 to 99999999 (got "${value}")`);
      args.jobs = Number(value);
    } else throw new Error(`Unknown argument "${arg}". Usage: npm run db:seed -- [--reset] [--jobs N]`);
  }
  return args;
}

async function main(): Promise<void> {
  const args = parseSeedArgs(process.argv.slice(2));
  const url = loadConfig().databaseUrl;
  await migrateDatabase(url).catch((error: unknown) => {
    throw new Error(startupDatabaseError(url, error));
  });
  const database = createDatabase(url);
  const { db } = database;
  try {
    if (args.reset) await removeAllJobs(db);
    if (args.jobs !== undefined) {
      const started = Date.now();
      await seedBulk(db, args.jobs, (done) => process.stdout.write(`\r${done} / ${args.jobs} jobs`));
      console.log(
        `\nInserted ${args.jobs} jobs into ${describeDatabaseUrl(url)} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    } else {
      const inserted = await seedIfEmpty(db);
      console.log(
        inserted > 0
          ? `Loaded ${inserted} demo jobs into ${describeDatabaseUrl(url)}`
          : `${describeDatabaseUrl(url)} already has jobs; run with --reset to replace them with the demo set`,
      );
    }
  } finally {
    await database.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
