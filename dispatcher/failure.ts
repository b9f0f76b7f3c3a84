import type { AttemptRecord } from '../db/webhooks/attempts';
import { disableHeld, recordFailure } from '../db/webhooks/delivery';
import type { PostOutcome } from '../service/webhooks/post';
import { retryDelay } from '../service/webhooks/settings';
import { giveUpReason, type Run, type Walk } from './run';

/** A delivery that failed: the walk it ended, the event, the answer and its attempt. */
export interface Failed {
  walk: Walk;
  eventId: string;
  outcome: Extract<PostOutcome, { ok: false }>;
  attempt: AttemptRecord;
}

const LOST_AFTER =
  'webhook delivery failed after the lease was lost: the subscription changed or another dispatcher took it';

/**
 * A 410 disables the subscription; any other failure reschedules the same event. One line and one count
 * when a subscription starts failing or is disabled; its later failures are debug lines.
 */
export async function failed(run: Run, failure: Failed): Promise<void> {
  const unwritten = run.writer.take(failure.walk.lease).attempts;
  const attempts = [...unwritten, failure.attempt];
  if (failure.outcome.status === 410) return gone(run, failure, attempts);
  return retryLater(run, failure, attempts);
}

async function gone(run: Run, { walk, eventId, outcome, attempt }: Failed, attempts: AttemptRecord[]): Promise<void> {
  const fields = { event: eventId, error: outcome.error, detail: outcome.detail };
  run.metrics?.observeDelivery('disabled', attempt.latencyMs / 1000);
  const reason = 'the receiver answered 410 Gone';
  if (
    !(await disableHeld(
      run.db,
      walk.lease,
      { position: walk.position, history: walk.history, reason, error: outcome.error },
      attempts,
    ))
  )
    return walk.log.info(fields, LOST_AFTER);
  run.metrics?.subscriptionChanged('disabled');
  walk.log.warn(fields, 'webhook subscription disabled: the receiver answered 410 Gone');
}

async function retryLater(
  run: Run,
  { walk, eventId, outcome, attempt }: Failed,
  attempts: AttemptRecord[],
): Promise<void> {
  const { retry } = run.settings;
  const fields = { event: eventId, error: outcome.error, detail: outcome.detail };
  run.metrics?.observeDelivery(outcome.refused ? 'refused' : 'failed', attempt.latencyMs / 1000);
  // The receiver's Retry-After, within the schedule's longest wait.
  const retryInMs =
    outcome.retryAfterMs !== undefined
      ? Math.min(outcome.retryAfterMs, retry.maxMs)
      : retryDelay(walk.attempts + 1, retry);
  const result = await recordFailure(
    run.db,
    walk.lease,
    {
      position: walk.position,
      history: walk.history,
      error: outcome.error,
      retryInMs,
      giveUpAfterMs: retry.giveUpAfterMs,
      giveUpReason: giveUpReason(run.settings),
    },
    attempts,
  );
  if (result === 'lost') return walk.log.info(fields, LOST_AFTER);
  if (result === 'disabled') {
    run.metrics?.subscriptionChanged('disabled');
    return walk.log.warn(
      { ...fields, attempts: walk.attempts + 1 },
      'webhook subscription disabled: deliveries failed for the whole retry period',
    );
  }
  if (walk.failedBefore)
    return walk.log.debug(
      { ...fields, attempts: walk.attempts + 1, retryInMs },
      'webhook delivery failed again; retrying later',
    );
  run.metrics?.subscriptionChanged('failing');
  walk.log.warn({ ...fields, retryInMs }, 'webhook subscription failing: webhook delivery failed; retrying later');
}
