import { and, asc, count, eq, or, sql } from 'drizzle-orm';
import { execute, qb, select, transaction, type Database } from '../sql';
import { newestHistory } from '../jobs/change-history';
import { lastSequenced, sequencePendingChanges } from '../jobs/change-numbering';
import { uuidv7 } from '../../domain/uuid';
import { EVENT_TYPES, type EventType } from '../../domain/webhook';
import { utcNow, webhookAttempts, webhookSubscriptions as subs } from './schema';

// Subscriptions are read and written on the primary: an owner sees at once what it just changed.

/** What a subscription's owner (and an operator) may see of it: never a secret, never the lease. */
export const subscriptionColumns = {
  id: subs.id,
  consumerId: subs.consumerId,
  consumerName: subs.consumerName,
  url: subs.url,
  description: subs.description,
  status: subs.status,
  eventTypes: subs.eventTypes,
  position: subs.position,
  disabledReason: subs.disabledReason,
  lastError: subs.lastError,
  failingSince: subs.failingSince,
  nextAttemptAt: subs.nextAttemptAt,
  lastDeliveredAt: subs.lastDeliveredAt,
  createdAt: subs.createdAt,
};
export type SubscriptionView = { [K in keyof typeof subscriptionColumns]: (typeof subs.$inferSelect)[K] };

/** The stored form of a choice of event types: a comma list in EVENT_TYPES' order, null for all of them. */
export const storedEventTypes = (types: readonly EventType[] | null): string | null =>
  types === null || EVENT_TYPES.every((type) => types.includes(type))
    ? null
    : EVENT_TYPES.filter((type) => types.includes(type)).join(',');
export const eventTypesOf = (stored: string | null): EventType[] | null =>
  stored === null ? null : (stored.split(',') as EventType[]);

export interface NewSubscription {
  consumerId: string;
  consumerName?: string | null;
  url: string;
  description: string | null;
  /** storedEventTypes' form: null for every type. */
  eventTypes?: string | null;
  /** The encrypted secret (service/webhooks/secrets.ts). */
  secret: Buffer;
  /** Feed position to deliver after; absent: the feed's head now. */
  position?: number;
}

/** Why a create or replay was not done: nothing was stored. */
export type Refusal = 'limit' | 'ahead';

const ownedBy = (consumerId: string, id: string) => and(eq(subs.id, id), eq(subs.consumerId, consumerId));

/** The feed's head after numbering what is committed: where a new subscription starts, and the furthest a replay may start. */
async function feedHead(db: Database): Promise<number> {
  while (await sequencePendingChanges(db));
  return lastSequenced(db);
}

/** Stores a subscription unless its consumer holds `limit`, counted under lock so concurrent creates cannot both pass. */
export async function createSubscription(
  database: Database,
  input: NewSubscription,
  limit: number,
): Promise<SubscriptionView | Refusal> {
  const head = await feedHead(database);
  if (input.position !== undefined && input.position > head) return 'ahead';
  return transaction(database, async (tx) => {
    const [held] = await select(tx, { n: count() }, (query) =>
      query.from(subs).where(eq(subs.consumerId, input.consumerId)).for('update'),
    );
    if ((held?.n ?? 0) >= limit) return 'limit' as const;
    const id = uuidv7();
    await execute(
      tx,
      qb.insert(subs).values({
        id,
        consumerId: input.consumerId,
        consumerName: input.consumerName ?? null,
        url: input.url,
        description: input.description,
        eventTypes: input.eventTypes ?? null,
        secret: input.secret,
        position: input.position ?? head,
        // Made in the newest history: only a restore after this is told to it.
        history: await newestHistory(tx),
        nextAttemptAt: sql`${utcNow}`,
        createdAt: sql`${utcNow}`,
      }),
    );
    const [row] = await select(tx, subscriptionColumns, (query) => query.from(subs).where(eq(subs.id, id)));
    return row!;
  });
}

