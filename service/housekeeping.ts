import type { Database } from '../db/client';
import { errorCode } from '../db/errors';
import { keepDigestsCaughtUp } from '../db/jobs/change-numbering';
import { foldJobCounts } from '../db/jobs/counters';
import { deleteExpiredKeys } from '../db/jobs/idempotency-keys';
import type { Logger } from './logger';

/** The service's periodic writes, off the request path: a request only writes what it answers for. */
export const HOUSEKEEPING = {
  /** Adds the counters' connection rows into their totals (several instances may: the fold skips locked rows). */
  'fold counters': { everyMs: 1000, run: foldJobCounts },
  /** Deletes idempotency keys whose retention is over, a batch at a time. */
  'clean idempotency keys': { everyMs: 60_000, run: deleteExpiredKeys },
  /** Keeps the mirror check's digests for what an older release numbered, in a rolling upgrade or after a rollback. */
  'catch up mirror digests': { everyMs: 5000, run: keepDigestsCaughtUp },
} satisfies Record<string, { everyMs: number; run(db: Database): Promise<unknown> }>;

export type HousekeepingTask = keyof typeof HOUSEKEEPING;
export const HOUSEKEEPING_TASKS = Object.keys(HOUSEKEEPING) as HousekeepingTask[];

export interface Housekeeping {
  /** Stops the tasks. A run in progress is not waited for: closing the pool ends it, even on a hung link. */
  stop(): void;
}

/**
 * Runs each task every `everyMs` (scaled by `pace`, for tests), one run at a time. A failure is
 * counted by `failed` each time and logged on the first of a streak (its code only: no SQL, no
 * values), and its recovery once.
 */
export function startHousekeeping(options: {
  db: Database;
  logger: Logger;
  failed?: (task: HousekeepingTask) => void;
  pace?: number;
}): Housekeeping {
  const { db, logger, failed, pace = 1 } = options;
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();

  for (const task of HOUSEKEEPING_TASKS) {
    const { everyMs, run } = HOUSEKEEPING[task];
    let failing = false;
    const once = async () => {
      try {
        await run(db);
        if (failing) logger.info({ task }, `housekeeping: ${task} works again`);
        failing = false;
      } catch (error) {
        // A run cut short by the shutdown closing the pool is no failure.
        if (stopped) return;
        failed?.(task);
        if (!failing) logger.warn({ task, code: errorCode(error) ?? 'unknown' }, `housekeeping: ${task} failed`);
        failing = true;
      }
    };
    const schedule = () => {
      if (stopped) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        void once().finally(schedule);
      }, everyMs * pace);
      timers.add(timer);
    };
    schedule();
  }

  return {
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
    },
  };
}
