import { and, eq, lte, sql } from 'drizzle-orm';
import type { Database } from '../db/client';
import { idempotencyKeys } from '../db/schema';

/** How long a key is remembered (Stripe's "at least 24 hours"). */
export const KEY_RETENTION_HOURS = 24;

export interface StoredResponse {
  status: number;
  location: string | null;
  body: string;
}

export interface KeyRecord {
  requestHash: string;
  /** False once the retention period is over: the key may then be used afresh. */
  live: boolean;
  /** Null only for a row that is not committed yet, which other sessions never see. */
  response: StoredResponse | null;
}

const now = sql`utc_timestamp(3)`;

/** A consumer's record of a key, as committed. */
export async function findKey(db: Database, consumerId: string, key: string): Promise<KeyRecord | undefined> {
  const [row] = await db
    .select({
      requestHash: idempotencyKeys.requestHash,
      live: sql<number>`${idempotencyKeys.expiresAt} > ${now}`.mapWith(Number),
      status: idempotencyKeys.responseStatus,
      location: idempotencyKeys.responseLocation,
      body: idempotencyKeys.responseBody,
    })
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.consumerId, consumerId), eq(idempotencyKeys.idempotencyKey, key)));
  if (!row) return undefined;
  return {
    requestHash: row.requestHash,
    live: row.live === 1,
    response: row.status === null || row.body === null ? null : { status: row.status, location: row.location, body: row.body },
  };
}

/**
 * Claims a key inside the caller's transaction. The primary key makes a second claim of the same
 * key wait for the first transaction: it then fails with ER_DUP_ENTRY if that one committed, or
 * succeeds if it rolled back.
 */
export async function claimKey(tx: Database, consumerId: string, key: string, requestHash: string): Promise<void> {
  await tx.insert(idempotencyKeys).values({
    consumerId,
    idempotencyKey: key,
    requestHash,
    createdAt: now,
    expiresAt: sql`${now} + interval ${sql.raw(String(KEY_RETENTION_HOURS))} hour`,
  });
}

/** Stores the response in the claim, in the transaction that also stored the job. */
export async function recordResponse(tx: Database, consumerId: string, key: string, response: StoredResponse): Promise<void> {
  await tx
    .update(idempotencyKeys)
    .set({ responseStatus: response.status, responseLocation: response.location, responseBody: response.body })
    .where(and(eq(idempotencyKeys.consumerId, consumerId), eq(idempotencyKeys.idempotencyKey, key)));
}

/** Forgets one consumer's key whose retention is over, so it can be claimed again. */
export async function forgetExpiredKey(db: Database, consumerId: string, key: string): Promise<void> {
  await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.consumerId, consumerId), eq(idempotencyKeys.idempotencyKey, key), lte(idempotencyKeys.expiresAt, now)));
}

/**
 * Deletes up to `batch` expired keys, oldest first (by the expires_at index). Run after each keyed
 * create, so the table is cleaned at least as fast as keys arrive, without a timer to manage.
 */
export async function deleteExpiredKeys(db: Database, batch = 100): Promise<void> {
  await db.execute(sql`delete from ${idempotencyKeys} where ${idempotencyKeys.expiresAt} <= ${now} order by ${idempotencyKeys.expiresAt} limit ${sql.raw(String(batch))}`);
}