export async function listSubscriptions(database: Database, consumerId: string): Promise<SubscriptionView[]> {
  return select(database, subscriptionColumns, (query) =>
    query.from(subs).where(eq(subs.consumerId, consumerId)).orderBy(asc(subs.createdAt), asc(subs.id)),
  );
}

/** The subscription when `consumerId` owns it; another consumer's is not found, exactly like an unknown id. */
export async function findSubscription(
  database: Database,
  consumerId: string,
  id: string,
): Promise<SubscriptionView | undefined> {
  const [row] = await select(database, subscriptionColumns, (query) => query.from(subs).where(ownedBy(consumerId, id)));
  return row;
}

/** Removes the subscription and the attempts kept for it: a dispatcher's walk finds no row to write. */
export async function deleteSubscription(database: Database, consumerId: string, id: string): Promise<boolean> {
  return transaction(database, async (tx) => {
    const result = await execute(tx, qb.delete(subs).where(ownedBy(consumerId, id)));
    if (result.affectedRows !== 1) return false;
    await execute(tx, qb.delete(webhookAttempts).where(eq(webhookAttempts.subscriptionId, id)));
    return true;
  });
}

// Every owner's or operator's change fences off a dispatcher mid-walk: the generation is raised and the
// lease cleared, so its next write matches no row; the next claim starts from what was just set.
const fence = { leaseOwner: null, leaseExpiresAt: null, leaseGeneration: sql`${subs.leaseGeneration} + 1` } as const;
const freshStart = { attempts: 0, failingSince: null, nextAttemptAt: sql`${utcNow}` } as const;

export interface SubscriptionChanges {
  url?: string;
  description?: string | null;
  /** storedEventTypes' form. */
  eventTypes?: string | null;
}

/** The owner's choices changed; the position, secrets and delivery state stay. */
export async function updateSubscription(
  database: Database,
  consumerId: string,
  id: string,
  changes: SubscriptionChanges,
): Promise<SubscriptionView | undefined> {
  const result = await execute(
    database,
    qb
      .update(subs)
      .set({ ...changes, ...fence })
      .where(ownedBy(consumerId, id)),
  );
  return result.affectedRows === 1 ? findSubscription(database, consumerId, id) : undefined;
}

const stillValid = (column: typeof subs.previousSecretExpiresAt) => sql<number>`coalesce(${column} > ${utcNow}, 0)`;
// The database's time as the driver's text, read as a DATETIME column reads it.
const databaseNow = sql<string>`${utcNow}`;
const asDate = (text: string) => subs.createdAt.mapFromDriverValue(text) as Date;

/** A rotation done, with until when the replaced secrets sign; or refused until the older one expires. */
export type Rotation = { previousExpiresAt: Date; olderExpiresAt: Date | null } | { refusedUntil: Date };

/** A rotation asked for: the new secret (sealed), how long the current one goes on signing, and whether to drop the replaced ones now. */
export interface RotateSecret {
  secret: Buffer;
  overlapMs: number;
  expirePrevious?: boolean;
}

/**
 * The new secret signs from now on; the current one goes on signing beside it for `overlapMs`, and the
 * previous one, if still valid, until its own expiry. A still valid third one would be dropped: refused.
 * `expirePrevious` drops every replaced secret now.
 */
