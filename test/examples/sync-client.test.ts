/**
 * examples/sync-client.ts against the running stack (service + local gateway + MariaDB) while jobs
 * are created (API), changed, closed, sent back to draft, soft-deleted and deleted (plain SQL):
 * its mirror ends equal to the listable jobs, and a process killed in the middle of a sync
 * resumes from its saved position, losing nothing and fetching no applied page again.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as _typeChecked from '../../examples/sync-client'; // npm run lint type-checks the example
import { DEMO, startStack, type Stack } from '../e2e/support';
import type { Parsed } from '../helpers/parsed';

const ROOT = path.resolve(__dirname, '..', '..');

type Job = { id: string; status: string; [field: string]: unknown };
type Mirror = { nextSince: string | null; etag: string | null; jobs: Record<string, Job> };

let stack: Stack;
let dir: string;
let mirrorFile: string;
beforeAll(async () => {
  stack = await startStack('sync_client', { seed: true });
  dir = mkdtempSync(path.join(os.tmpdir(), 'sync-client-'));
  mirrorFile = path.join(dir, 'mirror.json');
}, 60000);
afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * One run of the example with SYNC_ONCE=1, by the command its header documents (npm run -s
 * example:sync, from the repository: it compiles, then runs); `killAfter` applied pages, its whole
 * process group is SIGKILLed instead.
 */
