/**
 * examples/sync-client.ts over a gateway whose read limit is two requests a second: it gets 429s
 * with Retry-After from the gateway, waits as told, and still finishes a correct full sync and its mirror check.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEMO, startStack, type Stack } from '../e2e/support';

const ROOT = path.resolve(__dirname, '..', '..');

let stack: Stack;
let dir: string;
beforeAll(async () => {
  stack = await startStack('sync_client_backoff', {
    seed: true,
    edit: (s) => {
      const read = s.services[0].routes.find((r: { name: string }) => r.name === 'jobs-read');
      const limit = read.plugins.find((p: { name: string }) => p.name === 'job-rate-limits');
      limit.config = { ...limit.config, second: 2, minute: undefined, hour: undefined };
    },
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'sync-backoff-'));
}, 60000);
afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('on 429 it waits Retry-After and carries on; the mirror checks exact and equals the listable jobs', async () => {
  const mirrorFile = path.join(dir, 'mirror.json');
  const child = spawn(
    process.execPath,
    ['-r', path.join(ROOT, 'test/helpers/register-ts.js'), path.join(ROOT, 'examples/sync-client.ts')],
    {
      cwd: dir,
      env: {
        ...process.env,
        JOBS_API_URL: stack.url,
        JOBS_API_KEY: DEMO.reader,
        MIRROR_FILE: mirrorFile,
        SYNC_LIMIT: '10',
        SYNC_ONCE: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise((resolve) => child.once('close', resolve));

  expect(code).toBe(0);
  expect(err).toMatch(/^429 Rate limit exceeded: waiting 1s$/m);
  const pages = stack.service.received.filter((r) => r.url.startsWith('/api/v1/jobs/changes?'));
  // Every page was fetched once: the refused requests never reached the service.
  expect(new Set(pages.map((r) => r.url)).size).toBe(pages.length);
  expect((out.match(/^applied /gm) ?? []).length).toBe(pages.length);
  // The check's request waited out its 429 too, rather than giving up until the next interval.
  expect(out).toMatch(/^mirror check: exact \(\d+ jobs, 1 request\)$/m);

  await new Promise((r) => setTimeout(r, 1100)); // a fresh second for the check's own request
  const res = await fetch(`${stack.url}/api/v1/jobs?status=active,open,paused,closed&limit=100`, {
    headers: { 'X-API-Key': DEMO.reader },
  });
  const listed = (await res.json()) as { data: Array<{ id: string }>; meta: { total: number } };
  expect(listed.meta.total).toBeLessThanOrEqual(100);
  const mirror = JSON.parse(readFileSync(mirrorFile, 'utf8')) as { jobs: Record<string, unknown> };
  expect(mirror.jobs).toEqual(Object.fromEntries(listed.data.map((j) => [j.id, j])));
}, 90000);
