import { createDatabase, describeDatabaseUrl } from '../../db/client';
import { startNewHistory } from '../../db/jobs/change-history';
import { rebuildDigests } from '../../db/jobs/mirror-digests';
import { startupDatabaseError } from '../../db/migrate';
import { loadConfig } from '../config';

// `npm run db:restored`: the change feed starts a new history, for a restore it cannot see by itself, and the mirror check's digests are rebuilt (docs/operations.md, "Backup and restore").

if (require.main === module) {
  const config = loadConfig();
  const database = createDatabase(config.databaseUrl);
  startNewHistory(database.db)
    .then(async ({ id, firstSeq }) => {
      console.log(
        `The change feed of ${describeDatabaseUrl(config.databaseUrl)} starts history ${id} at ${firstSeq}: positions past ${firstSeq - 1} of the old one are refused, and the dispatchers tell every webhook subscription (feed.restored)`,
      );
      const { jobs } = await rebuildDigests(database.db);
      console.log(`Rebuilt the mirror check's digests from ${jobs} listable jobs`);
    })
    .then(
      () => undefined,
      (error: unknown) => {
        console.error(startupDatabaseError(config.databaseUrl, error));
        process.exitCode = 1;
      },
    )
    .finally(() => database.close());
}
