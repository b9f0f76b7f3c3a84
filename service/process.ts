import type { MigrationReport } from '../db/migrate';
import { exitOnCrash, type Logger } from './logger';

/** A process's life: `start` it, or print why it could not start and exit 1; then a crash is a fatal line, and SIGTERM or SIGINT stops it once and exits 0. */
export async function runProcess<T extends { logger: Logger; stop(): Promise<unknown> }>(
  start: () => Promise<T>,
  started?: (running: T) => void,
): Promise<void> {
  let running: T;
  try {
    running = await start();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  exitOnCrash(running.logger);
  started?.(running);
  let stopping = false;
  const onSignal = () => {
    // A second signal while stopping (an orchestrator and an init both send one) changes nothing.
    if (stopping) return;
    stopping = true;
    // stop() does not reject (db/client.ts's close never does); were it to, the unhandled rejection would reach exitOnCrash: a fatal line and exit code 1.
    void running.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** What start-up's migration did, in the log: each migration applied once, by the instance that applied it; a database ahead of this release, one warning. */
export function logMigrations(logger: Logger, report: MigrationReport): void {
  for (const { name, durationMs } of report.applied)
    logger.info({ migration: name, durationMs }, `migration ${name} applied in ${durationMs} ms`);
  if (report.newestKnownBehind) {
    logger.warn(
      { newestKnownMigration: report.newestKnownBehind },
      `the database has migrations this release does not know (the newest it knows is ${report.newestKnownBehind}): an older release against a newer schema; it runs, and rolls forward or back only as docs/operations.md "Upgrades" says`,
    );
  }
}
