import type { AttemptRecord } from '../db/webhooks/attempts';
import type { Lease, LeasedSubscription } from '../db/webhooks/delivery';
import { parkUnopenable } from '../db/webhooks/sealing';
import type { Logger } from '../service/logger';
import { deliveryTarget, postEvent, type PostOutcome } from '../service/webhooks/post';
import { decryptSecret, SecretUnopenable } from '../service/webhooks/secrets';
import { signer } from '../service/webhooks/signing';
import { restoreToTell } from '../db/webhooks/restores';
import type { History } from '../domain/feed';
import { restoredEvent } from './events';
import type { WindowEvent } from './feed-window';
import { failed } from './failure';
import { handBack, type Run, type Walk } from './run';

/** Events taken from the feed window at a time by one walk. */
const BATCH = 50;
// A subscription with a long backlog gives its lease back after this long, so those served less recently go first.
const SLICE_MS = 5_000;
// A subscription whose secret the keyring cannot open is claimed again after this long at most: the keyring changes only with a restart, which checks it at once.
const UNOPENABLE_WAIT_MS = 60_000;
const LEASE_LOST = 'lease lost: the subscription changed or another dispatcher took it';

/** Delivers a leased subscription's feed entries in order, one at a time, until it is caught up, its slice ends or a delivery fails. */
export async function walk(run: Run, subscription: LeasedSubscription, claimedAt: number): Promise<void> {
  const one = await begin(run, subscription, claimedAt);
  if (!one) return;
  const sliceEnds = performance.now() + SLICE_MS;
  while (!run.stopping && !run.writer.lost(one.lease) && performance.now() <= sliceEnds) {
    const events = await run.feed.after(one.position, BATCH);
    // Caught up: the slot is free at once, the position goes with the next flush; a restore no change followed is told now.
    if (events.length === 0) {
      const newest = run.feed.lineage().at(-1);
      if (newest && !(await tell(run, one, newest.id))) return;
      break;
    }
    for (const event of events) {
      if (run.stopping || run.writer.lost(one.lease)) break;
      if (!(await tell(run, one, event.history))) return;
      if (!(await deliver(run, one, event))) return;
    }
  }
  handBack(run, one.lease, one.position);
}

/** The walk's start: its signer, or none when the keyring cannot open the subscription's secrets (it is then parked). */
async function begin(run: Run, subscription: LeasedSubscription, claimedAt: number): Promise<Walk | undefined> {
  const log = run.logger.child({ subscription: subscription.id });
  const lease: Lease = { id: subscription.id, owner: subscription.owner, generation: subscription.generation };
  let sign: Walk['sign'];
  try {
    sign = signer(subscription.secrets.map((sealed) => decryptSecret(run.keyring, sealed)));
  } catch (error) {
    if (!(error instanceof SecretUnopenable)) throw error;
    if (!run.unopenable.has(subscription.id)) {
      run.unopenable.add(subscription.id);
      run.metrics?.observeUnopenable(run.unopenable.size);
      log.warn(
        { sealedUnder: error.sealedUnder ?? 'the form before key ids' },
        "webhook secret cannot be opened with this dispatcher's keyring: deliveries to the subscription wait until its key is in WEBHOOK_SECRETS_KEY or WEBHOOK_SECRETS_KEY_PREVIOUS",
      );
    }
    await parkUnopenable(run.db, lease, Math.min(UNOPENABLE_WAIT_MS, run.settings.retry.maxMs));
    return undefined;
  }
  if (run.unopenable.delete(subscription.id)) {
    run.metrics?.observeUnopenable(run.unopenable.size);
    log.info('webhook secret opens again: delivering');
  }
  return {
    lease,
    log,
    sign,
    target: deliveryTarget(subscription.url, run.settings.policy),
    wanted: subscription.eventTypes ? new Set<string>(subscription.eventTypes) : undefined,
    position: subscription.position,
    history: subscription.history,
    attempts: subscription.attempts,
    failedBefore: subscription.attempts > 0,
    leaseEnds: claimedAt + run.settings.leaseMs,
  };
}

