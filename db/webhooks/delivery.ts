import { and, asc, eq, gt, inArray, isNull, lt, notInArray, or, sql } from 'drizzle-orm';
import type { Database } from '../client';
import { compile, runStatement, type Statement } from '../sql';
import { jobChanges } from '../schema';
import { utcNow, webhookSubscriptions as subs } from './schema';

/** A subscription a dispatcher holds the lease of, with what delivering it needs. */
export interface LeasedSubscription {
  id: string;
  url: string;
  position: number;
  attempts: number;
  /** Encrypted secrets: the current one, then the previous one while it is still valid. */
  secrets: Buffer[];
}

const interval = (ms: number) => sql`${utcNow} + interval ${Math.round(ms) * 1000} microsecond`;
const leaseFree = or(isNull(subs.leaseExpiresAt), lt(subs.leaseExpiresAt, utcNow));
// A public feed entry after the subscription's position. Uncorrelated: read once from the end of the
// (ever_public, seq) index; a subquery per subscription would scan the index, as MariaDB has no range for it.
const hasEventsWaiting = sql`${subs.position} < (select max(${jobChanges.seq}) from ${jobChanges} where ${jobChanges.everPublic} = true)`;
const heldBy = (id: string, owner: string) => and(eq(subs.id, id), eq(subs.leaseOwner, owner), gt(subs.leaseExpiresAt, utcNow));

/** Leases up to `max` due subscriptions with events waiting in one UPDATE, so no subscription is ever held twice; `walking` are never claimed. */
export async function claimDue(db: Database, owner: string, leaseMs: number, max: number, walking: readonly string[] = []): Promise<LeasedSubscription[]> {
  const [claimed] = await db
    .update(subs)
    .set({ leaseOwner: owner, leaseExpiresAt: interval(leaseMs) })
    .where(and(eq(subs.status, 'active'), sql`${subs.nextAttemptAt} <= ${utcNow}`, leaseFree, hasEventsWaiting, walking.length > 0 ? notInArray(subs.id, [...walking]) : undefined))
    .orderBy(asc(subs.nextAttemptAt))
    .limit(max);
  if (claimed.affectedRows === 0) return [];
  const rows = await db
    .select({
      id: subs.id,
      url: subs.url,
      position: subs.position,
      attempts: subs.attempts,
      secret: subs.secret,
      previousSecret: subs.previousSecret,
      previousValid: sql<number>`coalesce(${subs.previousSecretExpiresAt} > ${utcNow}, 0)`.mapWith(Boolean),
    })
    .from(subs)
    .where(and(eq(subs.leaseOwner, owner), gt(subs.leaseExpiresAt, utcNow)));
  return rows.map(({ secret, previousSecret, previousValid, ...rest }) => ({ ...rest, secrets: previousValid && previousSecret ? [secret, previousSecret] : [secret] }));
}

/** A held subscription's write: its lease extended, and its position moved to `seq` when an event was delivered. */
export interface Hold {
  id: string;
  owner: string;
  seq?: number;
}

/**
 * Many held subscriptions' writes in one statement per kind (deliveries, lease renewals); the ids whose
 * lease was lost (expired and taken, or cleared by the owner's change), which were not written.
 */
export async function recordHolds(db: Database, holds: readonly Hold[], leaseMs: number): Promise<Set<string>> {
  let written = 0;
  for (const kind of ['delivered', 'renewed'] as const) {
    const list = holds.filter((hold) => (hold.seq !== undefined) === (kind === 'delivered'));
    if (list.length === 0) continue;
    const values: Record<string, unknown> = { leaseUs: Math.round(leaseMs) * 1000 };
    list.forEach((hold, i) => Object.assign(values, { [`id${i}`]: subs.id.mapToDriverValue(hold.id), [`owner${i}`]: hold.owner, [`seq${i}`]: hold.seq }));
    written += await runStatement(db, holdStatement(db, kind, list.length)(values));
  }
  if (written === holds.length) return new Set();
  // Some were not written: the rows say which (a lost lease is rare, so this read is too).
  const rows = await db
    .select({ id: subs.id, owner: subs.leaseOwner, position: subs.position, valid: sql<number>`coalesce(${subs.leaseExpiresAt} > ${utcNow}, 0)`.mapWith(Boolean) })
    .from(subs)
    .where(inArray(subs.id, holds.map((hold) => hold.id)));
  const now = new Map(rows.map((row) => [row.id, row]));
  return new Set(holds.filter((hold) => { const row = now.get(hold.id); return !row || !row.valid || row.owner !== hold.owner || (hold.seq !== undefined && row.position !== hold.seq); }).map((hold) => hold.id));
}

