import { and, asc, eq, gt, inArray, isNull, ne, or, sql, type SQL } from 'drizzle-orm';
import { execute, qb, select, type Database } from '../sql';
import type { Lease } from './delivery';
import { utcNow, webhookSubscriptions as subs } from './schema';

/** What a subscription's owner reads as its lastError while no key of the dispatchers' keyring opens its signing secret. */
export const SECRET_UNOPENABLE =
  "The server cannot open this subscription's signing secret: deliveries wait, none is lost, until the operator restores its key";

/** A subscription's sealed secrets: the current one, and the replaced ones while they still sign (null otherwise). */
export interface SealedRow {
  id: string;
  secret: Buffer;
  previousSecret: Buffer | null;
  olderSecret: Buffer | null;
  unopenableShown: boolean;
}

const stillValid = (column: typeof subs.previousSecretExpiresAt) => sql<number>`coalesce(${column} > ${utcNow}, 0)`;

async function selectSealed(database: Database, where: SQL | undefined, limit: number): Promise<SealedRow[]> {
  const rows = await select(
    database,
    {
      id: subs.id,
      secret: subs.secret,
      previousSecret: subs.previousSecret,
      previousValid: stillValid(subs.previousSecretExpiresAt),
      olderSecret: subs.olderSecret,
      olderValid: stillValid(subs.olderSecretExpiresAt),
      unopenableShown: sql<number>`coalesce(${subs.lastError} = ${SECRET_UNOPENABLE}, 0)`,
    },
    (query) => query.from(subs).where(where).orderBy(asc(subs.id)).limit(limit),
  );
  return rows.map(({ previousValid, olderValid, unopenableShown, ...row }) => ({
    ...row,
    previousSecret: previousValid === 1 ? row.previousSecret : null,
    olderSecret: olderValid === 1 ? row.olderSecret : null,
    unopenableShown: unopenableShown === 1,
  }));
}

/** Up to `limit` subscriptions after `afterId` (in id order), with the secrets that still sign: start-up checks and the re-seal page through these. */
export const sealedPage = (database: Database, afterId: string | undefined, limit: number): Promise<SealedRow[]> =>
  selectSealed(database, afterId === undefined ? undefined : gt(subs.id, afterId), limit);

/** One subscription's sealed secrets, read again after a re-seal's compare-and-set missed. */
export const sealedRow = async (database: Database, id: string): Promise<SealedRow | undefined> =>
  (await selectSealed(database, eq(subs.id, id), 1))[0];

/**
 * Writes the re-sealed forms only if the row still holds exactly what was read (compare-and-set): a
 * partner's rotation in between is never overwritten, and nothing is fenced, since the secrets are the same.
 */
export async function replaceSealed(
  database: Database,
  read: SealedRow,
  resealed: Pick<SealedRow, 'secret' | 'previousSecret' | 'olderSecret'>,
): Promise<boolean> {
  const same = (
    column: typeof subs.secret | typeof subs.previousSecret | typeof subs.olderSecret,
    value: Buffer | null,
  ) => (value === null ? sql`true` : sql`${column} <=> ${value}`);
  const result = await execute(
    database,
    qb
      .update(subs)
      .set({
        secret: resealed.secret,
        ...(read.previousSecret === null ? {} : { previousSecret: resealed.previousSecret }),
        ...(read.olderSecret === null ? {} : { olderSecret: resealed.olderSecret }),
      })
      .where(
        and(
          eq(subs.id, read.id),
          same(subs.secret, read.secret),
          same(subs.previousSecret, read.previousSecret),
          same(subs.olderSecret, read.olderSecret),
        ),
      ),
  );
  return result.affectedRows === 1;
}

/** The owner is shown why deliveries wait: lastError says so, until a delivery or a keyring that opens it clears it. */
export async function showUnopenable(database: Database, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await execute(
    database,
    qb
      .update(subs)
      .set({ lastError: SECRET_UNOPENABLE })
      .where(and(inArray(subs.id, [...ids]), or(isNull(subs.lastError), ne(subs.lastError, SECRET_UNOPENABLE)))),
  );
}

/** A keyring that opens them again: the reason goes, and each is due at once instead of at the end of its wait. */
export async function clearUnopenable(database: Database, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await execute(
    database,
    qb
      .update(subs)
      .set({ lastError: null, nextAttemptAt: sql`${utcNow}` })
      .where(and(inArray(subs.id, [...ids]), eq(subs.lastError, SECRET_UNOPENABLE))),
  );
}

/**
 * A walk that cannot open the secret gives the lease back and waits `waitMs` before the next claim, with
 * the reason shown. The fault is ours, not the receiver's: no attempt is counted and any failing streak
 * starts again, so time spent waiting on a key never counts towards giving up.
 */
export async function parkUnopenable(database: Database, lease: Lease, waitMs: number): Promise<boolean> {
  const result = await execute(
    database,
    qb
      .update(subs)
      .set({
        lastError: SECRET_UNOPENABLE,
        attempts: 0,
        failingSince: null,
        nextAttemptAt: sql`${utcNow} + interval ${Math.round(waitMs) * 1000} microsecond`,
        leaseOwner: null,
        leaseExpiresAt: null,
      })
      .where(and(eq(subs.id, lease.id), eq(subs.leaseGeneration, lease.generation), eq(subs.leaseOwner, lease.owner))),
  );
  return result.affectedRows === 1;
}
