import type { Logger } from '../service/logger';

/** Skew past which the host's clock is reported: receivers commonly refuse timestamps five minutes off. */
export const SKEW_WARN_MS = 30_000;
const CHECK_MS = 60_000;

export interface DatabaseClock {
  /** Now on the database's clock: the last reading carried forward on this host's monotonic clock. */
  now(): Date;
  stop(): void;
}

/**
 * Signatures' timestamps follow the database's clock, as leases and schedules do: read at start and every
 * minute, carried forward by performance.now() so a host clock step never moves them.
 */
export async function databaseClock(
  read: () => Promise<number>,
  options: { logger: Logger; onSkew?: (ms: number) => void; wallNow?: () => number; checkMs?: number },
): Promise<DatabaseClock> {
  const wallNow = options.wallNow ?? Date.now;
  let base = { mono: 0, db: 0 };
  let skew = 0;
  let warned = false;

  async function measure(): Promise<void> {
    const before = performance.now();
    const wall = wallNow();
    const db = await read();
    const after = performance.now();
    const mono = (before + after) / 2;
    base = { mono, db };
    skew = db - (wall + (mono - before));
    options.onSkew?.(skew);
    const far = Math.abs(skew) > SKEW_WARN_MS;
    if (far && !warned)
      options.logger.warn(
        { skewSeconds: Math.round(skew / 1000) },
        "this host's clock is more than 30 s off the database's: signatures use the database's",
      );
    if (!far && warned)
      options.logger.info(
        { skewSeconds: Math.round(skew / 1000) },
        "this host's clock is within 30 s of the database's again",
      );
    warned = far;
  }

  await measure();
  const timer = setInterval(() => void measure().catch(() => undefined), options.checkMs ?? CHECK_MS);
  timer.unref();
  return {
    now: () => new Date(base.db + (performance.now() - base.mono)),
    stop: () => clearInterval(timer),
  };
}
