import { and, asc, eq, lte, sql } from 'drizzle-orm';
import { errorCode } from '../errors';
import { idempotencyKeys } from '../schema';
import { execute, qb, select, transaction, type Database, type Queryable } from '../sql';

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

const recordColumns = {
  requestHash: idempotencyKeys.requestHash,
  live: sql<number>`${idempotencyKeys.expiresAt} > ${now}`,
  status: idempotencyKeys.responseStatus,
  location: idempotencyKeys.responseLocation,
  body: idempotencyKeys.responseBody,
};

/** A consumer's record of a key, as committed. */
async function findKey(db: Database, consumerId: string, key: string): Promise<KeyRecord | undefined> {
  const [row] = await select(db, recordColumns, (query) =>
    query
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.consumerId, consumerId), eq(idempotencyKeys.idempotencyKey, key))),
  );
  if (!row) return undefined;
  return {
    requestHash: row.requestHash,
    live: row.live === 1,
    response:
      row.status === null || row.body === null ? null : { status: row.status, location: row.location, body: row.body },
  };
}

/** Claims the key in `tx`: its row lock holds every other request with the key until `tx` ends. */
async function claimKey(tx: Queryable, consumerId: string, key: string, requestHash: string): Promise<void> {
  await execute(
    tx,
    qb.insert(idempotencyKeys).values({
      consumerId,
      idempotencyKey: key,
      requestHash,
      createdAt: now,
      expiresAt: sql`${now} + interval ${sql.raw(String(KEY_RETENTION_HOURS))} hour`,
    }),
  );
}

/** Forgets one consumer's key whose retention is over, so it can be claimed again. */
async function forgetExpiredKey(db: Database, consumerId: string, key: string): Promise<void> {
  await execute(
    db,
    qb
      .delete(idempotencyKeys)
      .where(
        and(
          eq(idempotencyKeys.consumerId, consumerId),
          eq(idempotencyKeys.idempotencyKey, key),
          lte(idempotencyKeys.expiresAt, now),
        ),
      ),
  );
}

/** Deletes up to `batch` expired keys, oldest first (by the expires_at index): the keys deleted. */
export async function deleteExpiredKeys(db: Database, batch = 100): Promise<number> {
  const { affectedRows } = await execute(
    db,
    qb
      .delete(idempotencyKeys)
      .where(lte(idempotencyKeys.expiresAt, now))
      .orderBy(asc(idempotencyKeys.expiresAt))
      .limit(batch),
  );
  return affectedRows;
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
  { consumerId, key, requestHash }: { consumerId: string; key: string; requestHash: string },
  write: (tx: Queryable) => Promise<StoredResponse>,
): Promise<Once> {
  const existing = await findKey(db, consumerId, key);
  if (existing?.live) return answer(existing, requestHash);
  if (existing) await forgetExpiredKey(db, consumerId, key);

  let claimed = false;
  let response: StoredResponse;
  try {
    // One transaction holds the claim, the keyed write and its stored response: a failure anywhere rolls back all three.
    response = await transaction(db, async (tx) => {
      await claimKey(tx, consumerId, key, requestHash);
      claimed = true;
      const written = await write(tx);
      await execute(
        tx,
        qb
          .update(idempotencyKeys)
          .set({ responseStatus: written.status, responseLocation: written.location, responseBody: written.body })
          .where(and(eq(idempotencyKeys.consumerId, consumerId), eq(idempotencyKeys.idempotencyKey, key))),
      );
      return written;
    });
  } catch (error) {
    if (claimed) throw error;
    const code = errorCode(error);
    if (STILL_RUNNING.has(code)) return { refused: 'in progress' };
    if (code !== 'ER_DUP_ENTRY') throw error;
    // Another request with this key committed while this one waited: answer as it did.
    const winner = await findKey(db, consumerId, key);
    return winner?.live ? answer(winner, requestHash) : { refused: 'in progress' };
  }
  return { response, replayed: false };
}
