/**
 * W's receivers, in a worker thread of the bench at the lowest CPU priority: a partner's receiver
 * runs on the partner's machine, so here it takes only what our processes leave and does not
 * preempt them. node:http on loopback, 204 to everything; each event's arrival is posted to the
 * bench as { receiver, job, at } (at: milliseconds since the epoch, high resolution).
 */
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

export interface Arrival {
  receiver: number;
  job: string;
  at: number;
}

if (parentPort) {
  const port = parentPort;
  // Without a pid, libuv's setpriority applies to the calling thread only (Linux: nice is per thread).
  os.setPriority(19);
  const servers = Array.from({ length: (workerData as { count: number }).count }, (_, receiver) => {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = performance.timeOrigin + performance.now();
        try {
          const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { id?: string } };
          const job = event.data?.id;
          if (job) port.postMessage({ receiver, job, at } satisfies Arrival);
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
    for (const s of servers) s.closeAllConnections();
    Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))).then(() => port.close());
  });
}
