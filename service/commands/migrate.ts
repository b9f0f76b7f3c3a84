import { describeDatabaseUrl } from '../../db/client';
import { migrateDatabase, startupDatabaseError } from '../../db/migrate';
import { loadConfig } from '../config';

// `npm run db:migrate`: creates the database if needed and applies db/migrations, or refuses them all in one line (db/migration-safety.ts).

if (require.main === module) {
  const config = loadConfig();
  const url = config.databaseUrl;
  migrateDatabase(url, { lockTimeoutSeconds: config.migrationLockTimeoutSeconds }).then(
    (report) => {
      for (const { name, durationMs } of report.applied) console.log(`Applied ${name} in ${durationMs} ms`);
      if (report.newestKnownBehind)
        console.log(`The database is ahead of this release: its newest known migration is ${report.newestKnownBehind}`);
      console.log(`Migrated ${describeDatabaseUrl(url)}`);
    },
    (error: unknown) => {
      console.error(startupDatabaseError(url, error));
      process.exit(1);
    },
  );
}
