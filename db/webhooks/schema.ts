import { sql } from 'drizzle-orm';
import { bigint, customType, index, int, mysqlEnum, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { timestamp, uuidBinary } from '../schema';

/** A subscription is delivering, or was disabled for failing (or by an operator) until enabled again. */
export const SUBSCRIPTION_STATUSES = ['active', 'disabled'] as const;

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
    // AES-256-GCM of the signing secret; the previous one keeps signing until previous_secret_expires_at.
    secret: sealed('secret').notNull(),
    previousSecret: sealed('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at'),
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
    createdAt: timestamp('created_at').notNull(),
  },
  (t) => [
    // A consumer's list, oldest first; and its count under the per-consumer limit.
    index('webhook_subscriptions_consumer_idx').on(t.consumerId, t.createdAt),
    // The dispatchers' claim: active subscriptions that are due.
    index('webhook_subscriptions_due_idx').on(t.status, t.nextAttemptAt),
    index('webhook_subscriptions_consumer_name_idx').on(t.consumerName),
  ],
);

/** The database's clock in UTC, shared by every dispatcher (leases and schedules never use a node's clock). */
export const utcNow = sql`utc_timestamp(3)`;
