import type { Database } from '../db/client';
import type { AttemptRecord } from '../db/webhooks/attempts';
import { recordProgress, type Lease, type Progress } from '../db/webhooks/delivery';

/** How often a dispatcher writes its walks' positions and attempts: one transaction for all of them. */
export const FLUSH_MS = 250;

export interface HoldWriter {
  /** A delivery (or a skipped event) moved the walk to `position`; written with the next flush. */
  advance(lease: Lease, position: number, delivered: boolean, attempt?: AttemptRecord): void;
  /** A feed.restored event was delivered: the history it told of is written with the next flush. */
  told(lease: Lease, history: string, attempt: AttemptRecord): void;
  /** Renews the lease at once; false when it was lost. */
  renew(lease: Lease): Promise<boolean>;
  /** Writes the walk's position and gives its lease back with the next flush; false when it was lost. */
  release(lease: Lease, position: number): Promise<boolean>;
  /** Takes back what the walk has not written yet (its failure writes it instead). */
  take(lease: Lease): { attempts: AttemptRecord[] };
  /** A flush found this lease lost: the walk must stop. */
  lost(lease: Lease): boolean;
  /** Writes everything pending now (on stopping). */
  flush(): Promise<void>;
}

interface Pending {
  progress: Progress;
  renew: boolean;
  attempts: AttemptRecord[];
  waiters: Array<(kept: boolean) => void>;
}

/**
 * Batched position writes: positions only grow, so a crash between flushes re-sends what was delivered
 * since the last one (the receiver drops it by sequence) and never skips an event.
 */
export function holdWriter(db: Database, leaseMs: number, onError: (error: unknown) => void): HoldWriter {
  let pending = new Map<string, Pending>();
  const lostLeases = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const key = (lease: Lease) => `${lease.id}/${lease.generation}`;

  const entry = (lease: Lease, position: number): Pending => {
    let one = pending.get(key(lease));
    if (!one) {
      one = {
        progress: { lease, position, delivered: false, release: false },
        renew: false,
        attempts: [],
        waiters: [],
      };
      pending.set(key(lease), one);
    }
    one.progress.position = Math.max(one.progress.position, position);
    return one;
  };

  async function write(): Promise<void> {
    const batch = pending;
    pending = new Map();
    if (batch.size === 0) return;
    const all = [...batch.values()];
    try {
      const lost = await recordProgress(
        db,
        all.map((one) => one.progress),
        all.flatMap((one) => one.attempts),
        leaseMs,
      );
      for (const one of all) {
        const kept = !lost.has(one.progress.lease.id);
        if (!kept) lostLeases.add(key(one.progress.lease));
        for (const wake of one.waiters) wake(kept);
      }
    } catch (error) {
      onError(error);
      // Kept for the next flush, merged with what came meanwhile; its lease expires on its own if the database stays away.
      for (const [name, one] of batch) {
        const now = pending.get(name);
        if (!now) pending.set(name, one);
        else {
          now.progress.position = Math.max(now.progress.position, one.progress.position);
          now.progress.delivered ||= one.progress.delivered;
          now.progress.release ||= one.progress.release;
          now.progress.history ??= one.progress.history;
          now.attempts.unshift(...one.attempts);
          now.waiters.push(...one.waiters);
        }
      }
      schedule();
    }
  }

  function flushNow(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    // One transaction at a time: what arrives meanwhile goes in the next.
    running = (running ?? Promise.resolve()).then(write);
    return running;
  }

  function schedule(soon = false): void {
    if (soon) {
      void flushNow();
      return;
    }
    timer ??= setTimeout(() => void flushNow(), FLUSH_MS);
  }

  return {
    advance(lease, position, delivered, attempt) {
      const one = entry(lease, position);
      one.progress.delivered ||= delivered;
      if (attempt) one.attempts.push(attempt);
      schedule();
    },
    told(lease, history, attempt) {
      const one = entry(lease, 0);
      one.progress.history = history;
      one.progress.delivered = true;
      one.attempts.push(attempt);
      schedule();
    },
    renew(lease) {
      return new Promise((resolve) => {
        const one = pending.get(key(lease)) ?? entry(lease, 0);
        one.renew = true;
        one.waiters.push(resolve);
        schedule(true);
      });
    },
    release(lease, position) {
      return new Promise((resolve) => {
        const one = entry(lease, position);
        one.progress.release = true;
        one.waiters.push(resolve);
        schedule();
      });
    },
    take(lease) {
      const one = pending.get(key(lease));
      pending.delete(key(lease));
      for (const wake of one?.waiters ?? []) wake(true);
      return { attempts: one?.attempts ?? [] };
    },
    lost: (lease) => lostLeases.has(key(lease)),
    flush: flushNow,
  };
}
