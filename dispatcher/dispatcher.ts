import { createRun, type DispatcherOptions, type Run } from './run';
import { tick } from './tick';

// Ticks woken by walks that ended are at least this far apart: one claim for many freed slots.
const TICK_GAP_MS = 20;

export interface Dispatcher {
  owner: string;
  /** Resolves once the loop has stopped and every walk has written its position and given its lease back. */
  stop(): Promise<void>;
}

/** Delivers each leased subscription's feed entries in order, one at a time; a failure reschedules the same event (docs/decisions.md, Webhooks). */
export function startDispatcher(options: DispatcherOptions): Dispatcher {
  const run = createRun(options);
  const loop = runLoop(run);
  return { owner: run.owner, stop: () => stop(run, loop) };
}

/** A tick every WEBHOOK_POLL_MS, or sooner when walks free slots others wait for. */
async function runLoop(run: Run): Promise<void> {
  while (!run.stopping) {
    const started = performance.now();
    try {
      await tick(run);
    } catch (error) {
      run.failure(error, {}, 'webhook dispatcher tick failed');
    }
    await nextTick(run, started);
  }
}

function nextTick(run: Run, lastTick: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, run.settings.pollMs);
    run.wake = () => {
      run.wake = undefined;
      clearTimeout(timer);
      setTimeout(resolve, Math.max(0, lastTick + TICK_GAP_MS - performance.now()));
    };
  }).finally(() => (run.wake = undefined));
}

async function stop(run: Run, loop: Promise<void>): Promise<void> {
  run.stopping = true;
  run.wake?.();
  await loop;
  await Promise.allSettled(run.walking.values());
  await run.writer.flush();
  // With the database away the leases are left to expire.
  await Promise.race([
    Promise.allSettled(run.handedBack),
    new Promise((resolve) => setTimeout(resolve, run.settings.leaseMs).unref()),
  ]);
  run.clock?.stop();
  await run.agent.destroy(); // every walk has ended; a connect still pending is not waited for
}
