import type { Database } from '../../../db/client';
import { recordHolds, type Hold } from '../../../db/webhooks/delivery';

/** How long the first write waits for others: a few ms on a delivery, fewer statements for the database. */
const GROUP_MS = 2;

export interface HoldWriter {
  /** Writes one walk's position (or only renews its lease); false when its lease was lost. */
  write(hold: Hold): Promise<boolean>;
}

/**
 * Group commit: the writes that arrive while one is in flight go together in the next statement, so
 * ten subscriptions' deliveries cost one UPDATE, not ten; each walk still waits for its own write.
 */
export function holdWriter(db: Database, leaseMs: number): HoldWriter {
  let queue: Array<{ hold: Hold; resolve: (kept: boolean) => void; reject: (error: unknown) => void }> = [];
  let flushing = false;

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        const lost = await recordHolds(db, batch.map((entry) => entry.hold), leaseMs);
        for (const entry of batch) entry.resolve(!lost.has(entry.hold.id));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    flushing = false;
  }

  return {
    write(hold) {
      return new Promise((resolve, reject) => {
        queue.push({ hold, resolve, reject });
        // The answers that come in within GROUP_MS of this one join it.
        if (!flushing) {
          flushing = true;
          setTimeout(() => void flush(), GROUP_MS);
        }
      });
    },
  };
}
