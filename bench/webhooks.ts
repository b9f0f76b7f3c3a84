/**
 * W: webhook delivery at scale. 1,000 subscriptions (200 consumers x 5), each with a receiver of its
 * own (bench/webhook-receivers.ts: node:http on loopback, 204 to everything, in a thread under
 * SCHED_IDLE), two dispatcher processes, creates through the API at 1 a second: 1,000 deliveries a
 * second. Latency: from a create's answer (its commit) to each receiver's first arrival for that job,
 * per subscription. Cost: CPU of the dispatchers and MariaDB per delivered event, for this design and
 * today's (bench/old-design.ts), one after the other in the same run on the same subscriptions.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { openDatabase } from '../db/client';
import { sequencePendingChanges } from '../db/jobs/change-numbering';
import { createSubscription } from '../db/webhooks/subscriptions';
import { encryptSecret, newSecret } from '../service/webhooks/secrets';
import { cpuMicros, machineBusyMicros } from './proc';
import type { Server } from './servers';
import type { Arrival } from './webhook-receivers';

export const SUBSCRIPTIONS = 1000;
export const PER_CONSUMER = 5;
export const CHANGES_PER_SECOND = 1;
export const DISPATCHERS = 2;

export interface LatencySummary {
  /** Deliveries matched to a change, and how many were expected (changes x subscriptions). */
  delivered: number;
  expected: number;
  /** Deliveries of the same job to the same receiver after the first (at-least-once repeats). */
  repeats: number;
  p50: number;
  p99: number;
  max: number;
  /** Deliveries a second from the first commit to the last arrival: what the dispatchers sustained. */
  perSecond: number;
}

export interface DesignResult {
  /** 'fenced': this tree's dispatcher; 'today': commit 5748254's. */
  design: 'fenced' | 'today';
  changes: number;
  failedChanges: number;
  latency: LatencySummary;
  /** The worst subscription's own p50 and p99 (commit to first arrival), ms. */
  worstP50: number;
  worstP99: number;
  /** Arrivals during the window (any event, repeats included) and the CPU they cost, ms. */
  arrivals: number;
  cpuMs: { dispatchers: number; database: number };
  /** (dispatchers + MariaDB) CPU ms per arrival in the window. */
  cpuPerEventMs: number;
}

export interface WebhookResult {
  size: number;
  subscriptions: number;
  rate: number;
  seconds: number;
  /** Cores used by processes outside the bench's own during the windows (the largest). */
  otherCores: number;
  loadAverage: string;
  designs: DesignResult[];
}

/** The p-th percentile (0-100) of sorted values, nearest rank. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Each receiver's first arrival for each changed job, against the time that change committed:
 * the latency per delivery. Arrivals for jobs not in `committed` (earlier phases) are ignored.
 */
export function matchDeliveries(
  committed: Map<string, number>,
  receivers: Array<Map<string, number[]>>,
): LatencySummary {
  const latencies: number[] = [];
  let repeats = 0;
  let last = -Infinity;
  for (const arrivals of receivers) {
    for (const [job, at] of arrivals) {
      const start = committed.get(job);
      if (start === undefined || at.length === 0) continue;
      latencies.push(Math.min(...at) - start);
      last = Math.max(last, Math.min(...at));
      repeats += at.length - 1;
    }
  }
  const first = Math.min(...committed.values());
  latencies.sort((a, b) => a - b);
  return {
    delivered: latencies.length,
    expected: committed.size * receivers.length,
    repeats,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.length ? latencies[latencies.length - 1]! : NaN,
    perSecond: latencies.length && last > first ? (latencies.length * 1000) / (last - first) : NaN,
  };
}

/** Per subscription (receiver) p50 and p99 of first arrivals against commits: the worst of each. */
export function worstSubscription(
  committed: Map<string, number>,
  receivers: Array<Map<string, number[]>>,
): { p50: number; p99: number } {
  let p50 = 0;
  let p99 = 0;
  for (const arrivals of receivers) {
    const own: number[] = [];
    for (const [job, start] of committed) {
      const at = arrivals.get(job);
      own.push(at?.length ? Math.min(...at) - start : Infinity);
    }
    own.sort((a, b) => a - b);
    p50 = Math.max(p50, percentile(own, 50));
    p99 = Math.max(p99, percentile(own, 99));
  }
  return { p50, p99 };
}

