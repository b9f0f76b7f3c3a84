import { and, asc, count, eq, or, sql } from 'drizzle-orm';
import type { Database } from '../client';
import { errorCode } from '../errors';
import { primaryOf } from '../sql';
import { lastSequenced, sequencePendingChanges } from '../jobs/change-numbering';
import { uuidv7 } from '../../domain/uuid';
import { utcNow, webhookSubscriptions as subs } from './schema';

// Subscriptions are read and written on the primary: an owner sees at once what it just changed.

/** What a subscription's owner (and an operator) may see of it: never a secret, never the lease. */
export const subscriptionColumns = {
  id: subs.id,
  consumerId: subs.consumerId,
  consumerName: subs.consumerName,
  url: subs.url,
  description: subs.description,
  status: subs.status,
  position: subs.position,
  disabledReason: subs.disabledReason,
  lastError: subs.lastError,
  failingSince: subs.failingSince,
  nextAttemptAt: subs.nextAttemptAt,
  lastDeliveredAt: subs.lastDeliveredAt,
  createdAt: subs.createdAt,
};
export type SubscriptionView = { [K in keyof typeof subscriptionColumns]: (typeof subs.$inferSelect)[K] };

export interface NewSubscription {
  consumerId: string;
  consumerName?: string | null;
  url: string;
  description: string | null;
  /** The encrypted secret (service/webhooks/secrets.ts). */
  secret: Buffer;
  /** Feed position to deliver after; absent: the feed's head now. */
  position?: number;
}

/** Why a create or replay was not done: nothing was stored. */
export type Refusal = 'limit' | 'ahead';

const ownedBy = (consumerId: string, id: string) => and(eq(subs.id, id), eq(subs.consumerId, consumerId));

/** One retry when two creates of one consumer deadlock on the limit's lock (the loser is rolled back whole). */
async function retryDeadlock<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (errorCode(error) !== 'ER_LOCK_DEADLOCK') throw error;
    return work();
  }
}

/** The feed's head after numbering what is committed: where a new subscription starts, and the furthest a replay may start. */
async function feedHead(db: Database): Promise<number> {
  while (await sequencePendingChanges(db));
  return lastSequenced(db);
}

/** Stores a subscription unless its consumer holds `limit`, counted under lock so concurrent creates cannot both pass. */
export async function createSubscription(database: Database, input: NewSubscription, limit: number): Promise<SubscriptionView | Refusal> {
  const db = primaryOf(database);
  const head = await feedHead(db);
  if (input.position !== undefined && input.position > head) return 'ahead';
  return retryDeadlock(() =>
    db.transaction(async (tx) => {
      const [held] = await tx.select({ n: count() }).from(subs).where(eq(subs.consumerId, input.consumerId)).for('update');
      if ((held?.n ?? 0) >= limit) return 'limit' as const;
      const id = uuidv7();
      await tx.insert(subs).values({
        id,
        consumerId: input.consumerId,
        consumerName: input.consumerName ?? null,
        url: input.url,
        description: input.description,
        secret: input.secret,
        position: input.position ?? head,
        nextAttemptAt: sql`${utcNow}`,
        createdAt: sql`${utcNow}`,
      });
      const [row] = await tx.select(subscriptionColumns).from(subs).where(eq(subs.id, id));
      return row!;
    }),
  );
}

export async function listSubscriptions(database: Database, consumerId: string): Promise<SubscriptionView[]> {
  const db = primaryOf(database);
  return db.select(subscriptionColumns).from(subs).where(eq(subs.consumerId, consumerId)).orderBy(asc(subs.createdAt), asc(subs.id));
}

/** The subscription when `consumerId` owns it; another consumer's is not found, exactly like an unknown id. */
export async function findSubscription(database: Database, consumerId: string, id: string): Promise<SubscriptionView | undefined> {
  const db = primaryOf(database);
  const [row] = await db.select(subscriptionColumns).from(subs).where(ownedBy(consumerId, id));
  return row;
}

export async function deleteSubscription(database: Database, consumerId: string, id: string): Promise<boolean> {
  const db = primaryOf(database);
  const [result] = await db.delete(subs).where(ownedBy(consumerId, id));
  return result.affectedRows === 1;
}

// Clearing the lease fences off a dispatcher mid-walk: its next write for the lease matches no row, so it
// stops and the next claim starts over from what was just set (position, secrets, status).
const releaseLease = { leaseOwner: null, leaseExpiresAt: null } as const;
const freshStart = { attempts: 0, failingSince: null, nextAttemptAt: sql`${utcNow}` } as const;

/** The new secret signs from now on; the current one goes on signing beside it for `overlapMs`. */
export async function rotateSecret(database: Database, consumerId: string, id: string, secret: Buffer, overlapMs: number): Promise<boolean> {
  const db = primaryOf(database);
  // Read under lock and written back in two values: drizzle orders SET by column, so `previous_secret = secret` would see the new one.
  return db.transaction(async (tx) => {
    const [current] = await tx.select({ secret: subs.secret }).from(subs).where(ownedBy(consumerId, id)).for('update');
    if (!current) return false;
    await tx
      .update(subs)
      .set({ secret, previousSecret: current.secret, previousSecretExpiresAt: sql`${utcNow} + interval ${overlapMs * 1000} microsecond`, ...releaseLease })
      .where(eq(subs.id, id));
    return true;
  });
}

/** Delivers again from after `position`; refused when the position is past the feed's head. */
export async function replayFrom(database: Database, consumerId: string, id: string, position: number): Promise<SubscriptionView | Refusal | undefined> {
  const db = primaryOf(database);
  if (position > (await feedHead(db))) return 'ahead';
  const [result] = await db.update(subs).set({ position, ...freshStart, lastError: null, ...releaseLease }).where(ownedBy(consumerId, id));
  return result.affectedRows === 1 ? findSubscription(db, consumerId, id) : undefined;
}

/** Active again, retrying the event it failed on at once. */
export async function enableSubscription(database: Database, consumerId: string, id: string): Promise<SubscriptionView | undefined> {
  const db = primaryOf(database);
  const [result] = await db
    .update(subs)
    .set({ status: 'active', disabledReason: null, ...freshStart, ...releaseLease })
    .where(ownedBy(consumerId, id));
  return result.affectedRows === 1 ? findSubscription(db, consumerId, id) : undefined;
}

/** Operators: a partner's subscriptions, by its consumer id or username. */
export async function subscriptionsOf(database: Database, partner: string): Promise<SubscriptionView[]> {
  const db = primaryOf(database);
  return db
    .select(subscriptionColumns)
    .from(subs)
    .where(or(eq(subs.consumerId, partner), eq(subs.consumerName, partner)))
    .orderBy(asc(subs.createdAt), asc(subs.id));
}

/** Operators: stops deliveries to one subscription until its owner enables it again. */
export async function disableSubscription(database: Database, id: string, reason: string): Promise<boolean> {
  const db = primaryOf(database);
  const [result] = await db.update(subs).set({ status: 'disabled', disabledReason: reason, ...releaseLease }).where(eq(subs.id, id));
  return result.affectedRows === 1;
}
