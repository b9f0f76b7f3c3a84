import { randomBytes } from 'node:crypto';
import type { Database } from '../../../db/client';
import { lastSequenced, sequencePendingChanges } from '../../../db/jobs/change-numbering';
import { signingKey } from '../../../db/signing-key';
import type { AttemptRecord } from '../../../db/webhooks/attempts';
import {
  claimDue,
  databaseTime,
  disableHeld,
  recordFailure,
  subscriptionLags,
  type Lease,
  type LeasedSubscription,
} from '../../../db/webhooks/delivery';
import type { Reachability } from '../../../db/reachability';
import type { Logger } from '../../logger';
import { databaseClock, type DatabaseClock } from './clock';
import { feedWindow } from './feed-window';
import { holdWriter } from './hold-writer';
import { leaseGate } from './lease-gate';
import type { DispatcherMetrics } from './metrics';
import { deliveryAgent, deliveryTarget, postEvent, type PostOutcome } from '../post';
import { parkUnopenable } from '../../../db/webhooks/sealing';
import { decryptSecret, SecretUnopenable } from '../secrets';
import { keyringOf, retryDelay, spoken, type WebhookSettings } from '../settings';
import { signer } from '../signing';

/** Events taken from the feed window at a time by one walk. */
const BATCH = 50;
/** Walks sending at once in one dispatcher: a caught-up or waiting subscription holds none. */
export const CAPACITY = 256;
// A subscription with a long backlog gives its lease back after this long, so those served less recently go first.
const SLICE_MS = 5_000;
// A subscription whose secret the keyring cannot open is claimed again after this long at most: the keyring changes only with a restart, which checks it at once.
const UNOPENABLE_WAIT_MS = 60_000;
// Ticks woken by walks that ended are at least this far apart: one claim for many freed slots.
const TICK_GAP_MS = 20;

export interface DispatcherOptions {
  db: Database;
  settings: WebhookSettings & { secretsKey: Buffer };
  logger: Logger;
  metrics?: DispatcherMetrics;
  /** This dispatcher's name in leases; unique per process. */
  owner?: string;
  capacity?: number;
  /** This host's wall clock, for the skew against the database's (tests move it). */
  wallNow?: () => number;
  /** Told of every failure: one the database's absence explains is logged once there, so here at debug. */
  reachability?: Pick<Reachability, 'failed'>;
  /** Subscriptions whose secrets the keyring was found not to open at start-up (already logged). */
  unopenable?: Iterable<string>;
}

export interface Dispatcher {
  owner: string;
  /** Resolves once the loop has stopped and every walk has written its position and given its lease back. */
  stop(): Promise<void>;
}

const errorFields = (error: unknown) => ({
  code: (error as { code?: string }).code,
  err: { name: (error as Error).name },
});

