/**
 * W: webhook delivery. Ten healthy receivers (bench/webhook-receivers.ts: node:http on loopback,
 * 204 to everything, in a thread under SCHED_IDLE) subscribed through the service's API, one dispatcher process, and creates through the API at a fixed rate.
 * Latency: from the moment a create's answer arrived (its statement committed) to the moment each
 * receiver got the event for that job, per delivery. Cost: get by id (D's request mix) against the
 * service with the dispatcher running against the same with it paused (SIGSTOP), under the same
 * creates, alternating which goes first each round.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { measure, type Endpoint, type Measurement } from './measure';
import { cpuMicros, machineBusyMicros } from './proc';
import type { Server } from './servers';
import { median } from './stability';
import type { Arrival } from './webhook-receivers';

export const SUBSCRIPTIONS = 10;
export const CHANGES_PER_SECOND = 50;

export interface LatencySummary {
  /** Deliveries matched to a change, and how many were expected (changes x subscriptions). */
  delivered: number;
  expected: number;
  /** Deliveries of the same job to the same receiver after the first (at-least-once repeats). */
  repeats: number;
  p50: number;
  p99: number;
  max: number;
  /** Deliveries a second from the first commit to the last arrival: what the dispatcher sustained. */
  perSecond: number;
}

export interface WebhookResult {
  size: number;
  subscriptions: number;
  rate: number;
  seconds: number;
  /** Changes made in the latency window (creates answered 201) and those refused or failed. */
  changes: number;
  failedChanges: number;
  latency: LatencySummary;
  /** Cores used by processes outside the bench's own during the latency window. */
  otherCores: number;
  /** Cores the dispatcher and the service used during the latency window. */
  dispatcherCores: number;
  serviceCores: number;
  loadAverage: string;
  /** Get by id with the dispatcher running and paused, per round. */
  rounds: Array<{ round: number; on?: Measurement; off?: Measurement }>;
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
export function matchDeliveries(committed: Map<string, number>, receivers: Array<Map<string, number[]>>): LatencySummary {
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

/** The ratio the target is held to: median over rounds with both sides valid of on / off throughput. */
export function dispatcherRatio(result: Pick<WebhookResult, 'rounds'>): { ratio: number; rounds: number; otherCores: number } {
  const both = result.rounds.filter((r) => r.on && r.off && !r.on.invalid && !r.off.invalid);
  return {
    ratio: median(both.map((r) => r.on!.reqPerSec / r.off!.reqPerSec)),
    rounds: both.length,
    otherCores: Math.max(0, ...both.flatMap((r) => [r.on!.otherCores, r.off!.otherCores])),
  };
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

/**
 * Deliveries a second, over every receiver, that arrived between two moments (performance.now()),
 * and why a window with the dispatcher running does not count: one that delivered under 90% of what
 * the creates made due did less than its work there.
 */
export function deliveriesIn(receivers: Array<Map<string, number[]>>, from: number, to: number, due: number): { perSecond: number; invalid?: string } {
  let n = 0;
  for (const arrivals of receivers) for (const times of arrivals.values()) for (const at of times) if (at >= from && at < to) n++;
  const perSecond = (n * 1000) / (to - from);
  return perSecond < 0.9 * due ? { perSecond, invalid: `the dispatcher fell behind: ${perSecond.toFixed(0)} deliveries/s of ${due}` } : { perSecond };
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

export interface WebhookBenchOptions {
  size: number;
  service: Server;
  /** Starts a dispatcher process (bench/servers.ts startDispatcherProcess). */
  startDispatcher: () => Promise<Server>;
  /** Headers of the n-th subscriber (a consumer of its own: the API allows 5 subscriptions a consumer). */
  subscriberHeaders: (n: number) => Record<string, string>;
  writerHeaders: Record<string, string>;
  createBody: string;
  /** D's request mix and the measurement settings. */
  load: (round: number) => Parameters<typeof measure>[1];
  seconds: number;
  /** Seconds of get by id before the rounds, not counted. */
  warmup: number;
  rounds: number;
  databasePid?: number;
  log: (line: string) => void;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until every receiver has every job in `committed` (maps that may still be growing) whose
 * commit is at least `settledMs` old, or `ms` passed.
 */
export async function drained(receivers: Array<Pick<Receiver, 'arrivals'>>, committed: Array<Map<string, number>>, ms: number, settledMs = 0): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const before = performance.now() - settledMs;
    const due = committed.flatMap((map) => [...map].filter(([, at]) => at <= before).map(([job]) => job));
    if (receivers.every((r) => due.every((job) => r.arrivals.has(job)))) return;
    await wait(100);
  }
}

export async function benchWebhooks(o: WebhookBenchOptions): Promise<WebhookResult> {
  let started: Awaited<ReturnType<typeof startReceivers>> | undefined;
  const subscriptions: Array<{ id: string; headers: Record<string, string> }> = [];
  let dispatcher: Server | undefined;
  try {
    started = await startReceivers(SUBSCRIPTIONS);
    const { receivers } = started;
    // A run that died before its clean-up left subscriptions to dead ports: they would be retried during this one.
    for (let n = 0; n < SUBSCRIPTIONS; n++) {
      const listed = (await (await fetch(`${o.service.url}/api/v1/webhooks`, { headers: o.subscriberHeaders(n) })).json()) as { data?: Array<{ id: string }> };
      for (const { id } of listed.data ?? []) await fetch(`${o.service.url}/api/v1/webhooks/${id}`, { method: 'DELETE', headers: o.subscriberHeaders(n) });
    }
    for (const [n, receiver] of receivers.entries()) {
      const headers = { ...o.subscriberHeaders(n), 'Content-Type': 'application/json' };
      const response = await fetch(`${o.service.url}/api/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url, description: 'bench W' }) });
      const answer = (await response.json()) as { data?: { id?: string }; error?: string };
      if (response.status !== 201 || !answer.data?.id) throw new Error(`creating a subscription answered ${response.status}: ${answer.error ?? ''}`);
      subscriptions.push({ id: answer.data.id, headers: o.subscriberHeaders(n) });
    }
    const running = await o.startDispatcher();
    dispatcher = running;
    // Warm-up, not counted: the dispatcher's first deliveries open connections and compile its hot paths.
    const warmup = driveCreates(o.service.url, o.writerHeaders, o.createBody, CHANGES_PER_SECOND);
    await wait(3000);
    await warmup.stop();
    await drained(receivers, [warmup.committed], 30_000);

    // Latency: the dispatcher alone with the creates, nothing else loading the service.
    const ours = () => [o.service.pid, running.pid].reduce((sum, pid) => sum + cpuMicros(pid), 0) + (o.databasePid ? cpuMicros(o.databasePid) : 0);
    const self = () => process.cpuUsage().user + process.cpuUsage().system;
    const before = { machine: machineBusyMicros(), ours: ours(), self: self(), at: performance.now(), dispatcher: cpuMicros(running.pid), service: cpuMicros(o.service.pid) };
    const drive = driveCreates(o.service.url, o.writerHeaders, o.createBody, CHANGES_PER_SECOND);
    await wait(o.seconds * 1000);
    await drive.stop();
    const wall = (performance.now() - before.at) * 1000;
    const otherCores = Math.max(0, (machineBusyMicros() - before.machine - (ours() - before.ours) - (self() - before.self)) / wall);
    const dispatcherCores = (cpuMicros(running.pid) - before.dispatcher) / wall;
    const serviceCores = (cpuMicros(o.service.pid) - before.service) / wall;
    const loadAverage = os.loadavg().map((l) => l.toFixed(2)).join(' ');
    // A dispatcher that fell behind gets time to finish: late deliveries count at their lateness.
    await drained(receivers, [drive.committed], Math.max(30_000, 3 * o.seconds * 1000));
    const latency = matchDeliveries(drive.committed, receivers.map((r) => r.arrivals));
    o.log(
      `W    ${drive.committed.size} creates in ${o.seconds} s (${drive.failed()} failed) to ${SUBSCRIPTIONS} subscriptions: ${latency.delivered} of ${latency.expected} deliveries, ` +
        `commit to delivery p50 ${latency.p50.toFixed(0)} ms, p99 ${latency.p99.toFixed(0)} ms, max ${latency.max.toFixed(0)} ms, ${latency.perSecond.toFixed(0)} deliveries/s sustained, ${latency.repeats} repeats; ` +
        `dispatcher ${dispatcherCores.toFixed(2)} cores, service ${serviceCores.toFixed(2)} cores, other load ${otherCores.toFixed(2)} cores, load average ${loadAverage}`,
    );

    // Cost: get by id with and without the dispatcher, the creates going on in both.
    const result: WebhookResult = { size: o.size, subscriptions: SUBSCRIPTIONS, rate: CHANGES_PER_SECOND, seconds: o.seconds, changes: drive.committed.size, failedChanges: drive.failed(), latency, otherCores, dispatcherCores, serviceCores, loadAverage, rounds: [] };
    // Warm-up, not counted, as every other scenario gets: the first window would otherwise also pay
    // for the service's cold get-by-id path, and it is always one with the dispatcher running.
    if (o.warmup > 0) {
      const creates = driveCreates(o.service.url, o.writerHeaders, o.createBody, CHANGES_PER_SECOND);
      await measure({ target: 'service', server: o.service, chain: [o.service, running] }, { ...o.load(0), seconds: o.warmup }).catch(() => undefined);
      await creates.stop();
      await drained(receivers, [creates.committed], 30_000);
    }
    // What the creates of the last window without the dispatcher left it to deliver.
    let backlog = new Map<string, number>();
    let paused = false;
    for (let round = 1; round <= o.rounds; round++) {
      const entry: WebhookResult['rounds'][number] = { round };
      for (const on of round % 2 === 1 ? [true, false] : [false, true]) {
        // Paused, not restarted: a dispatcher runs for days, so its windows price a warm process, not a fresh one's compiling.
        if (on === paused) {
          process.kill(running.pid, on ? 'SIGCONT' : 'SIGSTOP');
          paused = !on;
        }
        const creates = driveCreates(o.service.url, o.writerHeaders, o.createBody, CHANGES_PER_SECOND);
        if (!on) backlog = creates.committed;
        // A resumed dispatcher first catches up (not timed) until everything committed over a second ago has arrived: its steady state is priced, not a backlog.
        if (on) {
          await wait(1000);
          await drained(receivers, [backlog, creates.committed], 60_000, 1000);
        }
        const endpoint: Endpoint = { target: 'service', server: o.service, chain: on ? [o.service, running] : [o.service] };
        try {
          const selfBefore = self();
          const from = performance.now();
          const measured = await measure(endpoint, o.load(round));
          const to = performance.now();
          await wait(100); // the receivers post their arrivals every 50 ms
          const delivered = deliveriesIn(receivers.map((r) => r.arrivals), from, to, CHANGES_PER_SECOND * SUBSCRIPTIONS);
          // The receivers and the creates run in this process: the bench's own load, not the machine's.
          const m = { ...measured, otherCores: Math.max(0, measured.otherCores - ((self() - selfBefore) / 1e6) / measured.seconds) };
          if (on && delivered.invalid && !m.invalid) m.invalid = delivered.invalid;
          entry[on ? 'on' : 'off'] = m;
          o.log(`  W    get by id, dispatcher ${on ? 'running' : 'paused'}: ${m.reqPerSec.toFixed(0)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, other load ${m.otherCores.toFixed(2)} cores${on ? `, ${delivered.perSecond.toFixed(0)} deliveries/s` : ''}${m.invalid ? `  INVALID: ${m.invalid}` : ''}`);
        } catch (error) {
          o.log(`  W    get by id, dispatcher ${on ? 'running' : 'paused'} failed: ${(error as Error).message}`);
        } finally {
          await creates.stop();
        }
      }
      result.rounds.push(entry);
    }
    const cost = dispatcherRatio(result);
    o.log(`W    get by id with the dispatcher / without: ${cost.ratio.toFixed(3)}x (median of ${cost.rounds} rounds)`);
    return result;
  } finally {
    if (dispatcher) process.kill(dispatcher.pid, 'SIGCONT');
    for (const s of subscriptions) await fetch(`${o.service.url}/api/v1/webhooks/${s.id}`, { method: 'DELETE', headers: s.headers }).catch(() => undefined);
    await dispatcher?.stop();
    await started?.close();
  }
}
