/**
 * The mirror check as the two examples run it (examples/mirror-check.ts): a mirror corrupted three
 * ways (a job missing, a job that is not listed, one field changed) is found wrong and repaired by
 * examples/sync-client.ts on its next run and by examples/webhook-receiver.ts on start, each in two
 * requests (the check, one bucket), where a full sync of the same jobs takes one request per 500.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as _typeChecked from '../../examples/mirror-check'; // npm run lint type-checks the example
import { insertInBatches } from '../../db/seed';
import { generateJobs } from '../../db/seed-data';
import { DEMO, startStack, type Stack } from '../e2e/support';
import { freePort, listable, ROOT, stopProcessGroup } from './support';

type Job = { id: string; [field: string]: unknown };
type Mirror = { nextSince: string | null; etag: string | null; jobs: Record<string, Job> };

let stack: Stack;
let dir: string;
let mirrorFile: string;
beforeAll(async () => {
  stack = await startStack('mirror_check', { seed: true });
  // Enough jobs that a full sync takes several requests of 500.
  await insertInBatches(stack.service.database.db, generateJobs({ count: 1600, seed: 58, firstNumber: 1000 }));
  dir = mkdtempSync(path.join(os.tmpdir(), 'mirror-check-'));
  mirrorFile = path.join(dir, 'mirror.json');
}, 60_000);
afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ ...process.env, JOBS_API_URL: stack.url, JOBS_API_KEY: DEMO.reader, MIRROR_FILE: mirrorFile });

/** The sync example once (SYNC_ONCE=1): by its documented command the first time (it compiles both), then compiled. */
let compiled = false;
function syncOnce(): Promise<string> {
  const [command, args] = compiled
    ? [process.execPath, [path.join(ROOT, 'dist/examples/sync-client.js')]]
    : ['npm', ['run', '-s', 'example:sync', '--prefix', ROOT]];
  compiled = true;
  const child = spawn(command, args, {
    cwd: dir,
    env: { ...env(), SYNC_ONCE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  return new Promise((resolve, reject) =>
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exited with ${code}: ${out}`)))),
  );
}

/** The receiver example (compiled with the sync example) until its first check is done: its output. */
async function receiverChecks(): Promise<string> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/examples/webhook-receiver.js')], {
    cwd: dir,
    detached: true,
    env: { ...env(), WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`, PORT: String(await freePort()) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (chunk) => (out += chunk));
  try {
    return await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (/^mirror check: /m.test(out)) resolve(out);
      });
      child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}: ${out}`)));
    });
  } finally {
    stopProcessGroup(child);
  }
}

const readMirror = () => JSON.parse(readFileSync(mirrorFile, 'utf8')) as Mirror;
/** Requests the service received for the mirror check (digest or bucket) since `from`. */
const checkRequests = (from: number) =>
  stack.service.received.slice(from).filter((r) => r.url.startsWith('/api/v1/jobs/changes/digest')).length;

const CORRUPTIONS: Array<[string, (jobs: Record<string, Job>) => void]> = [
  ['a job missing', (jobs) => void delete jobs[Object.keys(jobs)[17]!]],
  [
    'a job extra',
    (jobs) => {
      const id = randomUUID();
      jobs[id] = { ...jobs[Object.keys(jobs)[5]!]!, id };
    },
  ],
  ['one field changed', (jobs) => void (jobs[Object.keys(jobs)[42]!]!.title = 'Not the real title')],
];

let fullSyncRequests = 0;
test('a full sync builds the mirror, and the check on the way out finds it exact', async () => {
  const from = stack.service.received.length;
  const out = await syncOnce();
  fullSyncRequests = stack.service.received.slice(from).filter((r) => r.url.startsWith('/api/v1/jobs/changes?')).length;
  expect(out).toMatch(/^mirror check: exact \(\d+ jobs, 1 request\)$/m);
  expect(readMirror().jobs).toEqual(await listable(stack.service.database.db));
  expect(fullSyncRequests).toBeGreaterThanOrEqual(3);
}, 60_000);

test.each(CORRUPTIONS)(
  'the sync client finds %s and repairs it in two requests',
  async (_label, corrupt) => {
    const mirror = readMirror();
    corrupt(mirror.jobs);
    writeFileSync(mirrorFile, JSON.stringify(mirror));
    const from = stack.service.received.length;
    const out = await syncOnce();
    expect(out).toMatch(/^mirror check: 1 bucket differed, repaired in 2 requests/m);
    expect(checkRequests(from)).toBe(2);
    expect(readMirror().jobs).toEqual(await listable(stack.service.database.db));
    console.log(`sync client, ${_label}: repaired in 2 requests (a full sync took ${fullSyncRequests})`);
  },
  60_000,
);

test.each(CORRUPTIONS)(
  'the webhook receiver finds %s on start and repairs it in two requests',
  async (_label, corrupt) => {
    const mirror = readMirror();
    corrupt(mirror.jobs);
    writeFileSync(mirrorFile, JSON.stringify(mirror));
    const from = stack.service.received.length;
    expect(await receiverChecks()).toMatch(/^mirror check: 1 bucket differed, repaired in 2 requests/m);
    expect(checkRequests(from)).toBe(2);
    expect(readMirror().jobs).toEqual(await listable(stack.service.database.db));
    console.log(`webhook receiver, ${_label}: repaired in 2 requests (a full sync took ${fullSyncRequests})`);
  },
  60_000,
);
