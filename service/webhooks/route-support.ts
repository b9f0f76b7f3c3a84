import type { Database } from '../../db/client';
import { readLineage } from '../../db/jobs/change-history';
import { signingKey } from '../../db/signing-key';
import type { AttemptView } from '../../db/webhooks/attempts';
import { eventTypesOf, type SubscriptionView } from '../../db/webhooks/subscriptions';
import { historyOf, holds } from '../../domain/feed';
import { badRequest, MESSAGES, webhookNotFound, webhooksUnavailable } from '../errors';
import { decodeSince, encodeSince } from '../http/tokens';
import type { Attempt, Webhook } from './contract';
import type { Keyring } from './secrets';
import { keyringOf } from './settings';
import type { WebhookSettings } from '../config';
import { checkUrl, UrlRefused, type UrlPolicy } from './url-guard';

/** Feed positions as partners hold them: tokens naming the history each number belongs to. */
export interface Positions {
  token(seq: number): string;
  /** The number of a partner's token: one this API signed, on the feed's lineage, or a 400 saying what to send. */
  seq(token: string): number;
}

export async function feedPositions(db: Database): Promise<Positions> {
  const [key, lineage] = await Promise.all([signingKey(db), readLineage(db)]);
  return {
    token: (seq) => encodeSince(key, { history: historyOf(lineage, seq).id, seq }),
    seq(token) {
      let position;
      try {
        position = decodeSince(key, token);
      } catch {
        throw badRequest(MESSAGES.positionInvalid);
      }
      if (!holds(lineage, position)) throw badRequest(MESSAGES.positionRewritten);
      return position.seq;
    },
  };
}

/** A subscription as its owner sees it: the position as a feed token, never the secret or the lease. */
export function toWebhook(positions: Positions, row: SubscriptionView): Webhook {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    status: row.status,
    eventTypes: eventTypesOf(row.eventTypes),
    position: positions.token(row.position),
    createdAt: row.createdAt.toISOString(),
    lastDeliveredAt: row.lastDeliveredAt?.toISOString() ?? null,
    failingSince: row.failingSince?.toISOString() ?? null,
    nextAttemptAt:
      row.status === 'active' && row.failingSince !== null ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    disabledReason: row.disabledReason,
    lastError: row.lastError,
  };
}

/** An attempt as its owner reads it: the position as a feed token (none for a test event). */
export function toAttempt(positions: Positions, row: AttemptView): Attempt {
  return {
    ...row,
    position: row.position === null ? null : positions.token(row.position),
    attemptedAt: row.attemptedAt.toISOString(),
  };
}

/** A partner's URL checked as at create, or a 400 with the guard's message (which names nothing of our network). */
export async function checkedUrl(raw: string, policy: UrlPolicy): Promise<void> {
  try {
    await checkUrl(raw, policy);
  } catch (error) {
    if (error instanceof UrlRefused) throw badRequest(error.message);
    throw error;
  }
}

/** The keyring secrets are sealed and opened with; without a key the server stores no secret, so it answers 503. */
export function secretsKeyring(settings: WebhookSettings): Keyring {
  if (!settings.secretsKey) throw webhooksUnavailable();
  return keyringOf({ ...settings, secretsKey: settings.secretsKey });
}

/** The answer for one of the caller's subscriptions, or the 404 an unknown or another's id gets. */
export async function webhookAnswer(db: Database, row: SubscriptionView | undefined): Promise<{ data: Webhook }> {
  if (!row) throw webhookNotFound();
  return { data: toWebhook(await feedPositions(db), row) };
}
