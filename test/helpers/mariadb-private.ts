import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from '../../harness/real-kong';

const run = promisify(execFile);

// Small enough to start in a second or two.
const SERVER_OPTIONS = ['--innodb-log-file-size=4M', '--innodb-buffer-pool-size=32M'];

export interface PrivateMariaDb {
  port: number;
  /** mysql://root@127.0.0.1:<port>/<database> (root has no password here). */
  url(database: string): string;
  /** Stops the server (SIGTERM, as an operator's stop); its port refuses connections until start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it for good and removes its data directory. */
  remove(): Promise<void>;
}

/**
 * A mariadbd of the test's own, on its own port and data directory in a temp dir: a test may stop
 * it without touching the shared server on 3306.
 */
export async function startPrivateMariaDb(): Promise<PrivateMariaDb> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jobs-private-db-'));
  const datadir = path.join(dir, 'data');
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();

  const start = async () => {
    const server = spawn(
      'mariadbd',
      [
        '--no-defaults',
        `--user=${os.userInfo().username}`,
        `--datadir=${datadir}`,
        // Its own tmpdir: a starting mariadbd deletes every #sql* file in its tmpdir, the shared server's live temp tables too.
        `--tmpdir=${dir}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${path.join(dir, 'mysqld.sock')}`,
        `--pid-file=${path.join(dir, 'mysqld.pid')}`,
        `--log-error=${path.join(dir, 'mysqld.err')}`,
        ...SERVER_OPTIONS,
      ],
      { stdio: 'ignore' },
    );
    child = server;
    exited = new Promise((resolve) => server.once('exit', resolve));
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (server.exitCode !== null)
        throw new Error(`mariadbd exited (${server.exitCode}); see ${path.join(dir, 'mysqld.err')}`);
      try {
        await (await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' })).end();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await run('mariadb-install-db', [
      '--no-defaults',
      `--user=${os.userInfo().username}`,
      `--datadir=${datadir}`,
      `--tmpdir=${dir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      ...SERVER_OPTIONS,
    ]);
    await start();
  } catch (error) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    stop,
    start,
    async remove() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