/** Arrivals over every receiver between two moments (performance.now()). */
export function arrivalsIn(receivers: Array<Map<string, number[]>>, from: number, to: number): number {
  let n = 0;
  for (const arrivals of receivers)
    for (const times of arrivals.values()) for (const at of times) if (at >= from && at < to) n++;
  return n;
}

interface Receiver {
  url: string;
  /** Job id -> arrival times (performance.now()). */
  arrivals: Map<string, number[]>;
}

/** `count` receivers (bench/webhook-receivers.ts) in a worker thread of their own, and how to stop them. */
async function startReceivers(count: number): Promise<{ receivers: Receiver[]; close: () => Promise<void> }> {
  const worker = new Worker(path.join(__dirname, 'webhook-receivers.js'), { workerData: { count } });
  const receivers: Receiver[] = [];
  const urls = await new Promise<string[]>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: { urls?: string[]; arrivals?: Arrival[] }) => {
      if (message.urls) return resolve(message.urls);
      for (const { receiver, job, at } of message.arrivals ?? []) {
        const arrivals = receivers[receiver]!.arrivals;
        arrivals.set(job, [...(arrivals.get(job) ?? []), at - performance.timeOrigin]);
      }
    });
  });
  for (const url of urls) receivers.push({ url, arrivals: new Map() });
  return {
    receivers,
    close: async () => {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('close');
      await Promise.race([exited, wait(5000).then(() => worker.terminate())]);
    },
  };
}

/** Creates through the API at `rate` a second until stopped: each created job's id and the time its answer arrived. */
function driveCreates(serviceUrl: string, headers: Record<string, string>, body: string, rate: number) {
  const committed = new Map<string, number>();
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  const create = async () => {
    try {
      const response = await fetch(`${serviceUrl}/api/v1/jobs`, { method: 'POST', headers, body });
      const answer = (await response.json()) as { data?: { id?: string } };
      const at = performance.now();
      const id = answer.data?.id;
      if (response.status === 201 && id) committed.set(id, at);
      else failed++;
    } catch {
      failed++;
    }
  };
  const started = performance.now();
  let sent = 0;
  // Paced by the clock, not by answers: a slow answer does not lower the rate.
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    for (; sent < due; sent++) {
      const p = create().finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }, 5);
  return {
    committed,
    failed: () => failed,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until every receiver has every job in `committed` (maps that may still be growing) whose
 * commit is at least `settledMs` old, or `ms` passed.
 */
export async function drained(
  receivers: Array<Pick<Receiver, 'arrivals'>>,
  committed: Array<Map<string, number>>,
  ms: number,
  settledMs = 0,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const before = performance.now() - settledMs;
    const due = committed.flatMap((map) => [...map].filter(([, at]) => at <= before).map(([job]) => job));
    if (receivers.every((r) => due.every((job) => r.arrivals.has(job)))) return;
    await wait(100);
  }
}

export interface WebhookBenchOptions {
  size: number;
  service: Server;
  databaseUrl: string;
  secretsKey: Buffer;
  /** Starts one dispatcher process of a design. */
  startDispatcher: (design: DesignResult['design']) => Promise<Server>;
  writerHeaders: Record<string, string>;
  createBody: string;
  seconds: number;
  databasePid?: number;
  log: (line: string) => void;
}

/** Every bench subscription back at the feed's head, its lease and failures cleared: each design starts alike. */
const RESET = `update webhook_subscriptions set position = (select coalesce(max(seq), 0) from job_changes), lease_owner = null, lease_expires_at = null,
  attempts = 0, failing_since = null, last_error = null, next_attempt_at = utc_timestamp(3) where consumer_id like 'bench-w-%'`;

