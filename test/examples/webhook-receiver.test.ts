/**
 * examples/webhook-receiver.ts against the running stack (service + local gateway + MariaDB + a
 * dispatcher): subscribed through the gateway, it ends with the same mirror the change feed gives,
 * drops a forged delivery, and after being killed and restarted catches up through the feed and
 * still ends exact. Its loopback address is allowed explicitly, so the SSRF guard runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type * as _typeChecked from '../../examples/webhook-receiver'; // npm run lint type-checks the example
import { readChanges } from '../../db/jobs/change-feed';
import { signer } from '../../service/webhooks/signing';
import { createLogger } from '../../service/logger';
import { startDispatcher, type Dispatcher } from '../../service/webhooks/dispatcher/dispatcher';
import type { WebhookSettings } from '../../service/webhooks/settings';
import { DEMO, startStack, type Stack } from '../e2e/support';
import { memoryLog } from '../helpers/service';

const ROOT = path.resolve(__dirname, '..', '..');
const settings: WebhookSettings & { secretsKey: Buffer } = {
  secretsKey: randomBytes(32),
  policy: { allowHttp: true, allowed: ['127.0.0.1/32'] },
  retry: { firstMs: 200, maxMs: 1000, giveUpAfterMs: 600_000 },
  leaseMs: 4000,
  pollMs: 100,
  timeoutMs: 2000,
  subscriptionLimit: 5,
};

let stack: Stack;
let dispatcher: Dispatcher;
let dir: string;
let port: number;
let receiver: ChildProcess | undefined;

const freePort = () => new Promise<number>((resolve) => {
  const server = net.createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = server.address() as net.AddressInfo;
    server.close(() => resolve(free));
  });
});

beforeAll(async () => {
  stack = await startStack('webhook_receiver', { seed: true, webhooks: settings });
  dispatcher = startDispatcher({ db: stack.service.database.db, settings, logger: createLogger('info', memoryLog([])) });
  dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-receiver-'));
  port = await freePort();
}, 60000);

afterAll(async () => {
  if (receiver?.pid && receiver.exitCode === null) process.kill(-receiver.pid, 'SIGKILL');
  await dispatcher?.stop();
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

function startReceiver(secret: string): Promise<void> {
  // The command partners are given (docs/guides/webhooks.md): it compiles, then runs.
  receiver = spawn('npm', ['run', '-s', 'example:webhooks', '--prefix', ROOT], {
    cwd: dir,
    detached: true,
    env: { ...process.env, JOBS_API_URL: stack.url, JOBS_API_KEY: DEMO.reader, WEBHOOK_SECRET: secret, PORT: String(port), MIRROR_FILE: path.join(dir, 'mirror.json') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    receiver!.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('caught up through the feed')) resolve();
    });
    receiver!.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
  });
}

/** What a replay of the whole feed gives: the listable jobs, each as GET answers it. */
async function listable(): Promise<Record<string, unknown>> {
  const { entries } = await readChanges(stack.service.database.db, 0, 10_000);
  return Object.fromEntries(entries.filter((entry) => !('removed' in entry)).map((job) => [job.id, JSON.parse(JSON.stringify(job))]));
}
const mirror = () => {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'mirror.json'), 'utf8')) as { jobs: Record<string, unknown> }).jobs;
  } catch {
    return {};
  }
};
async function converges(timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [want, have] = [await listable(), mirror()];
    if (JSON.stringify(Object.keys(want).sort()) === JSON.stringify(Object.keys(have).sort()) && Object.keys(want).every((id) => JSON.stringify(want[id]) === JSON.stringify(have[id]))) return;
    if (Date.now() > deadline) expect(have).toEqual(want);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
const sql = (statement: string, values?: unknown[]) => stack.service.database.query(statement, values);
const post = (body: unknown) =>
  fetch(`${stack.url}/api/v1/webhooks`, { method: 'POST', headers: { 'X-API-Key': DEMO.reader, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

test('subscribed after its full sync, it mirrors every change; a forged delivery is refused; killed and restarted, it catches up and ends exact', async () => {
  const subscribed = await post({ url: `http://127.0.0.1:${port}/hooks` });
  expect(subscribed.status).toBe(201);
  const { data } = (await subscribed.json()) as { data: { secret: string } };
  await startReceiver(data.secret);
  await converges();

  await sql("update jobs set title = concat(title, ' (updated)') where status = 'active' and deleted_at is null limit 3");
  await sql("update jobs set deleted_at = now(3) where status = 'open' and deleted_at is null limit 2");
  await converges();

  const forged = await fetch(`http://127.0.0.1:${port}/hooks`, {
    method: 'POST',
    headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA', 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'evt_1', type: 'job.removed', position: 'x', data: { id: Object.keys(mirror())[0] } }),
  });
  expect(forged.status).toBe(401);
  await converges(1000);

  process.kill(-receiver!.pid!, 'SIGKILL');
  await sql("update jobs set status = 'closed' where status = 'active' and deleted_at is null limit 2");
  await sql("delete from jobs where status = 'paused' limit 1");
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await startReceiver(data.secret);
  await converges();
});

test('it drops an event at or below the last sequence it applied, and answers a test event without applying it', async () => {
  const secret = ((await (await post({ url: `http://127.0.0.1:${port}/other` })).json()) as { data: { secret: string } }).data.secret;
  if (receiver?.pid && receiver.exitCode === null) process.kill(-receiver.pid, 'SIGKILL');
  await startReceiver(secret);
  const deliver = async (event: Record<string, unknown>) => {
    const body = JSON.stringify(event);
    const res = await fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', headers: { ...signer([secret])(String(event.id), new Date(), body), 'content-type': 'application/json' }, body });
    return res.status;
  };
  const [id, job] = Object.entries(mirror())[0]!;
  const ahead = 1_000_000_000;
  const event = (sequence: number, type: string, data: unknown) => ({ id: `evt_${sequence}`, type, timestamp: new Date().toISOString(), position: 'p', sequence, data });
  expect(await deliver(event(ahead, 'job.updated', { ...(job as object), title: 'newest' }))).toBe(204);
  expect((mirror()[id] as { title: string }).title).toBe('newest');
  // Older than what it applied (a late retry, a replay) and the same one again: both dropped, both answered 2xx.
  expect(await deliver(event(ahead - 1, 'job.removed', { id }))).toBe(204);
  expect(await deliver(event(ahead, 'job.updated', { ...(job as object), title: 'repeat' }))).toBe(204);
  expect((mirror()[id] as { title: string }).title).toBe('newest');
  expect(await deliver({ id: 'evt_test_1', type: 'webhook.test', timestamp: new Date().toISOString(), data: { subscriptionId: id } })).toBe(204);
  expect((mirror()[id] as { title: string }).title).toBe('newest');
  expect(await deliver(event(ahead + 1, 'job.removed', { id }))).toBe(204);
  expect(mirror()[id]).toBeUndefined();
});
