import { noticeRestore } from '../db/jobs/change-history';
import { sequencePendingChanges } from '../db/jobs/change-numbering';
import { claimDue, databaseTime, type LeasedSubscription } from '../db/webhooks/delivery';
import { databaseClock } from './clock';
import { handBack, type Run } from './run';
import { walk } from './walk';

// How often a dispatcher asks whether the database was restored: partners are told (feed.restored) within about this long.
const RESTORE_CHECK_MS = 1000;

/** One tick, step by step: the database's clock, a restore, number new changes, claim what fits, read the feed, start a walk for each claim. */
export async function tick(run: Run): Promise<void> {
  run.clock ??= await readClock(run);
  if (performance.now() >= run.restoreCheckAt) {
    // A restore no change followed still starts a new history, so subscriptions are told at once.
    await noticeRestore(run.db);
    run.restoreCheckAt = performance.now() + RESTORE_CHECK_MS;
  }
  // Numbers what writers committed since the last tick: the feed's positions come from here too.
  await sequencePendingChanges(run.db);
  const claimedAt = performance.now();
  const claimed = await claimRoom(run);
  await refreshFeed(run, claimed);
  for (const subscription of claimed) startWalk(run, subscription, claimedAt);
}

function readClock(run: Run) {
  return databaseClock(() => databaseTime(run.db), {
    logger: run.logger,
    onSkew: (ms) => run.metrics?.observeSkew(ms),
    wallNow: run.wallNow,
  });
}

/** Due subscriptions, as many as there are free slots, least recently served first. */
async function claimRoom(run: Run): Promise<LeasedSubscription[]> {
  const room = run.capacity - run.walking.size;
  const claimed = await claimDue(run.db, run.owner, run.settings.leaseMs, room);
  run.roomFilled = room > 0 && claimed.length === room;
  return claimed;
}

/** Read after the claim: a new holder never sees the feed as it was before the last holder's reads. */
async function refreshFeed(run: Run, claimed: LeasedSubscription[]): Promise<void> {
  try {
    await run.feed.refresh();
  } catch (error) {
    for (const subscription of claimed) handBack(run, subscription, subscription.position);
    throw error;
  }
}

function startWalk(run: Run, subscription: LeasedSubscription, claimedAt: number): void {
  const walking = walk(run, subscription, claimedAt)
    .catch((error: unknown) => {
      // The lease expires on its own; another tick (here or elsewhere) takes it up again.
      run.failure(error, { subscription: subscription.id }, 'webhook walk failed');
    })
    .finally(() => {
      run.walking.delete(subscription.id);
      // Slots freed while others wait: claim again soon rather than at the next poll.
      if (run.roomFilled) run.wake?.();
    });
  run.walking.set(subscription.id, walking);
}
