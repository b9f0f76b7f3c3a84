import { and, asc, eq, gt, inArray, isNull, lt, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import { newestHistory } from '../jobs/change-history';
import { jobChanges } from '../schema';
import { execute, qb, select, transaction, type Database } from '../sql';
import { recordAttempts, type AttemptRecord } from './attempts';
import { EVENT_TYPES } from '../../domain/webhook';
import { utcNow, webhookSubscriptions as subs } from './schema';

/**
 * A walk's right to deliver one subscription: the dispatcher's name and the generation its claim raised
 * the row to. Every write of the walk carries it and matches no row once another claim or an owner's
 * change (rotate, replay, enable, disable, PATCH) has raised the generation or cleared the lease.
 */
export interface Lease {
  id: string;
  owner: string;
  generation: number;
}

/** A subscription a dispatcher holds the lease of, with what delivering it needs. */
export interface LeasedSubscription extends Lease {
  url: string;
  position: number;
  /** The newest feed history it was told of; null: made by an older release, so told of the newest. */
  history: string | null;
  attempts: number;
  /** The event types it takes; null: all. */
  eventTypes: Array<(typeof EVENT_TYPES)[number]> | null;
  /** Encrypted secrets: the current one, then the replaced ones still within their overlap. */
  secrets: Buffer[];
}

const interval = (ms: number) => sql`${utcNow} + interval ${Math.round(ms) * 1000} microsecond`;
const leaseFree = or(isNull(subs.leaseExpiresAt), lt(subs.leaseExpiresAt, utcNow));
/** The row is still this walk's: same generation, same holder, lease unexpired on the database's clock. */
const fenced = (lease: Lease) =>
  and(
    eq(subs.id, lease.id),
    eq(subs.leaseGeneration, lease.generation),
    eq(subs.leaseOwner, lease.owner),
    gt(subs.leaseExpiresAt, utcNow),
  );

/** The feed's last public position: a subscription at it has nothing waiting. */
async function publicHead(db: Database): Promise<number> {
  const [row] = await select(db, { head: sql<number | null>`max(${jobChanges.seq})` }, (query) =>
    query.from(jobChanges).where(eq(jobChanges.everPublic, true)),
  );
  return row?.head ?? 0;
}

/**
 * Leases up to `max` due subscriptions with events waiting, those served least recently first, as Solid
 * Queue claims: candidates read `FOR UPDATE SKIP LOCKED` (another dispatcher's claim in progress is passed
 * over, not waited for), then leased in the same transaction, each one's generation raised.
 */
export async function claimDue(
  database: Database,
  owner: string,
  leaseMs: number,
  max: number,
): Promise<LeasedSubscription[]> {
  if (max <= 0) return [];
  // Read before the transaction: a locking read would lock the feed's index end against the numbering.
  const [head, newest] = [await publicHead(database), await newestHistory(database)];
  // Events waiting, or a restore it was not told of (feed.restored, sent even when no change follows).
  const waiting = or(lt(subs.position, head), isNull(subs.history), ne(subs.history, newest));
  return transaction(database, async (tx) => {
    const candidates = await select(tx, { id: subs.id }, (query) =>
      query
        .from(subs)
        .where(and(eq(subs.status, 'active'), lte(subs.nextAttemptAt, utcNow), leaseFree, waiting))
        .orderBy(asc(subs.lastServedAt), asc(subs.id))
        .limit(max)
        .for('update', { skipLocked: true }),
    );
    if (candidates.length === 0) return [];
    const ids = candidates.map((row) => row.id);
    await execute(
      tx,
      qb
        .update(subs)
        .set({
          leaseOwner: owner,
          leaseExpiresAt: interval(leaseMs),
          leaseGeneration: sql`${subs.leaseGeneration} + 1`,
          lastServedAt: sql`${utcNow}`,
        })
        .where(inArray(subs.id, ids)),
    );
    const rows = await select(
      tx,
      {
        id: subs.id,
        url: subs.url,
        position: subs.position,
        history: subs.history,
        attempts: subs.attempts,
        generation: subs.leaseGeneration,
        eventTypes: subs.eventTypes,
        secret: subs.secret,
        previousSecret: subs.previousSecret,
        previousValid: sql<number>`coalesce(${subs.previousSecretExpiresAt} > ${utcNow}, 0)`,
        olderSecret: subs.olderSecret,
        olderValid: sql<number>`coalesce(${subs.olderSecretExpiresAt} > ${utcNow}, 0)`,
      },
      (query) => query.from(subs).where(inArray(subs.id, ids)),
    );
    return rows.map(({ secret, previousSecret, previousValid, olderSecret, olderValid, eventTypes, ...rest }) => ({
      ...rest,
      owner,
      eventTypes:
        eventTypes === null
          ? null
          : (eventTypes.split(',').map((type) => type.trim()) as LeasedSubscription['eventTypes']),
      secrets: [
        secret,
        ...(previousValid === 1 && previousSecret ? [previousSecret] : []),
        ...(olderValid === 1 && olderSecret ? [olderSecret] : []),
      ],
    }));
  });
}

/** The leases among `leases` still held as claimed: read before each send, so an owner's change stops the next one. */
export async function leasesHeld(database: Database, leases: readonly Lease[]): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const rows = await select(
    database,
    { id: subs.id, generation: subs.leaseGeneration, owner: subs.leaseOwner },
    (query) =>
      query.from(subs).where(
        and(
          inArray(
            subs.id,
            leases.map((lease) => lease.id),
          ),
          gt(subs.leaseExpiresAt, utcNow),
        ),
      ),
  );
  const now = new Map(rows.map((row) => [row.id, row]));
  return new Set(
    leases
      .filter((lease) => now.get(lease.id)?.generation === lease.generation && now.get(lease.id)?.owner === lease.owner)
      .map((lease) => lease.id),
  );
}

