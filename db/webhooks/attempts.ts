import { and, desc, eq, lt, sql } from 'drizzle-orm';
import { execute, qb, select, type Database, type Queryable } from '../sql';
import { utcNow, webhookAttempts as attempts, webhookSubscriptions as subs } from './schema';

/** Attempts kept per subscription: what its owner can read back. */
export const ATTEMPTS_KEPT = 100;
const ERROR_WIDTH = 40;

/** One delivery attempt as recorded: never the receiver's answer body. */
export interface AttemptRecord {
  subscriptionId: string;
  eventId: string;
  /** The event's feed position; null for a test event. */
  position: number | null;
  /** HTTP status the receiver answered, or null when none came back. */
  status: number | null;
  /** The failure's class from the fixed vocabulary; null on a 2xx. */
  error: string | null;
  latencyMs: number;
}

/** A subscription's attempts are trimmed on about one write in TRIM_EVERY: two statements per subscription per write cost more than the insert. */
const TRIM_EVERY = 16;

/** Records attempts in one statement (timed by the database's clock); now and then trims a subscription to its last ATTEMPTS_KEPT (a list shows no more). */
export async function recordAttempts(
  database: Queryable,
  records: readonly AttemptRecord[],
  random: () => number = Math.random,
): Promise<void> {
  if (records.length === 0) return;
  // The error column holds a class, not a story: anything longer is cut to its width.
  await execute(
    database,
    qb.insert(attempts).values(
      records.map((record) => ({
        ...record,
        error: record.error?.slice(0, ERROR_WIDTH) ?? null,
        latencyMs: Math.max(0, Math.round(record.latencyMs)),
        attemptedAt: sql`${utcNow}`,
      })),
    ),
  );
  for (const subscriptionId of new Set(records.map((record) => record.subscriptionId))) {
    if (random() * TRIM_EVERY >= 1) continue;
    const [edge] = await select(database, { id: attempts.id }, (query) =>
      query
        .from(attempts)
        .where(eq(attempts.subscriptionId, subscriptionId))
        .orderBy(desc(attempts.id))
        .limit(1)
        .offset(ATTEMPTS_KEPT - 1),
    );
    if (edge)
      await execute(
        database,
        qb.delete(attempts).where(and(eq(attempts.subscriptionId, subscriptionId), lt(attempts.id, edge.id))),
      );
  }
}

export interface AttemptView {
  eventId: string;
  position: number | null;
  attemptedAt: Date;
  status: number | null;
  error: string | null;
  latencyMs: number;
}

/** A subscription's last attempts, newest first, when `consumerId` owns it; undefined for another's or an unknown id. */
export async function listAttempts(
  database: Database,
  consumerId: string,
  id: string,
  limit = ATTEMPTS_KEPT,
): Promise<AttemptView[] | undefined> {
  const [owned] = await select(database, { id: subs.id }, (query) =>
    query.from(subs).where(and(eq(subs.id, id), eq(subs.consumerId, consumerId))),
  );
  if (!owned) return undefined;
  return select(
    database,
    {
      eventId: attempts.eventId,
      position: attempts.position,
      attemptedAt: attempts.attemptedAt,
      status: attempts.status,
      error: attempts.error,
      latencyMs: attempts.latencyMs,
    },
    (query) => query.from(attempts).where(eq(attempts.subscriptionId, id)).orderBy(desc(attempts.id)).limit(limit),
  );
}
