/**
 * A load balancer as an operator's stands in front of Kong nodes or service instances: each request
 * goes to the next target in rotation, and a target is taken out (drained) before it is stopped:
 * it gets no new request, and drain() returns once its requests under way have been answered.
 * Anything it cannot pass on is its own 502, which a test counts as a failed request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  url: string;
  /** Puts a target (http://host:port) into rotation. */
  add(target: string): void;
  /** Takes a target out of rotation; resolves once none of its requests is under way. */
  drain(target: string): Promise<void>;
  close(): Promise<void>;
}

interface Target {
  url: URL;
  agent: http.Agent;
  inFlight: number;
  idle: Array<() => void>;
}

export async function startBalancer(targets: string[] = []): Promise<Balancer> {
  const all = new Map<string, Target>();
  let rotation: Target[] = [];
  let next = 0;

  const add = (target: string) => {
    const entry: Target = { url: new URL(target), agent: new http.Agent({ keepAlive: true }), inFlight: 0, idle: [] };
    all.set(target, entry);
    rotation = [...rotation, entry];
  };
  for (const target of targets) add(target);

  const done = (target: Target) => {
    if (--target.inFlight === 0) for (const resolve of target.idle.splice(0)) resolve();
  };

  const server = http.createServer((req, res) => {
    const target = rotation[next++ % Math.max(rotation.length, 1)];
    if (!target) {
      res.writeHead(502, { 'Content-Type': 'application/json' }).end('{"error":"balancer: no target in rotation"}');
      return;
    }
    target.inFlight++;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      done(target);
    };
    const upstream = http.request(
      {
        host: target.url.hostname,
        port: target.url.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: target.agent,
      },
      (answer) => {
        // Which target answered: a failure's report names the node or instance.
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'x-balanced-to': target.url.host });
        answer.pipe(res);
        answer.once('end', finish);
        answer.once('error', finish);
      },
    );
    upstream.once('error', (error) => {
      finish();
      if (!res.headersSent)
        res
          .writeHead(502, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ error: `balancer: ${target.url.host} ${error.message}` }));
      else res.destroy();
    });
    req.pipe(upstream);
  });
  // Idle client connections outlive Kong's upstream keepalive (60 s), as a balancer's should: a
  // connection Kong reuses is never one closed a moment before.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    add,
    async drain(target) {
      const entry = all.get(target);
      if (!entry) throw new Error(`balancer: ${target} is not a target`);
      rotation = rotation.filter((t) => t !== entry);
      if (entry.inFlight > 0) await new Promise<void>((resolve) => entry.idle.push(resolve));
      entry.agent.destroy();
      all.delete(target);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const entry of all.values()) entry.agent.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
