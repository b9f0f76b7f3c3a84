import { and, eq, lte, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/mysql2';
import type { Pool, PoolConnection } from 'mysql2/promise';
import type { Database } from '../client';
import { errorCode } from '../errors';
import * as schema from '../schema';
import { idempotencyKeys } from '../schema';
import { primaryOf } from '../sql';

/** How long a key is remembered (Stripe's "at least 24 hours"). */
export const KEY_RETENTION_HOURS = 24;

export interface StoredResponse {
  status: number;
  location: string | null;
  body: string;
}

interface KeyRecord {
  requestHash: string;
  /** False once the retention period is over: the key may then be used afresh. */
  live: boolean;
  /** Null only for a row that is not committed yet, which other sessions never see. */
  response: StoredResponse | null;
}

const now = sql`utc_timestamp(3)`;

/** A consumer's record of a key, as committed. */
async function findKey(db: Database, consumerId: string, key: string): Promise<KeyRecord | undefined> {
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

/** A claimed key: the transaction the keyed request writes through, ended by exactly one of its methods. */
interface KeyClaim {
  tx: Database;
  /** Stores the response with the claim, commits both with whatever the request wrote, and releases the connection. */
  commit(response: StoredResponse): Promise<void>;
  /** Undoes the claim and the request's writes, and releases the connection. */
  rollback(): Promise<void>;
}

async function rollbackOrDestroy(connection: PoolConnection): Promise<void> {
  // A connection that cannot even roll back is in an unknown state: close it rather than reuse it.
  await connection.rollback().catch(() => connection.destroy());
}

/** Opens a transaction on a connection of its own and claims the key in it. */
async function claimKey(db: Database, consumerId: string, key: string, requestHash: string): Promise<KeyClaim> {
  // drizzle keeps its pool as $client (db/client.ts's Database type leaves it out).
  const connection = await (db as Database & { $client: Pool }).$client.getConnection();
  const tx = drizzle(connection, { schema, mode: 'default' });
  try {
    await connection.beginTransaction();
    await tx.insert(idempotencyKeys).values({
      consumerId,
      idempotencyKey: key,
      requestHash,
      createdAt: now,
      expiresAt: sql`${now} + interval ${sql.raw(String(KEY_RETENTION_HOURS))} hour`,
    });
  } catch (error) {
    await rollbackOrDestroy(connection);
    connection.release();
    throw error;
  }
  const where = and(eq(idempotencyKeys.consumerId, consumerId), eq(idempotencyKeys.idempotencyKey, key));
  return {
    tx,
    async commit(response) {
      try {
        await tx
          .update(idempotencyKeys)
          .set({ responseStatus: response.status, responseLocation: response.location, responseBody: response.body })
          .where(where);
        await connection.commit();
      } catch (error) {
        await rollbackOrDestroy(connection);
        throw error;
      } finally {
        connection.release();
      }
    },
    async rollback() {
      await rollbackOrDestroy(connection);
      connection.release();
    },
  };
}

/** Forgets one consumer's key whose retention is over, so it can be claimed again. */
async function forgetExpiredKey(db: Database, consumerId: string, key: string): Promise<void> {
  await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.consumerId, consumerId), eq(idempotencyKeys.idempotencyKey, key), lte(idempotencyKeys.expiresAt, now)));
}

/** Deletes up to `batch` expired keys, oldest first (by the expires_at index). */
export async function deleteExpiredKeys(db: Database, batch = 100): Promise<void> {
  await db.execute(sql`delete from ${idempotencyKeys} where ${idempotencyKeys.expiresAt} <= ${now} order by ${idempotencyKeys.expiresAt} limit ${sql.raw(String(batch))}`);
}

/** How a keyed write ended: its response (fresh, or the first one's again), or why it did not run. */
export type Once = { response: StoredResponse; replayed: boolean } | { refused: 'in progress' | 'different request' };

// Another request holds the key (its transaction is still open) for longer than the database's lock wait limit, or two waiters collided.
const STILL_RUNNING = new Set<string | undefined>(['ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_DEADLOCK']);

/** A committed record's answer to a request with this hash. */
function answer(record: KeyRecord, requestHash: string): Once {
  if (record.requestHash !== requestHash) return { refused: 'different request' };
  return record.response ? { response: record.response, replayed: true } : { refused: 'in progress' };
}

/** Runs `write` at most once per consumer and key, on the primary (Stripe's model, docs/decisions.md "Idempotent creates"). */
export async function writeOnce(
  db: Database,
  consumerId: string,
  key: string,
  requestHash: string,
  write: (tx: Database) => Promise<StoredResponse>,
): Promise<Once> {
  const primary = primaryOf(db);
  const existing = await findKey(primary, consumerId, key);
  if (existing?.live) return answer(existing, requestHash);
  if (existing) await forgetExpiredKey(primary, consumerId, key);

  let claim: KeyClaim;
  try {
    claim = await claimKey(primary, consumerId, key, requestHash);
  } catch (error) {
    const code = errorCode(error);
    if (STILL_RUNNING.has(code)) return { refused: 'in progress' };
    if (code !== 'ER_DUP_ENTRY') throw error;
    // Another request with this key committed while this one waited: answer as it did.
    const winner = await findKey(primary, consumerId, key);
    return winner?.live ? answer(winner, requestHash) : { refused: 'in progress' };
  }
  let response: StoredResponse;
  try {
    response = await write(claim.tx);
  } catch (error) {
    await claim.rollback();
    throw error;
  }
  await claim.commit(response);
  // Housekeeping after the answer, not before it: a failure here only postpones the cleanup.
  void deleteExpiredKeys(primary).catch(() => undefined);
  return { response, replayed: false };
}
