import { sql } from 'drizzle-orm';
import { bigint, char, customType, index, int, mysqlEnum, mysqlTable, smallint, varchar } from 'drizzle-orm/mysql-core';
import { SUBSCRIPTION_STATUSES } from '../../domain/webhook';
import { timestamp, uuidBinary } from '../schema';

/** An encrypted secret: iv, tag and ciphertext, as bytes. */
const sealed = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'varbinary(128)' });

/** A partner's subscription and its delivery state: position, failing attempts, lease; secrets sealed (docs/decisions.md, Webhooks). */
export const webhookSubscriptions = mysqlTable(
  'webhook_subscriptions',
  {
    id: uuidBinary('id').primaryKey(),
    consumerId: varchar('consumer_id', { length: 64 }).notNull(),
    // The consumer's username when it subscribed: how operators name partners (npm run webhooks).
    consumerName: varchar('consumer_name', { length: 200 }),
    url: varchar('url', { length: 2048 }).notNull(),
    description: varchar('description', { length: 500 }),
    status: mysqlEnum('status', SUBSCRIPTION_STATUSES).notNull().default('active'),
    disabledReason: varchar('disabled_reason', { length: 200 }),
    lastError: varchar('last_error', { length: 500 }),
    // The event types delivered, a comma list of EVENT_TYPES; null: every type.
    eventTypes: varchar('event_types', { length: 200 }),
    // AES-256-GCM of the signing secret; up to two replaced ones keep signing until their expiry.
    secret: sealed('secret').notNull(),
    previousSecret: sealed('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at'),
    olderSecret: sealed('older_secret'),
    olderSecretExpiresAt: timestamp('older_secret_expires_at'),
    // The newest feed history it was told of (feed.restored) or made in; null (made by an older release): told of the newest.
    history: char('history', { length: 16 }),
    // The feed position (job_changes.seq) of the last event delivered: delivery resumes after it.
    position: bigint('position', { mode: 'number', unsigned: true }).notNull(),
    // Failed attempts at the event after `position`, and since when it has been failing.
    attempts: int('attempts', { unsigned: true }).notNull().default(0),
    failingSince: timestamp('failing_since'),
    nextAttemptAt: timestamp('next_attempt_at').notNull(),
    lastDeliveredAt: timestamp('last_delivered_at'),
    // The dispatcher delivering it, until the lease expires (db/webhooks/delivery.ts).
    leaseOwner: varchar('lease_owner', { length: 64 }),
    leaseExpiresAt: timestamp('lease_expires_at'),
    // The fencing token: raised by every claim and every owner's change; a write carrying an older one is refused.
    leaseGeneration: bigint('lease_generation', { mode: 'number', unsigned: true }).notNull().default(0),
    // When a dispatcher last took it up: claims go to the one served least recently.
    lastServedAt: timestamp('last_served_at'),
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [
    // A consumer's list, oldest first; and its count under the per-consumer limit.
    index('webhook_subscriptions_consumer_idx').on(t.consumerId, t.createdAt),
    // The dispatchers' claim: active subscriptions that are due, least recently served first.
    index('webhook_subscriptions_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_subscriptions_served_idx').on(t.status, t.lastServedAt),
    index('webhook_subscriptions_consumer_name_idx').on(t.consumerName),
  ],
);

/** Each delivery attempt, the last ones kept per subscription for its owner to read (never the receiver's answer body). */
export const webhookAttempts = mysqlTable(
  'webhook_attempts',
  {
    id: bigint('id', { mode: 'number', unsigned: true }).autoincrement().primaryKey(),
    subscriptionId: uuidBinary('subscription_id').notNull(),
    // evt_<seq> for a feed event, a test event's own id for one sent on demand.
    eventId: varchar('event_id', { length: 64 }).notNull(),
    // The event's feed position; null for a test event, which is outside the order.
    position: bigint('position', { mode: 'number', unsigned: true }),
    attemptedAt: timestamp('attempted_at').notNull(),
    // The receiver's HTTP status, or null when none came back.
    status: smallint('status', { unsigned: true }),
    // The fixed vocabulary of failures (timeout, connection failed, TLS failed, HTTP <status>, answer too large); null on a 2xx.
    error: varchar('error', { length: 40 }),
    latencyMs: int('latency_ms', { unsigned: true }).notNull(),
  },
  (t) => [index('webhook_attempts_subscription_idx').on(t.subscriptionId, t.id)],
);

/** The database's clock in UTC, shared by every dispatcher (leases and schedules never use a node's clock). */
export const utcNow = sql`utc_timestamp(3)`;

/** When the dispatchers first told of each new feed history (feed.restored): the event's timestamp, the same on every retry. */
export const webhookRestores = mysqlTable('webhook_restores', {
  history: char('history', { length: 16 }).primaryKey(),
  toldAt: timestamp('told_at').notNull(),
});