/** One walk's progress since the last write: its position, whether anything was delivered, whether it is handed back. */
export interface Progress {
  lease: Lease;
  position: number;
  /** A feed.restored event delivered: the history it told of. */
  history?: string;
  delivered: boolean;
  /** Give the lease back (caught up, slice over, stopping); else it is renewed. */
  release: boolean;
}

/**
 * Many walks' progress and their attempts in one transaction: the rows still held are locked and read,
 * then only those are written (positions never move back); the ids whose lease was lost, which were not written.
 */
export async function recordProgress(
  database: Database,
  progress: readonly Progress[],
  attempts: readonly AttemptRecord[],
  leaseMs: number,
): Promise<Set<string>> {
  if (progress.length === 0) return new Set();
  return transaction(database, async (tx) => {
    const rows = await select(tx, { id: subs.id, generation: subs.leaseGeneration, owner: subs.leaseOwner }, (query) =>
      query
        .from(subs)
        .where(
          and(
            inArray(
              subs.id,
              progress.map((one) => one.lease.id),
            ),
            gt(subs.leaseExpiresAt, utcNow),
          ),
        )
        .for('update'),
    );
    const now = new Map(rows.map((row) => [row.id, row]));
    const kept = progress.filter(
      ({ lease }) => now.get(lease.id)?.generation === lease.generation && now.get(lease.id)?.owner === lease.owner,
    );
    const lost = new Set(progress.filter((one) => !kept.includes(one)).map((one) => one.lease.id));
    if (kept.length === 0) return lost;
    const ids = (list: readonly Progress[]) => list.map((one) => subs.id.mapToDriverValue(one.lease.id));
    const among = (list: readonly Progress[]): SQL =>
      list.length === 0
        ? sql`false`
        : sql`${subs.id} in (${sql.join(
            ids(list).map((id) => sql`${id}`),
            sql`, `,
          )})`;
    const delivered = kept.filter((one) => one.delivered);
    const released = kept.filter((one) => one.release);
    const told = kept.filter((one) => one.history !== undefined);
    const position = sql`greatest(${subs.position}, case ${sql.join(
      kept.map((one) => sql`when ${subs.id} = ${subs.id.mapToDriverValue(one.lease.id)} then ${one.position}`),
      sql` `,
    )} else ${subs.position} end)`;
    await execute(
      tx,
      qb
        .update(subs)
        .set({
          position,
          ...(told.length > 0 && {
            history: sql`case ${sql.join(
              told.map((one) => sql`when ${subs.id} = ${subs.id.mapToDriverValue(one.lease.id)} then ${one.history}`),
              sql` `,
            )} else ${subs.history} end`,
          }),
          // Column order is assignment order: these read nothing assigned before them.
          lastError: sql`if(${among(delivered)}, null, ${subs.lastError})`,
          attempts: sql`if(${among(delivered)}, 0, ${subs.attempts})`,
          failingSince: sql`if(${among(delivered)}, null, ${subs.failingSince})`,
          lastDeliveredAt: sql`if(${among(delivered)}, ${utcNow}, ${subs.lastDeliveredAt})`,
          leaseOwner: sql`if(${among(released)}, null, ${subs.leaseOwner})`,
          leaseExpiresAt: sql`if(${among(released)}, null, ${interval(leaseMs)})`,
        })
        .where(
          inArray(
            subs.id,
            kept.map((one) => one.lease.id),
          ),
        ),
    );
    const keptIds = new Set(kept.map((one) => one.lease.id));
    await recordAttempts(
      tx,
      attempts.filter((attempt) => keptIds.has(attempt.subscriptionId)),
    );
    return lost;
  });
}

