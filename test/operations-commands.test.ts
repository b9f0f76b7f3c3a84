/**
 * docs/operations.md's own commands, run as written on a built checkout: the npm scripts of its
 * table that change or read the database, "The service without a gateway" (its curl block against
 * `npm run service`) and "Replicas" (the same service reading through DATABASE_READ_URLS). Only the
 * host's port and the database's name are this test's own; every command is the page's.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { buildDist } from './helpers/built';
import { runDatabasePrefix } from './helpers/database';
import { testServerUrl } from './helpers/server';

const ROOT = path.join(__dirname, '..');
const page = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
const DATABASE = `${testServerUrl()}/${runDatabasePrefix()}${process.env.JEST_WORKER_ID ?? '0'}_operations`;

/** The fenced block under `heading`, as its lines. */
function block(heading: string): string {
  const section = page.slice(page.indexOf(heading));
  const match = /```(?:sh|bash)\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error(`docs/operations.md: no sh block under ${heading}`);
  return match[1]!;
}

/** The table row's command, exactly as the page shows it. */
function tableCommand(command: string): string {
  expect(page).toContain(`| \`${command}\` |`);
  return command;
}

const sh = (command: string, env: NodeJS.ProcessEnv = {}) =>
  spawnSync('bash', ['-c', command], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, DATABASE_URL: DATABASE, ...env },
    timeout: 120_000,
  });

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `npm run service` with `env`, until its banner; stop() sends SIGTERM to its process group. */
async function npmRunService(env: NodeJS.ProcessEnv): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn('npm', ['run', '-s', 'service'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, DATABASE_URL: DATABASE, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  const exited = new Promise((resolve) => child.once('close', resolve));
  const deadline = Date.now() + 60_000;
  while (!/listening on/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm run service did not start: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    port,
    async stop() {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}

beforeAll(async () => {
  await buildDist();
  sh(`mariadb -h127.0.0.1 -uroot -e 'drop database if exists \`${DATABASE.split('/').pop()}\`'`);
}, 300_000);
afterAll(() => {
  sh(`mariadb -h127.0.0.1 -uroot -e 'drop database if exists \`${DATABASE.split('/').pop()}\`'`);
});

test('the table: db:migrate creates and migrates, db:seed loads the demo set, --jobs appends, db:generate finds the schema and migrations agree', () => {
  const migrate = sh(`npm run -s ${tableCommand('npm run db:migrate').slice('npm run '.length)}`);
  expect(migrate.status).toBe(0);
  const seed = sh(tableCommand('npm run db:seed'));
  expect(seed.status).toBe(0);
  const count = () =>
    Number(
      sh(`mariadb -h127.0.0.1 -uroot -N -e 'select count(*) from \`${DATABASE.split('/').pop()}\`.jobs'`).stdout.trim(),
    );
  const demo = count();
  expect(demo).toBeGreaterThan(0);
  expect(sh(tableCommand('npm run db:seed -- --jobs 100000')).status).toBe(0);
  expect(count()).toBe(demo + 100_000);
  const before = readdirSync(path.join(ROOT, 'db/migrations')).sort();
  const generate = sh(tableCommand('npm run db:generate'));
  expect(`${generate.stdout}${generate.stderr}`).toMatch(/No schema changes/);
  expect(readdirSync(path.join(ROOT, 'db/migrations')).sort()).toEqual(before);
}, 240_000);

test('"Backup and restore": its block backs the database up and restores it whole; db:restored starts a new history of the feed', () => {
  const url = `${DATABASE}_backup`;
  const name = url.split('/').pop()!;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'backup-'));
  const inDir = (command: string) =>
    spawnSync('bash', ['-c', command], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: url },
      timeout: 120_000,
    });
  const query = (statement: string) => inDir(`mariadb -N -e ${JSON.stringify(statement)} ${name}`).stdout.trim();
  try {
    expect(sh('npm run -s db:migrate && npm run -s db:seed', { DATABASE_URL: url }).status).toBe(0);
    const before = query('select count(*), max(seq) from job_changes');
    // The page's commands, with this test's database for `jobs`.
    const commands = block('## Backup and restore')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => line.replace(/\bjobs\b(?!-)/g, name));
    expect(commands).toHaveLength(3);
    for (const command of commands) {
      const run = inDir(command);
      expect({ command, status: run.status, stderr: run.stderr }).toEqual({ command, status: 0, stderr: '' });
    }
    expect(query('select count(*), max(seq) from job_changes')).toBe(before);
    expect(query('select count(*) from information_schema.triggers where trigger_schema = database()')).not.toBe('0');
    const histories = Number(query('select count(*) from job_change_histories'));
    const restored = sh(tableCommand('npm run db:restored').replace('npm run', 'npm run -s'), { DATABASE_URL: url });
    expect(restored.stdout).toMatch(
      /starts history [0-9a-f]{16} at \d+: positions past \d+ of the old one are refused/,
    );
    expect(Number(query('select count(*) from job_change_histories'))).toBe(histories + 1);
    expect(restored.stdout).toMatch(/Rebuilt the mirror check's digests from \d+ listable jobs/);
    const digests = sh(tableCommand('npm run db:digests').replace('npm run', 'npm run -s'), { DATABASE_URL: url });
    expect(digests.stdout).toMatch(/from \d+ listable jobs: they equal those kept/);
  } finally {
    inDir(`mariadb -e 'drop database if exists \`${name}\`'`);
    rmSync(dir, { recursive: true, force: true });
  }
}, 240_000);

