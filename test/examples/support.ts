/** What the example tests share: the receiver example as partners run it, and the mirror it should end with. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { readChanges } from '../../db/jobs/change-feed';
import type { Database } from '../../db/client';
import type { WebhookSettings } from '../../service/config';
import { DEMO, type Stack } from '../e2e/support';

export const ROOT = path.resolve(__dirname, '..', '..');

/** A dispatcher's settings for receivers on this host: quick retries, loopback allowed, a key of its own. */
export const exampleWebhookSettings = (): WebhookSettings & { secretsKey: Buffer } => ({
  secretsKey: randomBytes(32),
  policy: { allowHttp: true, allowed: ['127.0.0.1/32'] },
  retry: { firstMs: 200, maxMs: 1000, giveUpAfterMs: 600_000 },
  leaseMs: 4000,
  pollMs: 100,
  timeoutMs: 2000,
  subscriptionLimit: 5,
});

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** examples/webhook-receiver.ts by the command partners are given (docs/guides/webhooks.md): it compiles, then runs; resolves once it caught up. */
export function startReceiverExample(opts: {
  apiUrl: string;
  secret: string;
  port: number;
  mirrorFile: string;
  cwd: string;
}): { child: ChildProcess; ready: Promise<void>; output: () => string } {
  const child = spawn('npm', ['run', '-s', 'example:webhooks', '--prefix', ROOT], {
    cwd: opts.cwd,
    detached: true,
    env: {
      ...process.env,
      JOBS_API_URL: opts.apiUrl,
      JOBS_API_KEY: DEMO.reader,
      WEBHOOK_SECRET: opts.secret,
      PORT: String(opts.port),
      MIRROR_FILE: opts.mirrorFile,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (chunk) => (out += chunk));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('caught up through the feed')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}: ${out}`)));
  });
  return { child, ready, output: () => out };
}

export function stopProcessGroup(child: ChildProcess | undefined): void {
  if (child?.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
}

/** What a replay of the whole feed gives: the listable jobs, each as GET answers it. */
export async function listable(db: Database): Promise<Record<string, unknown>> {
  const { entries } = await readChanges(db, 0, 100_000);
  return Object.fromEntries(
    entries.filter((entry) => !('removed' in entry)).map((job) => [job.id, JSON.parse(JSON.stringify(job))]),
  );
}

/** The jobs of a mirror file the examples write; none while it does not exist yet. */
export function mirrorJobs(file: string): Record<string, unknown> {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { jobs: Record<string, unknown> }).jobs;
  } catch {
    return {};
  }
}

const same = (want: Record<string, unknown>, have: Record<string, unknown>) =>
  JSON.stringify(Object.keys(want).sort()) === JSON.stringify(Object.keys(have).sort()) &&
  Object.keys(want).every((id) => JSON.stringify(want[id]) === JSON.stringify(have[id]));

/** Waits until the mirror file equals a fresh full sync; fails with the difference after `timeoutMs`. */
export async function converges(db: Database, file: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [want, have] = [await listable(db), mirrorJobs(file)];
    if (same(want, have)) return;
    if (Date.now() > deadline) expect(have).toEqual(want);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

let made = 0;
/** Changes as partners see them around a restore: `creates` listed jobs created through the API, `renames` others renamed by SQL, each titled after `label`. */
export async function changeListedJobs(stack: Stack, label: string, creates: number, renames: number): Promise<void> {
  for (let i = 0; i < creates; i++) {
    const res = await fetch(`${stack.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        title: `${label} ${++made}`,
        department: 'Restores',
        type: 'contract',
        description: 'A change around a restore.',
        status: 'active',
      }),
    });
    expect(res.status).toBe(201);
  }
  await stack.service.database.query(
    `update jobs set title = concat(?, ' ', title) where status in ('active', 'open') and deleted_at is null and department <> 'Restores' order by rand() limit ${renames}`,
    [label],
  );
}
