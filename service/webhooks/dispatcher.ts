import { randomBytes } from 'node:crypto';
import type { Database } from '../../db/client';
import { readChangeEvents } from '../../db/jobs/change-feed';
import { lastSequenced, sequencePendingChanges } from '../../db/jobs/change-numbering';
import { signingKey } from '../../db/signing-key';
import { claimDue, disableHeld, recordDelivered, recordFailure, releaseLease, renewLease, subscriptionLags, type LeasedSubscription } from '../../db/webhooks/delivery';
import type { Logger } from '../logger';
import { eventBody, eventId } from './events';
import type { DispatcherMetrics } from './metrics';
import { keepAliveAgents, postEvent } from './post';
import { decryptSecret } from './secrets';
import { retryDelay, type WebhookSettings } from './settings';
import { signDelivery } from './signing';

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
  const agents = keepAliveAgents();
  const walking = new Map<string, Promise<void>>();
  let stopping = false;
  let claims = 0;
  let wake: (() => void) | undefined;

  metrics?.watchLag(async () => ({ head: await lastSequenced(db), subscriptions: await subscriptionLags(db) }));

  async function walk(subscription: LeasedSubscription, owner: string, tokenKey: Buffer): Promise<void> {
    const log = logger.child({ subscription: subscription.id });
    const secrets = subscription.secrets.map((sealed) => decryptSecret(settings.secretsKey, sealed));
    let { position, attempts } = subscription;
    // The lease is renewed once half of it is gone: every delivery starts with more left than its timeout.
    let leaseUntil = Date.now() + settings.leaseMs;
    const sliceEnd = Date.now() + SLICE_MS;
    for (;;) {
      const events = await readChangeEvents(db, position, BATCH);
      if (events.length === 0 || stopping || Date.now() > sliceEnd) return releaseLease(db, subscription.id, owner);
      for (const event of events) {
        if (stopping) return releaseLease(db, subscription.id, owner);
        if (leaseUntil - Date.now() < settings.leaseMs / 2) {
          const renewedAt = Date.now();
          if (!(await renewLease(db, subscription.id, owner, settings.leaseMs))) return log.info('lease lost: the subscription changed or another dispatcher took it');
          leaseUntil = renewedAt + settings.leaseMs;
        }
        const id = eventId(event.seq);
        const body = eventBody(tokenKey, event);
        const started = process.hrtime.bigint();
        const outcome = await postEvent(subscription.url, { ...signDelivery(secrets, id, new Date(), body) }, body, { policy: settings.policy, timeoutMs: settings.timeoutMs, agents });
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        if (outcome.ok) {
          metrics?.observeDelivery('delivered', seconds);
          log.debug({ event: id, status: outcome.status }, 'webhook delivered');
          if (!(await recordDelivered(db, subscription.id, owner, event.seq))) return log.info({ event: id }, 'lease lost after a delivery: the next holder may send it again');
          position = event.seq;
          attempts = 0;
          continue;
        }
        if (outcome.status === 410) {
          metrics?.observeDelivery('disabled', seconds);
          await disableHeld(db, subscription.id, owner, 'the receiver answered 410 Gone', outcome.error);
          return log.warn({ event: id, status: 410 }, 'webhook subscription disabled: the receiver answered 410 Gone');
        }
        metrics?.observeDelivery(outcome.refused ? 'refused' : 'failed', seconds);
        attempts += 1;
        const retryInMs = retryDelay(attempts, settings.retry);
        const result = await recordFailure(db, subscription.id, owner, { error: outcome.error, retryInMs, giveUpAfterMs: settings.retry.giveUpAfterMs });
        if (result === 'disabled') log.warn({ event: id, error: outcome.error, attempts }, 'webhook subscription disabled: deliveries failed for the whole retry period');
        else log.info({ event: id, error: outcome.error, attempts, retryInMs }, 'webhook delivery failed; retrying later');
        return;
      }
    }
  }

  async function tick(): Promise<void> {
    // Numbers what writers committed since the last tick: the feed's positions come from here too.
    await sequencePendingChanges(db);
    const room = CONCURRENCY - walking.size;
    if (room <= 0) return;
    // Each claim holds its leases under a name of its own, so a walk under way is never handed its subscription twice.
    const holder = `${owner}/${(claims += 1)}`;
    const claimed = await claimDue(db, holder, settings.leaseMs, room);
    if (claimed.length === 0) return;
    const tokenKey = await signingKey(db);
    for (const subscription of claimed) {
      const run = walk(subscription, holder, tokenKey)
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
      await loop;
      await Promise.allSettled(walking.values());
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
