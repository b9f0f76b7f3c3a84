import { randomBytes } from 'node:crypto';
import type { Agent } from 'undici';
import type { Database } from '../db/client';
import { lastSequenced } from '../db/jobs/change-numbering';
import type { Reachability } from '../db/reachability';
import { signingKey } from '../db/signing-key';
import { subscriptionLags, type Lease } from '../db/webhooks/delivery';
import type { Logger } from '../service/logger';
import { deliveryAgent, type Target } from '../service/webhooks/post';
import type { Keyring } from '../service/webhooks/secrets';
import type { signer } from '../service/webhooks/signing';
import { keyringOf, spoken } from '../service/webhooks/settings';
import type { WebhookSettings } from '../service/config';
import type { DatabaseClock } from './clock';
import { feedWindow, type FeedWindow } from './feed-window';
import { holdWriter, type HoldWriter } from './hold-writer';
import { leaseGate, type LeaseGate } from './lease-gate';
import type { DispatcherMetrics } from './metrics';

/** Walks sending at once in one dispatcher: a caught-up or waiting subscription holds none. */
const CAPACITY = 256;

/** The webhook settings with the key that opens the subscriptions' secrets: the dispatcher never starts without it. */
export type DispatcherSettings = WebhookSettings & { secretsKey: Buffer };

export interface DispatcherOptions {
  db: Database;
  settings: DispatcherSettings;
  logger: Logger;
  metrics?: DispatcherMetrics;
  /** This dispatcher's name in leases; unique per process. */
  owner?: string;
  capacity?: number;
  /** This host's wall clock, for the skew against the database's (tests move it). */
  wallNow?: () => number;
  /** Told of every failure: one the database's absence explains is logged once there, so here at debug. */
  reachability?: Pick<Reachability, 'failed'>;
  /** Subscriptions whose secrets the keyring was found not to open at start-up (already logged). */
  unopenable?: Iterable<string>;
}

/** What one dispatcher's loop, its ticks and its walks share. */
export interface Run {
  db: Database;
  settings: DispatcherSettings;
  logger: Logger;
  metrics?: DispatcherMetrics;
  owner: string;
  capacity: number;
  wallNow?: () => number;
  keyring: Keyring;
  agent: Agent;
  feed: FeedWindow;
  writer: HoldWriter;
  gate: LeaseGate;
  /** The subscriptions whose secrets do not open: logged once each, however often they are claimed. */
  unopenable: Set<string>;
  /** The walks sending now, by subscription. */
  walking: Map<string, Promise<void>>;
  /** Leases given back and not yet written. */
  handedBack: Set<Promise<unknown>>;
  /** Set once at the first tick. */
  clock?: DatabaseClock;
  /** When the next tick asks whether the database was restored (performance.now()). */
  restoreCheckAt: number;
  stopping: boolean;
  /** The last claim took all the room there was: walks that end wake the loop. */
  roomFilled: boolean;
  /** Ends the loop's wait early, while it waits. */
  wake?: () => void;
  /** Logs a failure: at debug when the database's absence explains it (db/reachability.ts logs that once). */
  failure(error: unknown, fields: Record<string, unknown>, message: string): void;
}

/** One leased subscription's delivery in progress. */
export interface Walk {
  lease: Lease;
  log: Logger;
  sign: ReturnType<typeof signer>;
  target: Target;
  /** The event types the subscription chose; undefined: all. */
  wanted?: Set<string>;
  /** Delivered (or skipped) up to here. */
  position: number;
  /** The newest feed history it was told of (feed.restored); null: unknown, told of the newest. */
  history: string | null;
  /** Failed attempts at the event it was stuck on when claimed. */
  attempts: number;
  failedBefore: boolean;
  /** On this host's monotonic clock, from when the claim began. */
  leaseEnds: number;
}

const errorFields = (error: unknown) => ({
  code: (error as { code?: string }).code,
  err: { name: (error as Error).name },
});

/** The parts a dispatcher builds once: the keyring, the HTTP agent, the feed window, the position writer and the lease gate. */
export function createRun({
  db,
  settings,
  logger,
  metrics,
  owner = `${process.pid}-${randomBytes(6).toString('hex')}`,
  capacity = CAPACITY,
  wallNow,
  reachability,
  unopenable = [],
}: DispatcherOptions): Run {
  const failure = (error: unknown, fields: Record<string, unknown>, message: string) =>
    reachability?.failed(error)
      ? logger.debug({ ...fields, ...errorFields(error) }, message)
      : logger.error({ ...fields, ...errorFields(error) }, message);
  const run: Run = {
    db,
    settings,
    logger,
    metrics,
    owner,
    capacity,
    wallNow,
    keyring: keyringOf(settings),
    agent: deliveryAgent(settings.policy, { connectTimeoutMs: settings.timeoutMs }),
    feed: feedWindow(db, () => signingKey(db)),
    writer: holdWriter(db, settings.leaseMs, (error) => failure(error, {}, 'webhook positions not written; retrying')),
    gate: leaseGate(db),
    unopenable: new Set(unopenable),
    walking: new Map(),
    handedBack: new Set(),
    stopping: false,
    roomFilled: false,
    restoreCheckAt: 0,
    failure,
  };
  metrics?.observeUnopenable(run.unopenable.size);
  metrics?.watchLag(async () => ({ head: await lastSequenced(db), subscriptions: await subscriptionLags(db) }));
  return run;
}

/** Writes the walk's position and gives its lease back with the next flush; stop() waits for it. */
export function handBack(run: Run, lease: Lease, position: number): void {
  const written = run.writer.release(lease, position);
  run.handedBack.add(written);
  void written.finally(() => run.handedBack.delete(written));
}

/** The give-up reason a subscription disabled after the whole retry period is shown. */
export const giveUpReason = (settings: DispatcherSettings) =>
  `deliveries failed for ${spoken(settings.retry.giveUpAfterMs)}`;
