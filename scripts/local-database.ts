/**
 * npm start's own database: when DATABASE_URL is unset and nothing answers on 127.0.0.1:3306, a
 * MariaDB (mariadbd) or MySQL (mysqld) installed on this machine, started on a port of its own with
 * its data in a folder of the checkout (.local/mysql, kept between runs), stopped with npm start.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Beside PATH, where Debian, Fedora and Homebrew (Apple silicon and Intel) install the servers. */
const USUAL_DIRS = [
  '/usr/sbin',
  '/usr/local/sbin',
  '/usr/libexec',
  '/opt/homebrew/bin',
  '/opt/homebrew/opt/mariadb/bin',
  '/opt/homebrew/opt/mysql/bin',
  '/usr/local/bin',
  '/usr/local/opt/mariadb/bin',
  '/usr/local/opt/mysql/bin',
];

const NO_SERVER =
  'No database: DATABASE_URL is unset, nothing answers on 127.0.0.1:3306, and no MariaDB or MySQL server is installed. ' +
  'Install one (Debian/Ubuntu: sudo apt-get install mariadb-server; macOS: brew install mariadb, or brew install mysql) and run npm start again, or set DATABASE_URL.';

export interface LocalDatabase {
  /** DATABASE_URL for the service and the dispatcher. */
  url: string;
  /** The one line npm start prints: which server, where it listens, where its data is. */
  line: string;
  stop(): Promise<void>;
}

interface Server {
  binary: string;
  product: 'MariaDB' | 'MySQL';
  version: string;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first of `names` found on PATH, then in the usual places. */
function findProgram(names: string[], env: NodeJS.ProcessEnv, first: string[] = []): string | null {
  const dirs = [...first, ...(env.PATH ?? '').split(path.delimiter).filter(Boolean), ...USUAL_DIRS];
  for (const name of names) {
    for (const dir of dirs) if (executable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

function findServer(env: NodeJS.ProcessEnv): Server | null {
  const binary = findProgram(['mariadbd', 'mysqld'], env);
  if (!binary) return null;
  const about = execFileSync(binary, ['--version'], { encoding: 'utf8' });
  return {
    binary,
    product: /mariadb/i.test(about) ? 'MariaDB' : 'MySQL',
    version: /Ver\s+(\d+\.\d+\.\d+)/.exec(about)?.[1] ?? 'of unknown version',
  };
}

/** Whether something accepts a TCP connection at host:port within `ms`. */
function answers(host: string, port: number, ms = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** mariadbd and mysqld refuse to run as root unless told to. */
const asUser = (): string[] => (process.getuid?.() === 0 ? ['--user=root'] : []);

/** A new data folder with root and no password: made aside, then renamed, so a failed start leaves no half-made one. */
function initialise(server: Server, dataDir: string, env: NodeJS.ProcessEnv): void {
  const partial = `${dataDir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(path.dirname(dataDir), { recursive: true });
  if (server.product === 'MariaDB') {
    const home = path.dirname(path.dirname(realpathSync(server.binary)));
    const installer = findProgram(['mariadb-install-db', 'mysql_install_db'], env, [
      path.dirname(server.binary),
      path.join(home, 'bin'),
      path.join(home, 'scripts'),
    ]);
    if (!installer) throw new Error(`${server.binary} has no mariadb-install-db beside it to initialise ${dataDir}`);
    execFileSync(
      installer,
      [
        '--no-defaults',
        `--basedir=${home}`,
        `--datadir=${partial}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        ...asUser(),
      ],
      { stdio: 'pipe' },
    );
  } else {
    execFileSync(server.binary, ['--no-defaults', '--initialize-insecure', `--datadir=${partial}`, ...asUser()], {
      stdio: 'pipe',
    });
  }
  renameSync(partial, dataDir);
}

/** A path inside the current folder relative to it, any other in full. */
function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') ? relative : file;
}

function lastLines(file: string, n: number): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A server that an earlier npm start left running on this data folder (npm start itself was
 * killed): stopped, as it holds the folder's locks. Its pid, or null when there was none. Only a
 * process started on this very folder is stopped: a pid file that outlived a reboot may name another.
 */
async function stopLeftOver(pidFile: string, dataDir: string): Promise<number | null> {
  const pid = Number(existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() : NaN);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return null;
  let args: string;
  try {
    args = execFileSync('ps', ['-p', String(pid), '-o', 'args='], { encoding: 'utf8' });
  } catch {
    return null;
  }
  if (!args.trim().split(/\s+/).includes(`--datadir=${dataDir}`)) return null;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 30_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  return pid;
}

/** Resolves when the server accepts connections; rejects if it exits first or takes longer than `ms`. */
async function ready(child: ChildProcess, port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error('it exited');
    if (await answers('127.0.0.1', port, 500)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`it did not answer within ${ms / 1000} s`);
}

/**
 * The database npm start uses: null when DATABASE_URL is set or a server answers on
 * 127.0.0.1:3306 (npm start connects as it always has); otherwise a server of its own, data in
 * `dataDir`. Throws NO_SERVER when none is installed, and why when one would not start.
 */
export async function localDatabase(env: NodeJS.ProcessEnv, dataDir: string): Promise<LocalDatabase | null> {
  if (env.DATABASE_URL || (await answers('127.0.0.1', 3306))) return null;
  const server = findServer(env);
  if (!server) throw new Error(NO_SERVER);
  const kept = existsSync(path.join(dataDir, 'mysql'));
  const where = shown(dataDir);
  const log = `${dataDir}.log`;
  try {
    if (!kept) initialise(server, dataDir, env);
  } catch (err) {
    const detail = (err as { stderr?: Buffer }).stderr?.toString().trim().split('\n').slice(-3).join(' ');
    throw new Error(
      `${server.product} (${server.binary}) could not initialise ${where}: ${detail || (err as Error).message}`,
      { cause: err },
    );
  }

  const pidFile = `${dataDir}.pid`;
  const leftOver = await stopLeftOver(pidFile, dataDir);
  const port = await freePort();
  const logFd = openSync(log, 'a');
  // Its own process group: Ctrl-C reaches npm start, which stops the database after the service.
  const child = spawn(
    server.binary,
    [
      '--no-defaults',
      `--datadir=${dataDir}`,
      `--pid-file=${pidFile}`,
      '--bind-address=127.0.0.1',
      `--port=${port}`,
      `--socket=${path.join(os.tmpdir(), `jobs-npm-start-${port}.sock`)}`,
      ...asUser(),
    ],
    { stdio: ['ignore', logFd, logFd], detached: true },
  );
  closeSync(logFd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // npm start exiting by any path (an error, an early Ctrl-C) stops it too: never left running alone.
  const orphaned = (): void => void child.kill('SIGTERM');
  process.on('exit', orphaned);
  try {
    await ready(child, port, 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    process.off('exit', orphaned);
    throw new Error(
      `${server.product} (${server.binary}) did not start: ${(err as Error).message}. ${log}:\n${lastLines(log, 5)}`,
      { cause: err },
    );
  }

  return {
    url: `mysql://root@127.0.0.1:${port}/jobs`,
    line: `Database: ${server.product} ${server.version} (${server.binary}) started by npm start on 127.0.0.1:${port}, data in ${where} (${kept ? 'kept from the last run' : 'new'}; log ${shown(log)})${leftOver ? `; stopped the one an earlier npm start left running (pid ${leftOver})` : ''}`,
    async stop() {
      process.off('exit', orphaned);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