export interface Failure {
  /** The walk's position: what it delivered before this failure. */
  position: number;
  /** The newest history the walk told of before it. */
  history: string | null;
  error: string;
  /** When to try again, from now. */
  retryInMs: number;
  /** Failing this long (since the first failed attempt at the same event) disables the subscription. */
  giveUpAfterMs: number;
  /** The disabledReason its owner then reads. */
  giveUpReason: string;
}

/** A failed attempt, with the walk's unwritten attempts: counted and rescheduled, or disabled once failing for giveUpAfterMs; 'lost' wrote nothing. */
export async function recordFailure(
  database: Database,
  lease: Lease,
  failure: Failure,
  attempts: readonly AttemptRecord[],
): Promise<'disabled' | 'retry' | 'lost'> {
  const givenUp = sql`(${subs.failingSince} is not null and ${subs.failingSince} <= ${utcNow} - interval ${failure.giveUpAfterMs * 1000} microsecond)`;
  return transaction(database, async (tx) => {
    const result = await execute(
      tx,
      qb
        .update(subs)
        .set({
          // MySQL assigns left to right in column order: status and reason (before failing_since) read its old value.
          disabledReason: sql`if(${givenUp}, ${failure.giveUpReason}, ${subs.disabledReason})`,
          status: sql`if(${givenUp}, 'disabled', ${subs.status})`,
          lastError: failure.error.slice(0, 500),
          position: sql`greatest(${subs.position}, ${failure.position})`,
          history: failure.history,
          attempts: sql`${subs.attempts} + 1`,
          failingSince: sql`coalesce(${subs.failingSince}, ${utcNow})`,
          nextAttemptAt: interval(failure.retryInMs),
          leaseOwner: null,
          leaseExpiresAt: null,
        })
        .where(fenced(lease)),
    );
    if (result.affectedRows !== 1) return 'lost' as const;
    await recordAttempts(tx, attempts);
    const [row] = await select(tx, { status: subs.status }, (query) => query.from(subs).where(eq(subs.id, lease.id)));
    return row?.status === 'disabled' ? ('disabled' as const) : ('retry' as const);
  });
}

/** Why a held subscription is disabled: the position it reached, the reason it keeps, and the receiver's answer. */
export interface Disabling {
  position: number;
  history: string | null;
  reason: string;
  error: string;
}

/** The receiver asked to stop (410 Gone): disabled at once, with its answer as the last error; false when the lease was lost. */
export async function disableHeld(
  database: Database,
  lease: Lease,
  { position, history, reason, error }: Disabling,
  attempts: readonly AttemptRecord[],
): Promise<boolean> {
  return transaction(database, async (tx) => {
    const result = await execute(
      tx,
      qb
        .update(subs)
        .set({
          status: 'disabled',
          disabledReason: reason,
          lastError: error,
          position: sql`greatest(${subs.position}, ${position})`,
          history,
          leaseOwner: null,
          leaseExpiresAt: null,
        })
        .where(fenced(lease)),
    );
    if (result.affectedRows !== 1) return false;
    await recordAttempts(tx, attempts);
    return true;
  });
}

/** The database's clock, in ms since the epoch: what signatures' timestamps follow. */
export async function databaseTime(database: Database): Promise<number> {
  const [row] = await select(database, { at: sql<string>`unix_timestamp(now(3))` }, (query) => query.from(sql`dual`));
  return Math.round(Number(row!.at) * 1000);
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
  const rows = await select(
    db,
    {
      id: subs.id,
      consumerId: subs.consumerId,
      status: subs.status,
      position: subs.position,
      attempts: subs.attempts,
    },
    (query) => query.from(subs),
  );
  // One indexed read per distinct position (caught-up subscriptions share one), with the position as a constant: correlated, it would be a scan.
  const oldest = new Map<number, Date | null>();
  for (const position of new Set(rows.map((row) => row.position))) {
    const [next] = await select(db, { at: jobChanges.changedAt }, (query) =>
      query
        .from(jobChanges)
        .where(and(eq(jobChanges.everPublic, true), gt(jobChanges.seq, position)))
        .orderBy(asc(jobChanges.seq))
        .limit(1),
    );
    oldest.set(position, next?.at ?? null);
  }
  return rows.map((row) => ({ ...row, oldestUndelivered: oldest.get(row.position) ?? null }));
}