export async function benchWebhooks(o: WebhookBenchOptions): Promise<WebhookResult> {
  const database = openDatabase(o.databaseUrl, [], { connectionLimit: 2 });
  let started: Awaited<ReturnType<typeof startReceivers>> | undefined;
  const result: WebhookResult = {
    size: o.size,
    subscriptions: SUBSCRIPTIONS,
    rate: CHANGES_PER_SECOND,
    seconds: o.seconds,
    otherCores: 0,
    loadAverage: '',
    designs: [],
  };
  try {
    started = await startReceivers(SUBSCRIPTIONS);
    const { receivers } = started;
    // A run that died before its clean-up left subscriptions to dead ports.
    await database.pool.query("delete from webhook_subscriptions where consumer_id like 'bench-w-%'");
    for (const [n, receiver] of receivers.entries()) {
      const made = await createSubscription(
        database.db,
        {
          consumerId: `bench-w-${Math.floor(n / PER_CONSUMER)}`,
          url: receiver.url,
          description: 'bench W',
          secret: encryptSecret(o.secretsKey, newSecret()),
        },
        PER_CONSUMER,
      );
      if (typeof made === 'string') throw new Error(`creating a subscription: ${made}`);
    }
    for (const design of ['fenced', 'today'] as const) {
      while (await sequencePendingChanges(database.db));
      await database.pool.query(RESET);
      const dispatchers: Server[] = [];
      try {
        for (let n = 0; n < DISPATCHERS; n++) dispatchers.push(await o.startDispatcher(design));
        // Warm-up, not counted: connections opened, hot paths compiled.
        const warmup = driveCreates(o.service.url, o.writerHeaders, o.createBody, CHANGES_PER_SECOND);
        await wait(5000);
        await warmup.stop();
        await drained(receivers, [warmup.committed], 10_000);

        const cpu = () => ({
          dispatchers: dispatchers.reduce((sum, d) => sum + cpuMicros(d.pid), 0),
          database: o.databasePid ? cpuMicros(o.databasePid) : 0,
        });
        const self = () => process.cpuUsage().user + process.cpuUsage().system;
        const before = {
          machine: machineBusyMicros(),
          cpu: cpu(),
          service: cpuMicros(o.service.pid),
          self: self(),
          at: performance.now(),
        };
        const drive = driveCreates(o.service.url, o.writerHeaders, o.createBody, CHANGES_PER_SECOND);
        await wait(o.seconds * 1000);
        await drive.stop();
        const to = performance.now();
        await wait(100); // the receivers post their arrivals every 50 ms
        const after = cpu();
        const wall = (to - before.at) * 1000;
        const ours =
          after.dispatchers -
          before.cpu.dispatchers +
          (after.database - before.cpu.database) +
          (cpuMicros(o.service.pid) - before.service) +
          (self() - before.self);
        result.otherCores = Math.max(result.otherCores, (machineBusyMicros() - before.machine - ours) / wall);
        result.loadAverage = os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ');
        const arrivals = arrivalsIn(
          receivers.map((r) => r.arrivals),
          before.at,
          to,
        );
        const cpuMs = {
          dispatchers: (after.dispatchers - before.cpu.dispatchers) / 1000,
          database: (after.database - before.cpu.database) / 1000,
        };
        // Late deliveries count at their lateness; today's design may never catch up, so its wait is bounded.
        await drained(
          receivers,
          [drive.committed],
          design === 'fenced' ? Math.max(30_000, 3 * o.seconds * 1000) : 15_000,
        );
        const latency = matchDeliveries(
          drive.committed,
          receivers.map((r) => r.arrivals),
        );
        const worst = worstSubscription(
          drive.committed,
          receivers.map((r) => r.arrivals),
        );
        const one: DesignResult = {
          design,
          changes: drive.committed.size,
          failedChanges: drive.failed(),
          latency,
          worstP50: worst.p50,
          worstP99: worst.p99,
          arrivals,
          cpuMs,
          cpuPerEventMs: arrivals ? (cpuMs.dispatchers + cpuMs.database) / arrivals : NaN,
        };
        result.designs.push(one);
        o.log(
          `W    ${design}: ${one.changes} creates in ${o.seconds} s to ${SUBSCRIPTIONS} subscriptions: ${latency.delivered} of ${latency.expected} deliveries, p50 ${latency.p50.toFixed(0)} ms, p99 ${latency.p99.toFixed(0)} ms; ` +
            `worst subscription p50 ${one.worstP50.toFixed(0)} ms, p99 ${one.worstP99.toFixed(0)} ms; ${arrivals} arrivals in the window, CPU ${cpuMs.dispatchers.toFixed(0)} ms dispatchers + ${cpuMs.database.toFixed(0)} ms MariaDB = ${one.cpuPerEventMs.toFixed(3)} ms an event`,
        );
      } finally {
        for (const d of dispatchers) await d.stop();
      }
    }
    return result;
  } finally {
    await database.pool
      .query("delete from webhook_subscriptions where consumer_id like 'bench-w-%'")
      .catch(() => undefined);
    await database.close();
    await started?.close();
  }
}
