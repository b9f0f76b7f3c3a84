/**
 * W's receivers in a worker thread under SCHED_IDLE (a partner's receiver costs us only idle CPU):
 * 204 to everything, each arrival sent to the bench in batches, not one wake-up a delivery.
 */
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

export interface Arrival {
  receiver: number;
  job: string;
  at: number;
}

if (parentPort) {
  const port = parentPort;
  const batch: Arrival[] = [];
  const post = () => (batch.length ? port.postMessage({ arrivals: batch.splice(0) }) : undefined);
  const timer = setInterval(post, 50);
  // SCHED_IDLE for this thread alone (Linux schedules threads).
  execFileSync('chrt', ['--idle', '--pid', '0', readlinkSync('/proc/thread-self').split('/').pop()!]);
  const servers = Array.from({ length: (workerData as { count: number }).count }, (_, receiver) => {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = performance.timeOrigin + performance.now();
        // Not an event: still answered, it is not the bench's to refuse.
        const job = (JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { data?: { id?: string } }).data?.id;
        if (job) batch.push({ receiver, job, at });
        res.writeHead(204).end();
      });
    });
    server.keepAliveTimeout = 60_000;
    return server;
  });
  const listening = servers.map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve)));
  void Promise.all(listening).then(() =>
    port.postMessage({ urls: servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`) }),
  );
  port.on('message', () => {
    clearInterval(timer);
    post();
    for (const s of servers) s.closeAllConnections();
    void Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))).then(() => port.close());
  });
}