test('"The service without a gateway": its curl block against npm run service answers as the page says', async () => {
  const service = await npmRunService({});
  try {
    const lines = block('## The service without a gateway')
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${service.port}`)
      .replace(/\\\n\s*/g, '');
    const outputs = lines
      .split('\n')
      .filter((line) => line.startsWith('curl'))
      .map((line) => sh(line).stdout);
    expect(JSON.parse(outputs[0]!)).toMatchObject({ data: { title: 'QA Lead', status: 'draft' } });
    expect(JSON.parse(outputs[1]!)).toMatchObject({ data: expect.any(Array), meta: { page: 1, limit: 5 } });
    expect(JSON.parse(outputs[2]!)).toEqual({ status: 'ok' });
    expect(JSON.parse(outputs[3]!)).toEqual({ status: 'ready' });
  } finally {
    await service.stop();
  }
}, 120_000);

test('"Replicas": npm run service with DATABASE_READ_URLS serves reads through the replica pool', async () => {
  const command = block('## Replicas');
  expect(command).toMatch(/DATABASE_READ_URLS=.*\\\nnpm run service/);
  // The test has one server: the "replica" is the primary under a second pool, as the variable takes it.
  const service = await npmRunService({ DATABASE_READ_URLS: DATABASE });
  try {
    const listed = await (
      await fetch(`http://127.0.0.1:${service.port}/api/v1/jobs?limit=1`, {
        headers: { 'X-Consumer-ID': 'operations-test' },
      })
    ).json();
    expect(listed).toMatchObject({ data: [expect.objectContaining({ id: expect.any(String) })] });
    expect(await (await fetch(`http://127.0.0.1:${service.port}/readyz`)).json()).toEqual({ status: 'ready' });
  } finally {
    await service.stop();
  }
}, 120_000);

// `npm run lint`, the table's other command, is run by npm test itself (scripts/test.sh counts it as a test).
test('the table: npm run build succeeds on the checkout', () => {
  const [build, lint] = tableCommand('npm run build` / `npm run lint').split('` / `');
  expect(lint).toBe('npm run lint');
  const run = sh(build!);
  expect({ command: build, status: run.status, output: run.status === 0 ? '' : `${run.stdout}${run.stderr}` }).toEqual({
    command: build,
    status: 0,
    output: '',
  });
}, 240_000);