/** One event: skipped when not chosen, else sent while the lease holds. False: the walk ends here. */
async function deliver(run: Run, one: Walk, event: WindowEvent): Promise<boolean> {
  if (one.wanted && !one.wanted.has(event.type)) {
    one.position = event.seq;
    run.writer.advance(one.lease, one.position, false);
    return true;
  }
  const attempt = await sendHeld(run, one, event);
  if (!attempt) return false;
  one.position = event.seq;
  run.writer.advance(one.lease, one.position, true, attempt);
  return true;
}

/**
 * feed.restored before the first event of a history newer than the subscription was told of, or once
 * caught up: whatever its eventTypes, once per subscription and history. False: the walk ends here.
 */
async function tell(run: Run, one: Walk, history: string): Promise<boolean> {
  if (!newer(run.feed.lineage(), history, one.history)) return true;
  const restore = await restoreToTell(run.db, history);
  // Gone with a later restore: the newest history is told instead.
  if (!restore) return true;
  const attempt = await sendHeld(run, one, { ...restoredEvent(restore), seq: null });
  if (!attempt) return false;
  one.history = history;
  run.writer.told(one.lease, history, attempt);
  return true;
}

/**
 * Whether `history` comes after `than` on the lineage. One the window's lineage lacks was minted since
 * (it is told); a subscription of unknown history (an older release made it) is told of the newest only.
 */
function newer(lineage: readonly History[], history: string, than: string | null): boolean {
  if (history === than) return false;
  const at = (id: string | null) => lineage.findIndex((one) => one.id === id);
  const [which, told] = [at(history), at(than)];
  if (told === -1) return which === -1 || which === lineage.length - 1;
  return which === -1 || which > told;
}

/** Sent while the lease holds; the attempt when it was delivered, else undefined (a failure is recorded). */
async function sendHeld(run: Run, one: Walk, event: Outgoing): Promise<AttemptRecord | undefined> {
  if (!(await leaseHolds(run, one))) return undefined;
  const { outcome, attempt } = await send(run, one, event);
  if (!outcome.ok) {
    await failed(run, { walk: one, eventId: event.id, outcome, attempt });
    return undefined;
  }
  delivered(run, one, event, attempt);
  return attempt;
}

/** Renews the lease when half of it is gone, asks whether it is still ours, and whether a send fits in what is left. */
async function leaseHolds(run: Run, one: Walk): Promise<boolean> {
  const { leaseMs, timeoutMs } = run.settings;
  if (one.leaseEnds - performance.now() < leaseMs / 2) {
    const asked = performance.now();
    if (!(await run.writer.renew(one.lease))) return lost(one.log, LEASE_LOST);
    one.leaseEnds = asked + leaseMs;
  }
  if (!(await run.gate.check(one.lease))) return lost(one.log, LEASE_LOST);
  // Just before sending, on the monotonic clock: a process stalled past its lease sends nothing.
  if (performance.now() + timeoutMs > one.leaseEnds)
    return lost(one.log, 'lease ran out before sending: another dispatcher may hold it');
  return true;
}

function lost(log: Logger, message: string): false {
  log.info(message);
  return false;
}

/** What is POSTed: a feed event (its position), or a feed.restored event (none). */
type Outgoing = Pick<WindowEvent, 'id' | 'body'> & { seq: number | null };

/** The signed POST and its attempt as the owner reads it back. */
async function send(run: Run, one: Walk, event: Outgoing): Promise<{ outcome: PostOutcome; attempt: AttemptRecord }> {
  const { policy, timeoutMs } = run.settings;
  const started = performance.now();
  const signature = one.sign(event.id, run.clock!.now(), event.body);
  const outcome = await postEvent(one.target, signature, event.body, {
    policy,
    timeoutMs,
    agent: run.agent,
    deadline: one.leaseEnds,
  });
  const attempt: AttemptRecord = {
    subscriptionId: one.lease.id,
    eventId: event.id,
    position: event.seq,
    status: outcome.status ?? null,
    error: outcome.ok ? null : outcome.error,
    latencyMs: performance.now() - started,
  };
  return { outcome, attempt };
}

/** Counted; a subscription that was failing is logged and counted as recovered once. */
function delivered(run: Run, one: Walk, event: Outgoing, attempt: AttemptRecord): void {
  run.metrics?.observeDelivery('delivered', attempt.latencyMs / 1000);
  if (!one.failedBefore) return;
  one.failedBefore = false;
  run.metrics?.subscriptionChanged('recovered');
  one.log.info({ event: event.id }, 'webhook subscription delivering again');
}
