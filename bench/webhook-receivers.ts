/**
 * W's receivers, in a worker thread of the bench under SCHED_IDLE: a partner's receiver runs on
 * the partner's machine, so here it takes only CPU our processes leave idle and never preempts
 * them. node:http on loopback, 204 to everything; each event's arrival is recorded as { receiver,
 * job, at } (at: milliseconds since the epoch, high resolution) and posted to the bench in batches,
 * so the bench's own thread is not woken for every delivery.
 */
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

export interface Arrival {
  receiver: number;
  job: string;
  at: number;
}

/** How often the arrivals recorded since the last batch are posted. */
const BATCH_MS = 50;

if (parentPort) {
  const port = parentPort;
  let batch: Arrival[] = [];
  const timer = setInterval(() => {
    if (batch.length === 0) return;
    port.postMessage({ arrivals: batch });
    batch = [];
  }, BATCH_MS);
  // SCHED_IDLE for this thread alone (Linux schedules threads): the partner's machine costs ours only idle CPU.
  execFileSync('chrt', ['--idle', '--pid', '0', readlinkSync('/proc/thread-self').split('/').pop()!]);
  const servers = Array.from({ length: (workerData as { count: number }).count }, (_, receiver) => {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = performance.timeOrigin + performance.now();
        try {
          const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { id?: string } };
          const job = event.data?.id;
          if (job) batch.push({ receiver, job, at });
        } catch {
          // not an event: still answered, it is not the bench's to refuse
        }
        res.writeHead(204).end();
      });
    });
    server.keepAliveTimeout = 60_000;
    return server;
  });
  Promise.all(servers.map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve)))).then(() => {
    port.postMessage({ urls: servers.map((s) => `http://127.0.0.1:${(s.address() as { port: number }).port}/hook`) });
  });
  port.on('message', () => {
    clearInterval(timer);
    if (batch.length > 0) port.postMessage({ arrivals: batch });
    for (const s of servers) s.closeAllConnections();
    Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))).then(() => port.close());
  });
}
