import { randomBytes } from 'node:crypto';
import type { Database } from '../../../db/client';
import { lastSequenced, sequencePendingChanges } from '../../../db/jobs/change-numbering';
import { signingKey } from '../../../db/signing-key';
import { claimDue, disableHeld, recordFailure, releaseLease, subscriptionLags, type LeasedSubscription } from '../../../db/webhooks/delivery';
import type { Logger } from '../../logger';
import { eventId as eventIdOf } from './events';
import { feedWindow } from './feed-window';
import { holdWriter } from './hold-writer';
import type { DispatcherMetrics } from './metrics';
import { deliveryAgent, deliveryTarget, postEvent } from '../post';
import { decryptSecret } from '../secrets';
import { retryDelay, spoken, type WebhookSettings } from '../settings';
import { signer } from '../signing';

/** Events read from the feed per query, and subscriptions delivered at once by one dispatcher. */
const BATCH = 50;
const CONCURRENCY = 20;
// A subscription with a long backlog gives its lease back after this long, so others get a turn.
const SLICE_MS = 5_000;

export interface DispatcherOptions {
  db: Database;
  settings: WebhookSettings & { secretsKey: Buffer };
  logger: Logger;
  metrics?: DispatcherMetrics;
  /** This dispatcher's name in leases; unique per process. */
  owner?: string;
}

export interface Dispatcher {
  owner: string;
  /** Resolves once the loop has stopped and every walk has given its lease back. */
  stop(): Promise<void>;
}

/** Delivers each leased subscription's feed entries in order, one at a time; a failure reschedules the same event (docs/decisions.md, Webhooks). */
export function startDispatcher({ db, settings, logger, metrics, owner = `${process.pid}-${randomBytes(6).toString('hex')}` }: DispatcherOptions): Dispatcher {
  const giveUpReason = `deliveries failed for ${spoken(settings.retry.giveUpAfterMs)}`;
  const agent = deliveryAgent(settings.policy);
  const walking = new Map<string, Promise<void>>();
  let stopping = false;
  let claims = 0;
  let wake: (() => void) | undefined;

  const feed = feedWindow(db, () => signingKey(db));
  const holds = holdWriter(db, settings.leaseMs);
  metrics?.watchLag(async () => ({ head: await lastSequenced(db), subscriptions: await subscriptionLags(db) }));

  async function walk(subscription: LeasedSubscription, owner: string): Promise<void> {
    const log = logger.child({ subscription: subscription.id });
    const sign = signer(subscription.secrets.map((sealed) => decryptSecret(settings.secretsKey, sealed)));
    const { id } = subscription;
    const target = deliveryTarget(subscription.url, settings.policy);
    let { attempts } = subscription;
    let position = subscription.position;
    // The lease is renewed once half of it is gone: every delivery starts with more left than its timeout.
    let leaseUntil = Date.now() + settings.leaseMs;
    let idle = false;
    const sliceEnd = Date.now() + SLICE_MS;
    const release = () => releaseLease(db, id, owner);
    for (;;) {
      if (stopping || Date.now() > sliceEnd) return release();
      const events = await feed.after(position, BATCH);
      if (events.length === 0) {
        // Caught up: the lease is kept until the slice ends, and the next tick's entries wake the walk.
        await feed.more(Math.max(0, sliceEnd - Date.now()));
        idle = true;
        continue;
      }
      for (const event of events) {
        if (stopping) return release();
        // After waiting, the lease is checked before sending: the owner may have replayed or rotated meanwhile.
        if (idle || leaseUntil - Date.now() < settings.leaseMs / 2) {
          const renewedAt = Date.now();
          if (!(await holds.write({ id, owner }))) return log.info('lease lost: the subscription changed or another dispatcher took it');
          leaseUntil = renewedAt + settings.leaseMs;
          idle = false;
        }
        const eventId = eventIdOf(event.seq);
        const started = process.hrtime.bigint();
        const outcome = await postEvent(target, sign(eventId, new Date(), event.body), event.body, { policy: settings.policy, timeoutMs: settings.timeoutMs, agent });
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        if (outcome.ok) {
          metrics?.observeDelivery('delivered', seconds);
          log.debug({ event: eventId, status: outcome.status }, 'webhook delivered');
          const writtenAt = Date.now();
          if (!(await holds.write({ id, owner, seq: event.seq }))) return log.info({ event: eventId }, 'lease lost after a delivery: the next holder may send it again');
          leaseUntil = writtenAt + settings.leaseMs;
          position = event.seq;
          attempts = 0;
          continue;
        }
        if (outcome.status === 410) {
          metrics?.observeDelivery('disabled', seconds);
          await disableHeld(db, id, owner, 'the receiver answered 410 Gone', outcome.error);
          return log.warn({ event: eventId, status: 410 }, 'webhook subscription disabled: the receiver answered 410 Gone');
        }
        metrics?.observeDelivery(outcome.refused ? 'refused' : 'failed', seconds);
        attempts += 1;
        const retryInMs = retryDelay(attempts, settings.retry);
        const result = await recordFailure(db, id, owner, { error: outcome.error, retryInMs, giveUpAfterMs: settings.retry.giveUpAfterMs, giveUpReason });
        if (result === 'disabled') log.warn({ event: eventId, error: outcome.error, attempts }, 'webhook subscription disabled: deliveries failed for the whole retry period');
        else if (result === 'lost') log.info({ event: eventId, error: outcome.error }, 'webhook delivery failed after the lease was lost: the subscription changed or another dispatcher took it');
        else log.info({ event: eventId, error: outcome.error, attempts, retryInMs }, 'webhook delivery failed; retrying later');
        return;
      }
    }
  }

  async function tick(): Promise<void> {
    // Numbers what writers committed since the last tick: the feed's positions come from here too.
    await sequencePendingChanges(db);
    const room = CONCURRENCY - walking.size;
    // Each claim holds its leases under a name of its own, so a walk under way is never handed its subscription twice.
    const holder = `${owner}/${(claims += 1)}`;
    const claimed = room > 0 ? await claimDue(db, holder, settings.leaseMs, room, [...walking.keys()]) : [];
    // Read after the claim: a new holder never sees the feed as it was before the last holder's reads.
    try {
      await feed.refresh();
    } catch (error) {
      await Promise.allSettled(claimed.map((subscription) => releaseLease(db, subscription.id, holder)));
      throw error;
    }
    for (const subscription of claimed) {
      const run = walk(subscription, holder)
        .catch((error: unknown) => {
          // The lease expires on its own; another tick (here or elsewhere) takes it up again.
          logger.error({ subscription: subscription.id, code: (error as { code?: string }).code, err: { name: (error as Error).name } }, 'webhook walk failed');
        })
        .finally(() => {
          walking.delete(subscription.id);
          wake?.();
        });
      walking.set(subscription.id, run);
    }
  }

  const loop = (async () => {
    while (!stopping) {
      try {
        await tick();
      } catch (error) {
        logger.error({ code: (error as { code?: string }).code, err: { name: (error as Error).name } }, 'webhook dispatcher tick failed');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, settings.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
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
      feed.close();
      await loop;
      await Promise.allSettled(walking.values());
      await agent.destroy(); // every walk has ended; a connect still pending is not waited for
    },
  };
}