// The hold statements, built once per kind and number of walks: drizzle's build cost more than the statement's run.
const holdShapes = new Map<string, (values: Record<string, unknown>) => Statement>();
function holdStatement(db: Database, kind: 'delivered' | 'renewed', count: number): (values: Record<string, unknown>) => Statement {
  const key = `${kind}:${count}`;
  let shape = holdShapes.get(key);
  if (!shape) {
    const p = (name: string) => sql.placeholder(name);
    const list = Array.from({ length: count }, (_, i) => ({ id: p(`id${i}`), owner: p(`owner${i}`), seq: p(`seq${i}`) }));
    const held = and(gt(subs.leaseExpiresAt, utcNow), or(...list.map((hold) => and(eq(subs.id, hold.id), eq(subs.leaseOwner, hold.owner), kind === 'delivered' ? lt(subs.position, hold.seq) : undefined))));
    const leaseExpiresAt = sql`${utcNow} + interval ${p('leaseUs')} microsecond`;
    const position = sql`case ${sql.join(list.map((hold) => sql`when ${eq(subs.id, hold.id)} then ${hold.seq}`), sql` `)} else ${subs.position} end`;
    const set = kind === 'delivered' ? { position, attempts: 0, failingSince: null, lastError: null, lastDeliveredAt: sql`${utcNow}`, leaseExpiresAt } : { leaseExpiresAt };
    shape = compile(db.update(subs).set(set).where(held));
    holdShapes.set(key, shape);
  }
  return shape;
}

export interface Failure {
  error: string;
  /** When to try again, from now. */
  retryInMs: number;
  /** Failing this long (since the first failed attempt at the same event) disables the subscription. */
  giveUpAfterMs: number;
  /** The disabledReason its owner then reads. */
  giveUpReason: string;
}

/** A failed attempt: counted and rescheduled, or the subscription disabled once failing for giveUpAfterMs. */
export async function recordFailure(db: Database, id: string, owner: string, failure: Failure): Promise<'disabled' | 'retry' | 'lost'> {
  const givenUp = sql`(${subs.failingSince} is not null and ${subs.failingSince} <= ${utcNow} - interval ${failure.giveUpAfterMs * 1000} microsecond)`;
  return db.transaction(async (tx) => {
    const [result] = await tx
      .update(subs)
      .set({
        // MySQL assigns left to right in column order: status and reason (before failing_since) read its old value.
        disabledReason: sql`if(${givenUp}, ${failure.giveUpReason}, ${subs.disabledReason})`,
        status: sql`if(${givenUp}, 'disabled', ${subs.status})`,
        attempts: sql`${subs.attempts} + 1`,
        failingSince: sql`coalesce(${subs.failingSince}, ${utcNow})`,
        lastError: failure.error.slice(0, 500),
        nextAttemptAt: interval(failure.retryInMs),
        leaseOwner: null,
        leaseExpiresAt: null,
      })
      .where(heldBy(id, owner));
    if (result.affectedRows !== 1) return 'lost' as const;
    const [row] = await tx.select({ status: subs.status }).from(subs).where(eq(subs.id, id));
    return row?.status === 'disabled' ? ('disabled' as const) : ('retry' as const);
  });
}

/** The receiver asked to stop (410 Gone): disabled at once, with its answer as the last error. */
export async function disableHeld(db: Database, id: string, owner: string, reason: string, error: string): Promise<boolean> {
  const [result] = await db
    .update(subs)
    .set({ status: 'disabled', disabledReason: reason, lastError: error, leaseOwner: null, leaseExpiresAt: null })
    .where(heldBy(id, owner));
  return result.affectedRows === 1;
}

/** Gives the lease back without waiting for it to expire (caught up, or stopping). */
export async function releaseLease(db: Database, id: string, owner: string): Promise<void> {
  await db.update(subs).set({ leaseOwner: null, leaseExpiresAt: null }).where(and(eq(subs.id, id), eq(subs.leaseOwner, owner)));
}

export interface SubscriptionLag {
  id: string;
  consumerId: string;
  status: 'active' | 'disabled';
  position: number;
  attempts: number;
  /** When the oldest event not yet delivered was written; null when caught up. */
  oldestUndelivered: Date | null;
}

/** Every subscription's position and its oldest undelivered event, for metrics. */
export async function subscriptionLags(db: Database): Promise<SubscriptionLag[]> {
  const rows = await db.select({ id: subs.id, consumerId: subs.consumerId, status: subs.status, position: subs.position, attempts: subs.attempts }).from(subs);
  // One indexed read per distinct position (caught-up subscriptions share one), with the position as a constant: correlated, it would be a scan.
  const oldest = new Map<number, Date | null>();
  for (const position of new Set(rows.map((row) => row.position))) {
    const [next] = await db
      .select({ at: jobChanges.changedAt })
      .from(jobChanges)
      .where(and(eq(jobChanges.everPublic, true), gt(jobChanges.seq, position)))
      .orderBy(asc(jobChanges.seq))
      .limit(1);
    oldest.set(position, next?.at ?? null);
  }
  return rows.map((row) => ({ ...row, oldestUndelivered: oldest.get(row.position) ?? null }));
}