export async function rotateSecret(
  database: Database,
  consumerId: string,
  id: string,
  { secret, overlapMs, expirePrevious = false }: RotateSecret,
): Promise<Rotation | undefined> {
  // Read under lock and written back as values: drizzle orders SET by column, so `previous_secret = secret` would see the new one.
  return transaction(database, async (tx) => {
    const [row] = await select(
      tx,
      {
        secret: subs.secret,
        previous: subs.previousSecret,
        previousExpiresAt: subs.previousSecretExpiresAt,
        previousValid: stillValid(subs.previousSecretExpiresAt),
        olderExpiresAt: subs.olderSecretExpiresAt,
        olderValid: stillValid(subs.olderSecretExpiresAt),
        now: databaseNow,
      },
      (query) => query.from(subs).where(ownedBy(consumerId, id)).for('update'),
    );
    if (!row) return undefined;
    if (!expirePrevious && row.olderValid === 1) return { refusedUntil: row.olderExpiresAt! };
    const keepPrevious = !expirePrevious && row.previousValid === 1 && row.previous !== null;
    const now = asDate(row.now);
    const rotation = {
      previousExpiresAt: expirePrevious ? now : new Date(now.getTime() + overlapMs),
      olderExpiresAt: keepPrevious ? row.previousExpiresAt : null,
    };
    await execute(
      tx,
      qb
        .update(subs)
        .set({
          secret,
          previousSecret: expirePrevious ? null : row.secret,
          previousSecretExpiresAt: expirePrevious ? null : rotation.previousExpiresAt,
          olderSecret: keepPrevious ? row.previous : null,
          olderSecretExpiresAt: rotation.olderExpiresAt,
          ...fence,
        })
        .where(eq(subs.id, id)),
    );
    return rotation;
  });
}

/** What sending a test event needs: the URL, whether it is active, every secret still signing (sealed) and the database's time. */
export interface TestTarget {
  url: string;
  status: SubscriptionView['status'];
  secrets: Buffer[];
  now: Date;
}

export async function testTarget(database: Database, consumerId: string, id: string): Promise<TestTarget | undefined> {
  const [row] = await select(
    database,
    {
      url: subs.url,
      status: subs.status,
      secret: subs.secret,
      previous: subs.previousSecret,
      previousValid: stillValid(subs.previousSecretExpiresAt),
      older: subs.olderSecret,
      olderValid: stillValid(subs.olderSecretExpiresAt),
      now: databaseNow,
    },
    (query) => query.from(subs).where(ownedBy(consumerId, id)),
  );
  if (!row) return undefined;
  const secrets = [
    row.secret,
    ...(row.previousValid === 1 && row.previous ? [row.previous] : []),
    ...(row.olderValid === 1 && row.older ? [row.older] : []),
  ];
  return { url: row.url, status: row.status, secrets, now: asDate(row.now) };
}

/** Delivers again from after `position`; refused when the position is past the feed's head. */
export async function replayFrom(
  database: Database,
  consumerId: string,
  id: string,
  position: number,
): Promise<SubscriptionView | Refusal | undefined> {
  if (position > (await feedHead(database))) return 'ahead';
  const result = await execute(
    database,
    qb
      .update(subs)
      .set({ position, ...freshStart, lastError: null, ...fence })
      .where(ownedBy(consumerId, id)),
  );
  return result.affectedRows === 1 ? findSubscription(database, consumerId, id) : undefined;
}

/** Active again, retrying the event it failed on at once. */
export async function enableSubscription(
  database: Database,
  consumerId: string,
  id: string,
): Promise<SubscriptionView | undefined> {
  const result = await execute(
    database,
    qb
      .update(subs)
      .set({ status: 'active', disabledReason: null, ...freshStart, ...fence })
      .where(ownedBy(consumerId, id)),
  );
  return result.affectedRows === 1 ? findSubscription(database, consumerId, id) : undefined;
}

/** Operators: a partner's subscriptions, by its consumer id or username. */
export async function subscriptionsOf(database: Database, partner: string): Promise<SubscriptionView[]> {
  return select(database, subscriptionColumns, (query) =>
    query
      .from(subs)
      .where(or(eq(subs.consumerId, partner), eq(subs.consumerName, partner)))
      .orderBy(asc(subs.createdAt), asc(subs.id)),
  );
}

/** Operators: stops deliveries to one subscription until its owner enables it again. */
export async function disableSubscription(database: Database, id: string, reason: string): Promise<boolean> {
  const result = await execute(
    database,
    qb
      .update(subs)
      .set({ status: 'disabled', disabledReason: reason, ...fence })
      .where(eq(subs.id, id)),
  );
  return result.affectedRows === 1;
}
