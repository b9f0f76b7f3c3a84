// `npm start` on a machine where no database answers: in a network namespace of its own nothing
// listens on 127.0.0.1:3306, so npm start starts the installed MariaDB itself, answers the README's
// first request, keeps the data for the next start, and Ctrl-C leaves no process behind.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ip } from '../harness/netns';

const ROOT = path.resolve(__dirname, '..');
const NAMESPACE = `npm-start-nodb-${process.pid}`;
const README_REQUEST = /curl -s -H 'X-API-Key: ([^']+)' '([^']+)'/.exec(
  readFileSync(path.join(ROOT, 'README.md'), 'utf8'),
);

let dir: string;
beforeAll(() => {
  ip('netns', 'add', NAMESPACE);
  ip('-n', NAMESPACE, 'link', 'set', 'lo', 'up');
  dir = mkdtempSync(path.join(os.tmpdir(), 'npm-start-nodb-'));
});
afterAll(() => {
  try {
    // What a failed test left running there is this test's own: end it, so nothing outlives the run.
    for (const pid of execFileSync('ip', ['netns', 'pids', NAMESPACE], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean))
      process.kill(Number(pid), 'SIGKILL');
    ip('netns', 'del', NAMESPACE);
  } catch {
    // never made
  }
  rmSync(dir, { recursive: true, force: true });
});

/** npm start's environment: this test's Node first on PATH, no DATABASE_URL, the data in this test's folder. */
function environment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    LOCAL_DATABASE_DIR: path.join(dir, 'mysql'),
  };
  delete env.DATABASE_URL;
  return env;
}

interface Run {
  /** Everything npm start printed until it said it was ready, or until it exited (then `code`). */
  started: Promise<{ out: string; code: number | null }>;
  /** Ctrl-C in its terminal: SIGINT to its whole process group; resolves when the process it started has exited. */
  interrupt(): Promise<unknown>;
  /** `kill -9` of its whole process group (npm start and what runs in it); the database runs in a group of its own. */
  kill(): Promise<unknown>;
}

/** `command` in the namespace, in a process group of its own as a terminal's foreground job is. */
function inNamespace(command: string[]): Run {
  const child = spawn('ip', ['netns', 'exec', NAMESPACE, ...command], {
    cwd: ROOT,
    env: environment(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const started = new Promise<{ out: string; code: number | null }>((resolve) => {
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Webhook dispatcher running')) resolve({ out, code: null });
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    void closed.then((code) => resolve({ out, code }));
  });
  return {
    started,
    interrupt() {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
      return closed;
    },
    kill() {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
      return closed;
    },
  };
}

/** The README's first request, sent from inside the namespace. */
function firstRequest(): { status: number; body: { data: { id: string }[] } } {
  const [, key, url] = README_REQUEST!;
  const script =
    'fetch(process.argv[1], { headers: { "X-API-Key": process.argv[2] } })' +
    '.then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.json() })))';
  const out = execFileSync('ip', ['netns', 'exec', NAMESPACE, process.execPath, '-e', script, url!, key!], {
    encoding: 'utf8',
  });
  return JSON.parse(out) as { status: number; body: { data: { id: string }[] } };
}

/** A second npm start after `before` was answered: it says `line`, serves the same jobs, and leaves nothing behind. */
async function startsAgainOnTheSameData(before: ReturnType<typeof firstRequest>, line: RegExp): Promise<void> {
  const second = inNamespace(['npm', 'start']);
  const two = await second.started;
  expect(two.code).toBeNull();
  expect(two.out).toMatch(line);
  const after = firstRequest();
  expect(after.status).toBe(200);
  expect(after.body.data.map((j) => j.id)).toEqual(before.body.data.map((j) => j.id));
  await second.interrupt();
  expect(await leftInNamespace()).toBe('');
}

/** The processes left in the namespace, polled until there are none or 30 s have passed. */
async function leftInNamespace(): Promise<string> {
  const deadline = Date.now() + 30_000;
  let pids: string;
  do {
    pids = execFileSync('ip', ['netns', 'pids', NAMESPACE], { encoding: 'utf8' }).trim();
    if (!pids) return '';
    await new Promise((resolve) => setTimeout(resolve, 500));
  } while (Date.now() < deadline);
  return execFileSync('ps', ['-o', 'pid,args', '-p', pids.split('\n').join(',')], { encoding: 'utf8' });
}

test('the README names its first request', () => {
  expect(README_REQUEST).not.toBeNull();
});

test('npm start with no database answering starts MariaDB itself: the README request answers 200; a second start keeps the data; Ctrl-C leaves nothing running', async () => {
  const first = inNamespace(['npm', 'start']);
  const one = await first.started;
  expect(one.code).toBeNull();
  const line = one.out.split('\n').filter((l) => l.startsWith('Database: '));
  expect(line).toEqual([
    expect.stringMatching(
      /^Database: (MariaDB|MySQL) \S+ \(\S+\) started by npm start on 127\.0\.0\.1:\d+, data in \S+ \(new;/,
    ),
  ]);
  expect(line[0]).toContain(path.join(dir, 'mysql'));
  expect(line[0]).not.toMatch(/:3306\b/);
  const before = firstRequest();
  expect(before.status).toBe(200);
  expect(before.body.data).toHaveLength(2);
  await first.interrupt();
  expect(await leftInNamespace()).toBe('');

  // The demo jobs are loaded only into an empty table, each with a new id: the same ids are the same data.
  await startsAgainOnTheSameData(before, /^Database: .* data in \S+ \(kept from the last run;/m);
}, 300_000);

test('npm start killed outright leaves its database running; the next npm start stops that one and starts on the same data', async () => {
  const first = inNamespace(['npm', 'start']);
  expect((await first.started).code).toBeNull();
  const before = firstRequest();
  await first.kill();
  const left = execFileSync('ip', ['netns', 'pids', NAMESPACE], { encoding: 'utf8' }).trim();
  expect(left).not.toBe('');

  await startsAgainOnTheSameData(
    before,
    /^Database: .*kept from the last run;.*; stopped the one an earlier npm start left running \(pid \d+\)/m,
  );
}, 300_000);

test('with no MariaDB or MySQL installed, one line says how to install one, and npm start exits 1', async () => {
  // ip netns exec gives the command its own mount namespace: the servers' folders are hidden there only.
  const empty = path.join(dir, 'empty');
  mkdirSync(empty);
  const hidden = ['/usr/sbin', '/usr/local/sbin', '/usr/libexec', '/usr/local/bin'].filter((d) => existsSync(d));
  const mounts = hidden.map((d) => `mount --bind ${empty} ${d}`).join(' && ');
  const run = inNamespace(['sh', '-c', `${mounts} && exec npm start`]);
  const { out, code } = await run.started;
  expect(code).toBe(1);
  // npm's own lines (the script it runs, that it failed) aside, npm start said one thing.
  const said = out.split('\n').filter((l) => l.trim() && !/^(> |npm error)/.test(l));
  expect(said).toEqual([
    expect.stringMatching(
      /^No database: .*sudo apt-get install mariadb-server.*brew install mariadb, or brew install mysql/,
    ),
  ]);
}, 120_000);
