/**
 * examples/webhook-receiver.ts against the running stack (service + local gateway + MariaDB + a
 * dispatcher): subscribed through the gateway, it ends with the same mirror the change feed gives,
 * drops a forged delivery, and after being killed and restarted catches up through the feed and
 * still ends exact. Its loopback address is allowed explicitly, so the SSRF guard runs.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as _typeChecked from '../../examples/webhook-receiver'; // npm run lint type-checks the example
import { signer } from '../../service/webhooks/signing';
import { createLogger } from '../../service/logger';
import { startDispatcher, type Dispatcher } from '../../dispatcher/dispatcher';
import { DEMO, startStack, type Stack } from '../e2e/support';
import { memoryLog } from '../helpers/service';
import {
  converges as convergesTo,
  exampleWebhookSettings,
  freePort,
  mirrorJobs,
  startReceiverExample,
  stopProcessGroup,
} from './support';

const settings = exampleWebhookSettings();

let stack: Stack;
let dispatcher: Dispatcher;
let dir: string;
let port: number;
let receiver: ChildProcess | undefined;

beforeAll(async () => {
  stack = await startStack('webhook_receiver', { seed: true, webhooks: settings });
  dispatcher = startDispatcher({
    db: stack.service.database.db,
    settings,
    logger: createLogger('info', memoryLog([])),
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-receiver-'));
  port = await freePort();
}, 60000);

afterAll(async () => {
  stopProcessGroup(receiver);
  await dispatcher?.stop();
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

const mirrorFile = () => path.join(dir, 'mirror.json');
const mirror = () => mirrorJobs(mirrorFile());
const converges = (timeoutMs?: number) => convergesTo(stack.service.database.db, mirrorFile(), timeoutMs);

async function startReceiver(secret: string): Promise<void> {
  const started = startReceiverExample({ apiUrl: stack.url, secret, port, mirrorFile: mirrorFile(), cwd: dir });
  receiver = started.child;
  await started.ready;
}

const sql = (statement: string, values?: unknown[]) => stack.service.database.query(statement, values);
const post = (body: unknown) =>
  fetch(`${stack.url}/api/v1/webhooks`, {
    method: 'POST',
    headers: { 'X-API-Key': DEMO.reader, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

test('subscribed after its full sync, it mirrors every change; a forged delivery is refused; killed and restarted, it catches up and ends exact', async () => {
  const subscribed = await post({ url: `http://127.0.0.1:${port}/hooks` });
  expect(subscribed.status).toBe(201);
  const { data } = (await subscribed.json()) as { data: { secret: string } };
  await startReceiver(data.secret);
  await converges();

  await sql(
    "update jobs set title = concat(title, ' (updated)') where status = 'active' and deleted_at is null limit 3",
  );
  await sql("update jobs set deleted_at = now(3) where status = 'open' and deleted_at is null limit 2");
  await converges();

  const forged = await fetch(`http://127.0.0.1:${port}/hooks`, {
    method: 'POST',
    headers: {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ id: 'evt_1', type: 'job.removed', position: 'x', data: { id: Object.keys(mirror())[0] } }),
  });
  expect(forged.status).toBe(401);
  await converges(1000);

  stopProcessGroup(receiver);
  await sql("update jobs set status = 'closed' where status = 'active' and deleted_at is null limit 2");
  await sql("delete from jobs where status = 'paused' limit 1");
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await startReceiver(data.secret);
  await converges();
});

test('it drops an event at or below the last sequence it applied, and answers a test event without applying it', async () => {
  const secret = (
    (await (await post({ url: `http://127.0.0.1:${port}/other` })).json()) as { data: { secret: string } }
  ).data.secret;
  stopProcessGroup(receiver);
  await startReceiver(secret);
  const deliver = async (event: Record<string, unknown>) => {
    const body = JSON.stringify(event);
    const res = await fetch(`http://127.0.0.1:${port}/hooks`, {
      method: 'POST',
      headers: { ...signer([secret])(String(event.id), new Date(), body), 'content-type': 'application/json' },
      body,
    });
    return res.status;
  };
  const [id, job] = Object.entries(mirror())[0]!;
  const { history } = JSON.parse(readFileSync(mirrorFile(), 'utf8')) as { history: string };
  expect(history).toMatch(/^[0-9a-f]{16}$/);
  const ahead = 1_000_000_000;
  const event = (sequence: number, type: string, data: unknown) => ({
    id: `evt_${history}_${sequence}`,
    type,
    history,
    timestamp: new Date().toISOString(),
    position: 'p',
    sequence,
    data,
  });
  expect(await deliver(event(ahead, 'job.updated', { ...(job as object), title: 'newest' }))).toBe(204);
  expect((mirror()[id] as { title: string }).title).toBe('newest');
  // Older than what it applied (a late retry, a replay) and the same one again: both dropped, both answered 2xx.
  expect(await deliver(event(ahead - 1, 'job.removed', { id }))).toBe(204);
  expect(await deliver(event(ahead, 'job.updated', { ...(job as object), title: 'repeat' }))).toBe(204);
  expect((mirror()[id] as { title: string }).title).toBe('newest');
  expect(
    await deliver({
      id: 'evt_test_1',
      type: 'webhook.test',
      timestamp: new Date().toISOString(),
      data: { subscriptionId: id },
    }),
  ).toBe(204);
  expect((mirror()[id] as { title: string }).title).toBe('newest');
  expect(await deliver(event(ahead + 1, 'job.removed', { id }))).toBe(204);
  expect(mirror()[id]).toBeUndefined();
});