/** Delivers each leased subscription's feed entries in order, one at a time; a failure reschedules the same event (docs/decisions.md, Webhooks). */
export function startDispatcher({
  db,
  settings,
  logger,
  metrics,
  owner = `${process.pid}-${randomBytes(6).toString('hex')}`,
  capacity = CAPACITY,
  wallNow,
  reachability,
  unopenable: foundUnopenable = [],
}: DispatcherOptions): Dispatcher {
  const keyring = keyringOf(settings);
  // Logged once each, however often they are claimed; the gauge is their number.
  const unopenable = new Set(foundUnopenable);
  metrics?.observeUnopenable(unopenable.size);
  const giveUpReason = `deliveries failed for ${spoken(settings.retry.giveUpAfterMs)}`;
  const agent = deliveryAgent(settings.policy, { connectTimeoutMs: settings.timeoutMs });
  const walking = new Map<string, Promise<void>>();
  const handedBack = new Set<Promise<unknown>>();
  let stopping = false;
  let roomFilled = false;
  let lastTick = 0;
  let wake: (() => void) | undefined;
  let clock: DatabaseClock | undefined;

  const feed = feedWindow(db, () => signingKey(db));
  // An outage is one line (db/reachability.ts); each failure it explains is a debug line.
  const failure = (error: unknown, fields: Record<string, unknown>, message: string) =>
    reachability?.failed(error)
      ? logger.debug({ ...fields, ...errorFields(error) }, message)
      : logger.error({ ...fields, ...errorFields(error) }, message);
  const writer = holdWriter(db, settings.leaseMs, (error) =>
    failure(error, {}, 'webhook positions not written; retrying'),
  );
  const gate = leaseGate(db);
  metrics?.watchLag(async () => ({ head: await lastSequenced(db), subscriptions: await subscriptionLags(db) }));

  function handBack(lease: Lease, position: number): void {
    const written = writer.release(lease, position);
    handedBack.add(written);
    void written.finally(() => handedBack.delete(written));
  }

  async function walk(subscription: LeasedSubscription, claimedAt: number): Promise<void> {
    const log = logger.child({ subscription: subscription.id });
    const lease: Lease = { id: subscription.id, owner: subscription.owner, generation: subscription.generation };
    let position = subscription.position;
    let sign: ReturnType<typeof signer>;
    try {
      sign = signer(subscription.secrets.map((sealed) => decryptSecret(keyring, sealed)));
    } catch (error) {
      if (!(error instanceof SecretUnopenable)) throw error;
      if (!unopenable.has(subscription.id)) {
        unopenable.add(subscription.id);
        metrics?.observeUnopenable(unopenable.size);
        log.warn(
          { sealedUnder: error.sealedUnder ?? 'the form before key ids' },
          "webhook secret cannot be opened with this dispatcher's keyring: deliveries to the subscription wait until its key is in WEBHOOK_SECRETS_KEY or WEBHOOK_SECRETS_KEY_PREVIOUS",
        );
      }
      await parkUnopenable(db, lease, Math.min(UNOPENABLE_WAIT_MS, settings.retry.maxMs));
      return;
    }
    if (unopenable.delete(subscription.id)) {
      metrics?.observeUnopenable(unopenable.size);
      log.info('webhook secret opens again: delivering');
    }
    const target = deliveryTarget(subscription.url, settings.policy);
    const wanted = subscription.eventTypes ? new Set<string>(subscription.eventTypes) : undefined;
    let failedBefore = subscription.attempts > 0;
    // Both on this host's monotonic clock: the lease as the claim began, and this walk's turn.
    let leaseEnds = claimedAt + settings.leaseMs;
    const sliceEnds = performance.now() + SLICE_MS;
    for (;;) {
      if (stopping || writer.lost(lease) || performance.now() > sliceEnds) break;
      const events = await feed.after(position, BATCH);
      // Caught up: the slot is free at once, the position goes with the next flush.
      if (events.length === 0) break;
      for (const event of events) {
        if (stopping || writer.lost(lease)) break;
        if (wanted && !wanted.has(event.type)) {
          position = event.seq;
          writer.advance(lease, position, false);
          continue;
        }
        if (leaseEnds - performance.now() < settings.leaseMs / 2) {
          const asked = performance.now();
          if (!(await writer.renew(lease)))
            return log.info('lease lost: the subscription changed or another dispatcher took it');
          leaseEnds = asked + settings.leaseMs;
        }
        if (!(await gate.check(lease)))
          return log.info('lease lost: the subscription changed or another dispatcher took it');
        // Just before sending, on the monotonic clock: a process stalled past its lease sends nothing.
        if (performance.now() + settings.timeoutMs > leaseEnds)
          return log.info('lease ran out before sending: another dispatcher may hold it');
        const eventId = event.id;
        const started = performance.now();
        const outcome = await postEvent(target, sign(eventId, clock!.now(), event.body), event.body, {
          policy: settings.policy,
          timeoutMs: settings.timeoutMs,
          agent,
          deadline: leaseEnds,
        });
        const latencyMs = performance.now() - started;
        const attempt: AttemptRecord = {
          subscriptionId: lease.id,
          eventId,
          position: event.seq,
          status: outcome.status ?? null,
          error: outcome.ok ? null : outcome.error,
          latencyMs,
        };
        if (outcome.ok) {
          metrics?.observeDelivery('delivered', latencyMs / 1000);
          position = event.seq;
          writer.advance(lease, position, true, attempt);
          if (failedBefore) {
            failedBefore = false;
            metrics?.subscriptionChanged('recovered');
            log.info({ event: eventId }, 'webhook subscription delivering again');
          }
          continue;
        }
        return failed(lease, position, eventId, outcome, attempt, subscription.attempts, failedBefore, latencyMs, log);
      }
    }
    handBack(lease, position);
  }

  /** One line and one count when a subscription starts failing or is disabled; its later failures are debug lines. */
  async function failed(
    lease: Lease,
    position: number,
    eventId: string,
    outcome: Extract<PostOutcome, { ok: false }>,
    attempt: AttemptRecord,
    attempts: number,
    failedBefore: boolean,
    latencyMs: number,
    log: Logger,
  ): Promise<void> {
    const unwritten = writer.take(lease).attempts;
    const fields = { event: eventId, error: outcome.error, detail: outcome.detail };
    if (outcome.status === 410) {
      metrics?.observeDelivery('disabled', latencyMs / 1000);
      if (
        !(await disableHeld(db, lease, position, 'the receiver answered 410 Gone', outcome.error, [
          ...unwritten,
          attempt,
        ]))
      )
        return log.info(
          fields,
          'webhook delivery failed after the lease was lost: the subscription changed or another dispatcher took it',
        );
      metrics?.subscriptionChanged('disabled');
      return log.warn(fields, 'webhook subscription disabled: the receiver answered 410 Gone');
    }
    metrics?.observeDelivery(outcome.refused ? 'refused' : 'failed', latencyMs / 1000);
    const backoff = retryDelay(attempts + 1, settings.retry);
    // The receiver's Retry-After, within the schedule's longest wait.
    const retryInMs =
      outcome.retryAfterMs !== undefined ? Math.min(outcome.retryAfterMs, settings.retry.maxMs) : backoff;
    const result = await recordFailure(
      db,
      lease,
      { position, error: outcome.error, retryInMs, giveUpAfterMs: settings.retry.giveUpAfterMs, giveUpReason },
      [...unwritten, attempt],
    );
    if (result === 'lost')
      return log.info(
        fields,
        'webhook delivery failed after the lease was lost: the subscription changed or another dispatcher took it',
      );
    if (result === 'disabled') {
      metrics?.subscriptionChanged('disabled');
      return log.warn(
        { ...fields, attempts: attempts + 1 },
        'webhook subscription disabled: deliveries failed for the whole retry period',
      );
    }
    if (failedBefore)
      return log.debug(
        { ...fields, attempts: attempts + 1, retryInMs },
        'webhook delivery failed again; retrying later',
      );
    metrics?.subscriptionChanged('failing');
    log.warn({ ...fields, retryInMs }, 'webhook subscription failing: webhook delivery failed; retrying later');
  }

  async function tick(): Promise<void> {
    clock ??= await databaseClock(() => databaseTime(db), {
      logger,
      onSkew: (ms) => metrics?.observeSkew(ms),
      wallNow,
    });
    // Numbers what writers committed since the last tick: the feed's positions come from here too.
    await sequencePendingChanges(db);
    const room = capacity - walking.size;
    const claimedAt = performance.now();
    const claimed = await claimDue(db, owner, settings.leaseMs, room);
    roomFilled = room > 0 && claimed.length === room;
    // Read after the claim: a new holder never sees the feed as it was before the last holder's reads.
    try {
      await feed.refresh();
    } catch (error) {
      for (const subscription of claimed) handBack(subscription, subscription.position);
      throw error;
    }
    for (const subscription of claimed) {
      const run = walk(subscription, claimedAt)
        .catch((error: unknown) => {
          // The lease expires on its own; another tick (here or elsewhere) takes it up again.
          failure(error, { subscription: subscription.id }, 'webhook walk failed');
        })
        .finally(() => {
          walking.delete(subscription.id);
          // Slots freed while others wait: claim again soon rather than at the next poll.
          if (roomFilled) wake?.();
        });
      walking.set(subscription.id, run);
    }
  }

  const loop = (async () => {
    while (!stopping) {
      lastTick = performance.now();
      try {
        await tick();
      } catch (error) {
        failure(error, {}, 'webhook dispatcher tick failed');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, settings.pollMs);
        wake = () => {
          wake = undefined;
          clearTimeout(timer);
          setTimeout(resolve, Math.max(0, lastTick + TICK_GAP_MS - performance.now()));
        };
      });
      wake = undefined;
    }
  })();

  return {
    owner,
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      await Promise.allSettled(walking.values());
      await writer.flush();
      // With the database away the leases are left to expire.
      await Promise.race([
        Promise.allSettled(handedBack),
        new Promise((resolve) => setTimeout(resolve, settings.leaseMs).unref()),
      ]);
      clock?.stop();
      await agent.destroy(); // every walk has ended; a connect still pending is not waited for
    },
  };
}
