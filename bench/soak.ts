/**
 * npm run soak -- [--requests 50000] [--rounds 5] [--connections 16]
 *
 * A long run against the built service, for leaks and error creep: starts
 * `node dist/service/server.js` (production logging, to /dev/null) on a database of its own,
 * `jobs_soak` on DATABASE_URL's server (re-created, demo jobs seeded, dropped at the end), sends
 * `--requests` requests in `--rounds` rounds (listings, jobs by id, creates, a 400, /readyz),
 * and prints the service's resident memory after start-up and after each round, its peak, and
 * every status and error count. Memory that keeps growing round after round is a leak. It
 * prints figures and asserts nothing (not part of npm test).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { freePort } from '../harness/real-kong';

// Runs from dist/bench/ (npm run soak) or from bench/.
const ROOT = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');
const SOAK_DATABASE = 'jobs_soak';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number above 0`);
  return value;
}

/** VmRSS and VmHWM (peak) of a process, in MiB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

const reader = {
  'X-Consumer-ID': '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01',
  'X-Consumer-Username': 'soak-reader',
  'X-Consumer-Groups': 'jobs:read',
};
const writer = {
  'X-Consumer-ID': '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a02',
  'X-Consumer-Username': 'soak-writer',
  'X-Consumer-Groups': 'jobs:read, jobs:write',
  'Content-Type': 'application/json',
};

function round(url: string, ids: string[], amount: number, connections: number): Promise<autocannon.Result> {
  const pick = () => ids[Math.floor(Math.random() * ids.length)];
  return autocannon({
    url,
    amount,
    connections,
    timeout: 30,
    requests: [
      { method: 'GET', path: '/api/v1/jobs?limit=20', headers: reader },
      {
        method: 'GET',
        path: '/api/v1/jobs/x',
        headers: reader,
        setupRequest: (req) => ({ ...req, path: `/api/v1/jobs/${pick()}` }),
      },
      {
        method: 'POST',
        path: '/api/v1/jobs',
        headers: writer,
        body: JSON.stringify({ title: 'Soak', department: 'Soak', type: 'contract', description: 'x' }),
      },
      { method: 'GET', path: '/api/v1/jobs?limit=500', headers: reader }, // a 400
      { method: 'GET', path: '/readyz' },
    ],
  });
}

async function main(): Promise<void> {
  const requests = option('requests', 50_000);
  const rounds = option('rounds', 5);
  const connections = option('connections', 16);
  const server = new URL(process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/jobs');
  const admin = await mysql.createConnection({
    host: server.hostname,
    port: Number(server.port || 3306),
    user: decodeURIComponent(server.username || 'root'),
    password: decodeURIComponent(server.password),
  });
  await admin.query(`DROP DATABASE IF EXISTS \`${SOAK_DATABASE}\``);
  server.pathname = `/${SOAK_DATABASE}`;

  const port = await freePort();
  // Straight to the service with identity headers, as the gateway would send them (no secret).
  const { GATEWAY_SECRET: _none, ...env } = process.env;
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/service/server.js')], {
    cwd: ROOT,
    env: { ...env, DATABASE_URL: server.toString(), PORT: String(port), SEED_DEMO_DATA: 'true', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  try {
    for (let ready = false; !ready;) {
      if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
      ready = await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const listed = (await (await fetch(`${url}/api/v1/jobs?limit=100`, { headers: reader })).json()) as {
      data: Array<{ id: string }>;
    };
    const ids = listed.data.map((job) => job.id);

    const pid = child.pid!;
    const start = memory(pid);
    console.log(`soak: ${requests} requests in ${rounds} rounds, ${connections} connections, service pid ${pid}`);
    console.log(`RSS after start-up        ${start.rss.toFixed(1)} MiB`);
    const statuses: Record<string, number> = {};
    let errors = 0;
    let timeouts = 0;
    for (let n = 1; n <= rounds; n++) {
      const result = await round(url, ids, Math.ceil(requests / rounds), connections);
      for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}))
        statuses[code] = (statuses[code] ?? 0) + Number(count);
      errors += result.errors;
      timeouts += result.timeouts;
      const now = memory(pid);
      console.log(
        `RSS after round ${String(n).padEnd(9)} ${now.rss.toFixed(1)} MiB   (${result.requests.average.toFixed(0)} req/s, p99 ${result.latency.p99} ms)`,
      );
    }
    const end = memory(pid);
    console.log(`RSS growth                ${(end.rss - start.rss).toFixed(1)} MiB; peak ${end.peak.toFixed(1)} MiB`);
    console.log(
      `statuses: ${Object.entries(statuses)
        .map(([code, count]) => `${code}: ${count}`)
        .join(', ')}`,
    );
    console.log(`errors: ${errors} (timeouts: ${timeouts})`);
  } finally {
    child.kill('SIGTERM');
    await exited;
    await admin.query(`DROP DATABASE IF EXISTS \`${SOAK_DATABASE}\``);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