function runExample(opts: { killAfter?: number } = {}): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn('npm', ['run', '-s', 'example:sync', '--prefix', ROOT], {
    detached: true,
    cwd: dir,
    env: {
      ...process.env,
      JOBS_API_URL: stack.url,
      JOBS_API_KEY: DEMO.reader,
      MIRROR_FILE: mirrorFile,
      SYNC_LIMIT: '4',
      SYNC_ONCE: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (opts.killAfter !== undefined && (out.match(/^applied /gm) ?? []).length >= opts.killAfter)
      process.kill(-child.pid!, 'SIGKILL');
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

const readMirror = (): Mirror => JSON.parse(readFileSync(mirrorFile, 'utf8')) as Mirror;

/** The `since` of every change-feed request the service has received so far. */
const feedRequests = () =>
  stack.service.received
    .filter((r) => r.url.startsWith('/api/v1/jobs/changes?'))
    .map((r) => ({
      since: new URL(r.url, 'http://x').searchParams.get('since') ?? '',
      ifNoneMatch: r.headers['if-none-match'],
    }));

async function api(method: string, p: string, key: string, body?: unknown): Promise<Parsed> {
  const res = await fetch(`${stack.url}${p}`, {
    method,
    headers: { 'X-API-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  expect(res.status).toBeLessThan(300);
  return res.json();
}

const create = async (title: string, status = 'active'): Promise<string> =>
  (
    await api('POST', '/api/v1/jobs', DEMO.writer, {
      title,
      department: 'Engineering',
      type: 'full-time',
      description: 'Mirror me',
      status,
    })
  ).data.id;

const sql = (statement: string, id: string, ...values: unknown[]) =>
  stack.service.database.query(`${statement} WHERE id = UNHEX(REPLACE(?, '-', ''))`, [...values, id]);

/** Every listable job (active, open, paused, closed) as the API shows it, by a cursor walk. */
async function listableJobs(): Promise<Record<string, Job>> {
  const jobs: Record<string, Job> = {};
  let cursor: string | null = '';
  while (cursor !== null) {
    const page: Parsed = await api(
      'GET',
      `/api/v1/jobs?status=active,open,paused,closed&limit=100&cursor=${encodeURIComponent(cursor)}`,
      DEMO.reader,
    );
    for (const job of page.data as Job[]) jobs[job.id] = job;
    cursor = page.meta.nextCursor;
  }
  return jobs;
}

test('full sync killed midway, changes meanwhile, resumed: the mirror equals the listable jobs, no page fetched twice', async () => {
  const listedAtStart = Object.keys(await listableJobs());
  expect(listedAtStart.length).toBeGreaterThan(20); // many pages of 4

  // Run 1: a full sync, killed after three applied pages; jobs change while it runs.
  const creating = create('Created during the first run');
  const first = await runExample({ killAfter: 3 });
  expect(first.code).toBeNull(); // killed, not finished
  await creating;
  const saved = readMirror();
  expect(saved.nextSince).not.toBeNull();
  const run1 = feedRequests();
  expect(run1[0]!.since).toBe(''); // from the beginning
  const applied = run1.map((r) => r.since).filter((s) => s !== saved.nextSince);

  // Between runs: API and SQL changes, some to jobs the mirror already holds.
  const [changed, closed, drafted, softDeleted, deleted] = Object.keys(saved.jobs);
  await sql("UPDATE jobs SET title = 'Changed by SQL'", changed!);
  await sql("UPDATE jobs SET status = 'closed'", closed!);
  await sql("UPDATE jobs SET status = 'draft'", drafted!);
  await sql('UPDATE jobs SET deleted_at = NOW()', softDeleted!);
  await sql('DELETE FROM jobs', deleted!);
  const createdBetween = await create('Created between runs', 'open');
  await create('A draft never reaches a mirror', 'draft');

  // Run 2 resumes from the saved position and catches up.
  const second = await runExample();
  expect(second.err).toBe('');
  expect(second.code).toBe(0);
  expect(second.out).toMatch(/^resuming from the saved position/);
  const run2 = feedRequests().slice(run1.length);
  expect(run2[0]!.since).toBe(saved.nextSince);
  for (const r of run2) expect(applied).not.toContain(r.since);

  let mirror = readMirror();
  expect(mirror.jobs).toEqual(await listableJobs());
  expect(mirror.jobs[changed!]!.title).toBe('Changed by SQL');
  expect(mirror.jobs[closed!]!.status).toBe('closed');
  for (const gone of [drafted!, softDeleted!, deleted!]) expect(mirror.jobs[gone]).toBeUndefined();
  expect(mirror.jobs[createdBetween]).toBeDefined();

  // An incremental poll after more changes, then an idle one: a 304 for the ETag it sent.
  const reopened = Object.keys(mirror.jobs).find((id) => mirror.jobs[id]!.status === 'closed')!;
  await sql("UPDATE jobs SET status = 'open'", reopened);
  const createdLast = await create('Created before the last poll', 'paused');
  const third = await runExample();
  expect(third.code).toBe(0);
  mirror = readMirror();
  expect(mirror.jobs).toEqual(await listableJobs());
  expect(mirror.jobs[reopened]!.status).toBe('open');
  expect(mirror.jobs[createdLast]!.status).toBe('paused');

  // The ETag kept is that of the last page, whose URL had the previous position: the first poll
  // at the new position is a 200 with no changes, and from then on an idle poll is a 304.
  expect((await runExample()).out).toContain('applied 0 changes');
  mirror = readMirror();
  const before = feedRequests().length;
  const idle = await runExample();
  expect(idle.code).toBe(0);
  expect(idle.out).toContain('no changes');
  const [poll] = feedRequests().slice(before);
  expect(poll!.since).toBe(mirror.nextSince);
  expect(poll!.ifNoneMatch).toBe(mirror.etag);
  expect(readMirror()).toEqual(mirror);
}, 120000);

test('a saved position the feed refuses (an altered token) starts a full sync into an emptied mirror', async () => {
  const stale: Mirror = {
    nextSince: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', // not a position the feed ever gave
    etag: null,
    jobs: { 'not-a-job-any-more': { id: 'not-a-job-any-more', status: 'open' } },
  };
  writeFileSync(mirrorFile, JSON.stringify(stale));
  const run = await runExample();
  expect(run.code).toBe(0);
  expect(run.err).toMatch(/: full sync from the beginning$/m);
  expect(readMirror().jobs).toEqual(await listableJobs());
}, 60000);
