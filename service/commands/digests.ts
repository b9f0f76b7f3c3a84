import { createDatabase, describeDatabaseUrl } from '../../db/client';
import { rebuildDigests } from '../../db/jobs/mirror-digests';
import { startupDatabaseError } from '../../db/migrate';
import { loadConfig } from '../config';

// `npm run db:digests`: the mirror check's digests computed again from the jobs (docs/operations.md, "Backup and restore").

if (require.main === module) {
  const config = loadConfig();
  const database = createDatabase(config.databaseUrl);
  rebuildDigests(database.db)
    .then(
      ({ jobs, differed }) =>
        console.log(
          `Rebuilt the mirror check's digests of ${describeDatabaseUrl(config.databaseUrl)} from ${jobs} listable jobs: ${differed ? 'they differed from those kept, which partners will now see corrected' : 'they equal those kept'}`,
        ),
      (error: unknown) => {
        console.error(startupDatabaseError(config.databaseUrl, error));
        process.exitCode = 1;
      },
    )
    .finally(() => database.close());
}
