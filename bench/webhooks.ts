/**
 * W: 1,000 subscriptions made through the API (200 consumers x 5), each with a receiver of its own
 * (bench/webhook-receivers.ts), two dispatchers, creates at 1 a second. Latency: a create's answer
 * to each receiver's first arrival for it. Cost: the dispatchers' and MariaDB's CPU per event.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { cpuMicros, machineBusyMicros } from './measure';
import type { Server } from './servers';
import type { Arrival } from './webhook-receivers';

export const SUBSCRIPTIONS = 1000;
export const PER_CONSUMER = 5;
export const CHANGES_PER_SECOND = 1;
export const DISPATCHERS = 2;

export type Deliveries = ReturnType<typeof deliveries>;
export type WebhookResult = Awaited<ReturnType<typeof benchWebhooks>>;

/** The p-th percentile (0-100) of sorted values, nearest rank. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Each receiver's first arrival for each job in `committed` against that job's commit (other jobs'
 * arrivals ignored): over every delivery, and the worst subscription's own p50 and p99 (a missing
 * delivery counts as never); repeats are at-least-once deliveries after the first.
 */
export function deliveries(committed: Map<string, number>, receivers: Array<Map<string, number[]>>) {
  const all: number[] = [];
  let [repeats, worstP50, worstP99] = [0, 0, 0];
  for (const arrivals of receivers) {
    const own = [...committed].map(([job, start]) => {
      const at = arrivals.get(job) ?? [];
      repeats += Math.max(0, at.length - 1);
      return at.length ? Math.min(...at) - start : Infinity;
    });
    all.push(...own.filter((latency) => latency !== Infinity));
    own.sort((a, b) => a - b);
    worstP50 = Math.max(worstP50, percentile(own, 50));
    worstP99 = Math.max(worstP99, percentile(own, 99));
  }
  all.sort((a, b) => a - b);
  const [p50, p99, max] = [percentile(all, 50), percentile(all, 99), all.at(-1) ?? NaN];
  const [delivered, expected] = [all.length, committed.size * receivers.length];
  return { delivered, expected, repeats, p50, p99, max, worstP50, worstP99 };
}

/** Arrivals over every receiver between two moments (performance.now()). */
export const arrivalsIn = (receivers: Array<Pick<Receiver, 'arrivals'>>, from: number, to: number) =>
  receivers.flatMap((r) => [...r.arrivals.values()].flat()).filter((at) => at >= from && at < to).length;

/** A receiver's arrival times (performance.now()) by job. */
type Receiver = { url: string; arrivals: Map<string, number[]> };

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
    const response = await fetch(`${serviceUrl}/api/v1/jobs`, { method: 'POST', headers, body }).catch(() => undefined);
    const id = response?.status === 201 ? ((await response.json()) as { data: { id: string } }).data.id : undefined;
    if (id) committed.set(id, performance.now());
    else failed++;
  };
  // Paced by the clock, not by answers: a slow answer does not lower the rate.
  const timer = setInterval(() => {
    const p = create().finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, 1000 / rate);
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

/** Whether every receiver had every job in `committed` within `ms`. */
export async function drained(
  receivers: Array<Pick<Receiver, 'arrivals'>>,
  committed: Map<string, number>,
  ms: number,
) {
  const done = () => receivers.every((r) => [...committed.keys()].every((job) => r.arrivals.has(job)));
  for (const deadline = Date.now() + ms; !done(); await wait(100)) if (Date.now() > deadline) return false;
  return true;
}

export interface WebhookBenchOptions {
  size: number;
  service: Server;
  startDispatcher: () => Promise<Server>;
  /** The headers of the n-th subscriber (the API allows PER_CONSUMER subscriptions a consumer). */
  subscriber: (n: number) => Record<string, string>;
  writerHeaders: Record<string, string>;
  createBody: string;
  seconds: number;
  databasePid?: number;
}

/** Subscriptions made through the API, one receiver each; DISPATCHERS dispatchers; creates at CHANGES_PER_SECOND. */
export async function benchWebhooks(o: WebhookBenchOptions) {
  const started = await startReceivers(SUBSCRIPTIONS);
  const made: Array<{ id: string; headers: Record<string, string> }> = [];
  const dispatchers: Server[] = [];
  try {
    const { receivers } = started;
    for (const [n, receiver] of receivers.entries()) {
      const headers = { ...o.subscriber(Math.floor(n / PER_CONSUMER)), 'Content-Type': 'application/json' };
      const response = await fetch(`${o.service.url}/api/v1/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: receiver.url, description: 'bench W' }),
      });
      const answer = (await response.json()) as { data?: { id: string }; error?: string };
      if (response.status !== 201 || !answer.data) throw new Error(`creating a subscription: ${answer.error}`);
      made.push({ id: answer.data.id, headers });
    }
    for (let n = 0; n < DISPATCHERS; n++) dispatchers.push(await o.startDispatcher());
    // Warm-up, not counted: connections opened, hot paths compiled.
    const warmup = driveCreates(o.service.url, o.writerHeaders, o.createBody, CHANGES_PER_SECOND);
    await wait(5000);
    await warmup.stop();
    await drained(receivers, warmup.committed, 10_000);
    const cpu = () => ({
      dispatchers: dispatchers.reduce((sum, d) => sum + cpuMicros(d.pid), 0),
      database: o.databasePid ? cpuMicros(o.databasePid) : 0,
      service: cpuMicros(o.service.pid),
      self: process.cpuUsage().user + process.cpuUsage().system,
    });
    const before = { machine: machineBusyMicros(), cpu: cpu(), at: performance.now() };
    const drive = driveCreates(o.service.url, o.writerHeaders, o.createBody, CHANGES_PER_SECOND);
    await wait(o.seconds * 1000);
    await drive.stop();
    const to = performance.now();
    await wait(100); // the receivers post their arrivals every 50 ms
    const after = cpu();
    const used = (key: keyof typeof after) => after[key] - before.cpu[key];
    const ours = used('dispatchers') + used('database') + used('service') + used('self');
    const otherCores = Math.max(0, (machineBusyMicros() - before.machine - ours) / ((to - before.at) * 1000));
    const arrivals = arrivalsIn(receivers, before.at, to);
    const cpuMs = { dispatchers: used('dispatchers') / 1000, database: used('database') / 1000 };
    // Late deliveries count at their lateness.
    await drained(receivers, drive.committed, Math.max(30_000, 3 * o.seconds * 1000));
    const latency = deliveries(
      drive.committed,
      receivers.map((r) => r.arrivals),
    );
    const result = {
      size: o.size,
      subscriptions: SUBSCRIPTIONS,
      rate: CHANGES_PER_SECOND,
      seconds: o.seconds,
      changes: drive.committed.size,
      failedChanges: drive.failed(),
      latency,
      arrivals,
      cpuMs,
      cpuPerEventMs: arrivals ? (cpuMs.dispatchers + cpuMs.database) / arrivals : NaN,
      otherCores,
    };
    return result;
  } finally {
    for (const d of dispatchers) await d.stop();
    for (const { id, headers } of made)
      await fetch(`${o.service.url}/api/v1/webhooks/${id}`, { method: 'DELETE', headers }).catch(() => undefined);
    await started.close();
  }
}
