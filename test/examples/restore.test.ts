/**
 * The database restored from a backup (docs/operations.md, "Backup and restore") under a partner that
 * mirrors by pull (examples/sync-client.ts) and by push (examples/webhook-receiver.ts), both past the
 * backup: after the restore and more changes than they were ahead by, both mirrors equal a fresh full
 * sync, and no event id was ever sent with two different bodies; with the dispatcher stopped during
 * the restore, as documented, and left running through it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newHistoryLog } from '../../service/feed-history';
import { createLogger } from '../../service/logger';
import { startDispatcher, type Dispatcher } from '../../dispatcher/dispatcher';
import { DEMO, startStack, type Stack } from '../e2e/support';
import { dumpDatabase, loadDump } from '../helpers/backup';
import { memoryLog } from '../helpers/service';
import { limitsOutOfTheWay } from '../helpers/rate-limits';
import {
  converges,
  exampleWebhookSettings,
  freePort,
  listable,
  mirrorJobs,
  ROOT,
  startReceiverExample,
  stopProcessGroup,
  changeListedJobs,
} from './support';

const settings = exampleWebhookSettings();

let stack: Stack;
let dispatcher: Dispatcher | undefined;
let receiver: ChildProcess | undefined;
let recorder: http.Server;
let dir: string;
const bodies = new Map<string, Set<string>>();
const logs: string[] = [];

const dispatch = () =>
  startDispatcher({ db: stack.service.database.db, settings, logger: createLogger('info', memoryLog(logs)) });

beforeAll(async () => {
  stack = await startStack('restore', {
    seed: true,
    // The service and the dispatcher here share one database handle: whichever numbers first after a restore tells the operator.
    onNewHistory: newHistoryLog(createLogger('info', memoryLog(logs))),
    webhooks: settings,
    // Two restores' worth of changes in under a minute: the quotas out of the way (they are another test's).
    edit: limitsOutOfTheWay,
  });
  dispatcher = dispatch();
  dir = mkdtempSync(path.join(os.tmpdir(), 'restore-'));
  // Every body each event id was sent with.
  recorder = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      bodies.set(id, (bodies.get(id) ?? new Set()).add(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
}, 60_000);

afterAll(async () => {
  stopProcessGroup(receiver);
  await dispatcher?.stop();
  recorder?.close();
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

let run = 0;
const pullMirror = () => path.join(dir, `pull-${run}.json`);
const pushMirror = () => path.join(dir, `push-${run}.json`);

/** The sync example once, by its documented command (SYNC_ONCE=1). */
function syncOnce(): Promise<string> {
  const child = spawn('npm', ['run', '-s', 'example:sync', '--prefix', ROOT], {
    cwd: dir,
    env: {
      ...process.env,
      JOBS_API_URL: stack.url,
      JOBS_API_KEY: DEMO.reader,
      MIRROR_FILE: pullMirror(),
      SYNC_ONCE: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  return new Promise((resolve, reject) =>
    child.once('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`sync example exited with ${code}: ${out}`)),
    ),
  );
}

const subscribe = async (url: string) => {
  const res = await fetch(`${stack.url}/api/v1/webhooks`, {
    method: 'POST',
    headers: { 'X-API-Key': DEMO.reader, 'Content-Type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { id: string; secret: string } }).data;
};
const unsubscribe = async (id: string) => {
  expect(
    (await fetch(`${stack.url}/api/v1/webhooks/${id}`, { method: 'DELETE', headers: { 'X-API-Key': DEMO.reader } }))
      .status,
  ).toBe(204);
};

/** `count` changes as partners see them: half created through the API, half renamed by SQL. */
const changes = (count: number, label: string) =>
  changeListedJobs(stack, label, Math.ceil(count / 2), Math.floor(count / 2));

test.each([
  ['stopped while the backup is loaded, as documented', true],
  ['left running through the restore', false],
])(
  'dispatcher %s: after a restore and more changes than their lead, the pull and the push mirror are exact, and no event id names two bodies',
  async (_how, stopDispatcher) => {
    run++;
    const db = stack.service.database.db;
    const port = await freePort();
    const recording = await subscribe(`http://127.0.0.1:${(recorder.address() as { port: number }).port}/record`);
    const hooks = await subscribe(`http://127.0.0.1:${port}/hooks`);
    const started = startReceiverExample({
      apiUrl: stack.url,
      secret: hooks.secret,
      port,
      mirrorFile: pushMirror(),
      cwd: dir,
    });
    receiver = started.child;
    await started.ready;
    await syncOnce();

    await changes(5, 'Before the backup');
    await converges(db, pushMirror());
    await syncOnce();
    const backup = dumpDatabase(stack.service.database.name);

    // Ten changes both partners apply, which the restore then undoes.
    await changes(10, 'Lost');
    await converges(db, pushMirror());
    await syncOnce();
    expect(
      Object.values(mirrorJobs(pullMirror())).filter((job) =>
        String((job as { title: string }).title).startsWith('Lost'),
      ).length,
    ).toBeGreaterThanOrEqual(10);

    // The documented order: the dispatcher stopped, the backup loaded, the dispatcher started. Left running, its
    // window of the feed must notice the restore and never serve what it undid.
    const announced = logs.filter((line) => line.includes('the change feed starts a new history')).length;
    if (stopDispatcher) await dispatcher!.stop();
    loadDump(stack.service.database.name, backup);
    if (stopDispatcher) dispatcher = dispatch();
    await changes(25, 'After the restore');

    await converges(db, pushMirror(), 30_000);
    expect(await syncOnce()).toMatch(/full sync from the beginning/);
    expect(mirrorJobs(pullMirror())).toEqual(await listable(db));
    expect(started.output()).toMatch(/full sync from the beginning/);
    expect(logs.join('\n')).not.toMatch(/"level":50/);
    // The operator is told once, by whichever process numbered first after the restore.
    expect(logs.filter((line) => line.includes('the change feed starts a new history'))).toHaveLength(announced + 1);

    const twice = [...bodies].filter(([, sent]) => sent.size > 1).map(([id]) => id);
    expect(twice).toEqual([]);
    expect(bodies.size).toBeGreaterThanOrEqual(40 * run);
    stopProcessGroup(receiver);
    await unsubscribe(hooks.id);
    await unsubscribe(recording.id);
  },
  120_000,
);
