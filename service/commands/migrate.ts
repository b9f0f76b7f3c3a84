import { describeDatabaseUrl } from '../../db/client';
import { migrateDatabase, startupDatabaseError } from '../../db/migrate';
import { loadConfig } from '../config';

// `npm run db:migrate`: creates the database if needed and applies db/migrations.

if (require.main === module) {
  const config = loadConfig();
  const url = config.databaseUrl;
  migrateDatabase(url, { lockTimeoutSeconds: config.migrationLockTimeoutSeconds }).then(
    () => console.log(`Migrated ${describeDatabaseUrl(url)}`),
    (error: unknown) => {
      console.error(startupDatabaseError(url, error));
      process.exit(1);
    },
  );
}
