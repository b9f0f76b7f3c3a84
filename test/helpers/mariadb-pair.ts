import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from '../../harness/real-kong';

const run = promisify(execFile);

// Small enough to start in a second or two; these servers hold a few hundred rows.
const SERVER_OPTIONS = ['--innodb-log-file-size=4M', '--innodb-buffer-pool-size=32M'];
const REPLICATION_PASSWORD = 'replica-test-password';

export interface MariaDbServer {
  port: number;
  /** mysql://root@127.0.0.1:<port>/<database> (root has no password on these private servers). */
  url(database: string): string;
  /** A connection as root, no database selected; the caller ends it. */
  connect(): Promise<mysql.Connection>;
}

interface RunningServer extends MariaDbServer {
  process: ChildProcess;
  exited: Promise<unknown>;
}

async function startServer(dir: string, name: string, serverId: number): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(
    'mariadbd',
    [
      '--no-defaults',
      `--user=${os.userInfo().username}`,
      `--datadir=${path.join(dir, name)}`,
      // Its own tmpdir: a starting mariadbd deletes every #sql* file in its tmpdir, the shared server's live temp tables too.
      `--tmpdir=${dir}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${path.join(dir, `${name}.sock`)}`,
      `--pid-file=${path.join(dir, `${name}.pid`)}`,
      `--log-error=${path.join(dir, `${name}.err`)}`,
      `--server-id=${serverId}`,
      `--log-bin=${path.join(dir, `${name}-bin`)}`,
      `--relay-log=${path.join(dir, `${name}-relay`)}`,
      '--binlog-format=ROW',
      ...SERVER_OPTIONS,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const server: RunningServer = {
    port,
    process: child,
    exited,
    url: (database) => `mysql://root@127.0.0.1:${port}/${database}`,
    connect: () =>
      mysql.createConnection({ host: '127.0.0.1', port, user: 'root', timezone: 'Z', charset: 'utf8mb4_bin' }),
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mariadbd ${name} exited (${child.exitCode}); see ${name}.err`);
    try {
      await (await server.connect()).end();
      return server;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export interface MariaDbPair {
  primary: MariaDbServer;
  replica: MariaDbServer;
  /** Resolves once the replica has applied everything the primary has written so far. */
  caughtUp(): Promise<void>;
  /** STOP / START SLAVE SQL_THREAD: the replica keeps receiving the primary's writes but applies none. */
  pauseApplying(): Promise<void>;
  resumeApplying(): Promise<void>;
  /** Stops both servers and removes their data directories. */
  stop(): Promise<void>;
}

/**
 * A MariaDB primary and a replica of it, each a mariadbd process of its own on its own port and
 * data directory in a temp dir, with real GTID replication over a replication user.
 */
export async function startMariaDbPair(): Promise<MariaDbPair> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'jobs-replicas-'));
  const servers: RunningServer[] = [];
  const stop = async () => {
    await Promise.all(
      servers.map(async (server) => {
        server.process.kill('SIGTERM');
        const timer = setTimeout(() => server.process.kill('SIGKILL'), 10_000);
        await server.exited;
        clearTimeout(timer);
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // One initialised data directory, copied: the replica starts as an identical empty server.
    await run('mariadb-install-db', [
      '--no-defaults',
      `--user=${os.userInfo().username}`,
      `--datadir=${path.join(dir, 'primary')}`,
      `--tmpdir=${dir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      ...SERVER_OPTIONS,
    ]);
    cpSync(path.join(dir, 'primary'), path.join(dir, 'replica'), { recursive: true });
    const [primary, replica] = await Promise.all([startServer(dir, 'primary', 1), startServer(dir, 'replica', 2)]);
    servers.push(primary, replica);

    const onPrimary = await primary.connect();
    const onReplica = await replica.connect();
    await onPrimary.query(`CREATE USER repl@'127.0.0.1' IDENTIFIED BY '${REPLICATION_PASSWORD}'`);
    await onPrimary.query(`GRANT REPLICATION SLAVE ON *.* TO repl@'127.0.0.1'`);
    await onReplica.query(
      `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port}, MASTER_USER='repl', ` +
        `MASTER_PASSWORD='${REPLICATION_PASSWORD}', MASTER_USE_GTID=slave_pos`,
    );
    await onReplica.query('START SLAVE');

    const pair: MariaDbPair = {
      primary,
      replica,
      async caughtUp() {
        const [[position]] = await onPrimary.query<mysql.RowDataPacket[]>('SELECT @@gtid_binlog_pos AS pos');
        const [[waited]] = await onReplica.query<mysql.RowDataPacket[]>('SELECT MASTER_GTID_WAIT(?, 20) AS result', [
          position!.pos,
        ]);
        if (Number(waited!.result) !== 0) throw new Error(`the replica did not reach ${position!.pos} within 20 s`);
      },
      async pauseApplying() {
        await onReplica.query('STOP SLAVE SQL_THREAD');
      },
      async resumeApplying() {
        await onReplica.query('START SLAVE SQL_THREAD');
      },
      async stop() {
        await Promise.all([onPrimary.end(), onReplica.end()]).catch(() => undefined);
        await stop();
      },
    };
    await pair.caughtUp();
    return pair;
  } catch (error) {
    await stop();
    throw error;
  }
}
