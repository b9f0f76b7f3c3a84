/**
 * A restore nothing changes after (docs/operations.md, "Backup and restore"): the backup is taken, then 20
 * jobs are created and 8 changed, then the backup is loaded back and the feed stays quiet. The push-only
 * partner (examples/webhook-receiver.ts) is told at once by a feed.restored event, catches up through the
 * feed, is refused its saved position and syncs in full: within 30 s its mirror equals a full sync.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDispatcher, type Dispatcher } from '../../dispatcher/dispatcher';
import { createLogger } from '../../service/logger';
import { DEMO, startStack, type Stack } from '../e2e/support';
import { dumpDatabase, loadDump } from '../helpers/backup';
import { memoryLog } from '../helpers/service';
import {
  converges,
  exampleWebhookSettings,
  freePort,
  listable,
  mirrorJobs,
  startReceiverExample,
  stopProcessGroup,
  changeListedJobs,
} from './support';

const settings = exampleWebhookSettings();
const TOLD_WITHIN_MS = 30_000;

let stack: Stack;
let dispatcher: Dispatcher | undefined;
let receiver: ChildProcess | undefined;
let dir: string;
const logs: string[] = [];

const dispatch = () =>
  startDispatcher({ db: stack.service.database.db, settings, logger: createLogger('info', memoryLog(logs)) });

beforeAll(async () => {
  stack = await startStack('restore_quiet', { seed: true, webhooks: settings });
  dir = mkdtempSync(path.join(os.tmpdir(), 'restore-quiet-'));
}, 60_000);

afterAll(async () => {
  stopProcessGroup(receiver);
  await dispatcher?.stop();
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

const api = (pathname: string, init: RequestInit = {}) =>
  fetch(`${stack.url}/api/v1${pathname}`, {
    ...init,
    headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json', ...init.headers },
  });

test('a restore with no change after it reaches the example receiver at once: its mirror equals a full sync within 30 s', async () => {
  const db = stack.service.database.db;
  dispatcher = dispatch();
  const port = await freePort();
  const created = await api('/webhooks', {
    method: 'POST',
    headers: { 'X-API-Key': DEMO.reader },
    body: JSON.stringify({ url: `http://127.0.0.1:${port}/hooks` }),
  });
  expect(created.status).toBe(201);
  const hook = ((await created.json()) as { data: { id: string; secret: string } }).data;
  const mirror = path.join(dir, 'push.json');
  const started = startReceiverExample({ apiUrl: stack.url, secret: hook.secret, port, mirrorFile: mirror, cwd: dir });
  receiver = started.child;
  await started.ready;
  const backup = dumpDatabase(stack.service.database.name);

  // After the backup: 20 creates and 8 updates, which the receiver applies and the restore then undoes.
  await changeListedJobs(stack, 'Lost', 20, 8);
  await converges(db, mirror);
  const lost = Object.values(mirrorJobs(mirror)).map((job) => String((job as { title: string }).title));
  expect(lost.filter((title) => /^(Lost|Stale) /.test(title))).toHaveLength(28);

  // The documented restore: the dispatcher stopped, the backup loaded, the dispatcher started; then nothing changes.
  await dispatcher.stop();
  loadDump(stack.service.database.name, backup);
  const restoredAt = Date.now();
  dispatcher = dispatch();
  const want = await listable(db);
  expect(Object.values(want).filter((job) => /^(Lost|Stale) /.test(String((job as { title: string }).title)))).toEqual(
    [],
  );

  await converges(db, mirror, TOLD_WITHIN_MS);
  expect(Date.now() - restoredAt).toBeLessThan(TOLD_WITHIN_MS);
  expect(mirrorJobs(mirror)).toEqual(want);
  expect(started.output()).toMatch(/the feed was restored from a backup/);
  expect(started.output()).toMatch(/full sync from the beginning/);
  // Told by the event, not by a change: the feed is as the backup left it, and the event is in the attempts.
  expect(await listable(db)).toEqual(want);
  const told = async () => {
    const res = await api(`/webhooks/${hook.id}/attempts`, { headers: { 'X-API-Key': DEMO.reader } });
    return (
      (await res.json()) as { data: Array<{ eventId: string; position: string | null; status: number }> }
    ).data.filter((attempt) => /^evt_[0-9a-f]{16}_restored$/.test(attempt.eventId));
  };
  // Attempts are written with the dispatcher's next flush (a quarter second).
  for (let waited = 0; (await told()).length === 0 && waited < 5000; waited += 100)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await told()).toEqual([expect.objectContaining({ position: null, status: 204 })]);
  expect(logs.join('\n')).not.toMatch(/"level":50/);
}, 90_000);
