/**
 * The service's pool (db/client.ts, db/deadlines.ts) on the test server, and through a relay whose
 * link the test cuts: the server's limits on every connection from its first statement, a client
 * deadline that drops the connection it gave up on, the numbers the metrics read, and close().
 */
import mysql from 'mysql2/promise';
import { createDatabase, type DatabaseHandle } from '../../db/client';
import { CLIENT_MARGIN_MS } from '../../db/deadlines';
import { errorCode } from '../../db/errors';
import { execute, select, text, transaction, type Database } from '../../db/sql';
import { sql } from 'drizzle-orm';
import { startRelay, type Relay } from '../faults/relay';
import { sleep } from '../faults/support';
import { testServerAddress, testServerOptions, testServerUrl } from '../helpers/server';

const URL = `${testServerUrl()}/information_schema`;
const QUERY_TIMEOUT_MS = 400;

type Row = mysql.RowDataPacket;
const handles: DatabaseHandle[] = [];
const open = (url: string, options: Parameters<typeof createDatabase>[1]) => {
  const handle = createDatabase(url, options);
  handles.push(handle);
  return handle;
};
afterEach(async () => {
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
});

/** Resolves once `check` holds; throws after `withinMs`, so a failing test ends with what it saw. */
async function eventually<T>(read: () => T | Promise<T>, check: (value: T) => boolean, withinMs = 5000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await sleep(20);
  }
}

/** Whether the server still has a connection with this id. */
async function serverHas(id: number): Promise<boolean> {
  const admin = await mysql.createConnection(testServerOptions());
  try {
    const [rows] = await admin.query<Row[]>('SELECT COUNT(*) AS n FROM information_schema.processlist WHERE id = ?', [
      id,
    ]);
    return Number(rows[0]!.n) === 1;
  } finally {
    await admin.end();
  }
}

/** The server's id of the connection a statement of `db` runs on. */
async function connectionId(db: Database): Promise<number> {
  const [row] = await select(db, { id: sql<number>`connection_id()` }, (query) => query.from(sql`dual`));
  return row!.id;
}

const LIMITS =
  'SELECT CONNECTION_ID() AS id, @@SESSION.max_statement_time AS seconds, @@SESSION.lock_wait_timeout AS lockWait, @@SESSION.innodb_lock_wait_timeout AS rowLockWait';

describe('the server stops statements itself', () => {
  test('the first statement of every new connection, from the pool or a transaction, already runs under the limits', async () => {
    const { pool } = open(URL, { connectionLimit: 3, queryTimeoutMs: 2500 });
    // Three at once, so each is the first statement on a connection of its own.
    const first = await Promise.all([1, 2, 3].map(() => pool.query<Row[]>(`${LIMITS}, SLEEP(0.2) AS slept`)));
    const rows = first.map(([[row]]) => row!);
    expect(new Set(rows.map((row) => row.id)).size).toBe(3);
    for (const row of rows) expect(row).toMatchObject({ seconds: 2.5, lockWait: 3, rowLockWait: 3 });

    const { pool: other } = open(URL, { connectionLimit: 1, queryTimeoutMs: 2500 });
    const connection = await other.getConnection();
    try {
      const [[row]] = await connection.query<Row[]>(LIMITS);
      expect(row).toMatchObject({ seconds: 2.5, lockWait: 3, rowLockWait: 3 });
    } finally {
      connection.release();
    }
  });

  test('without a query time limit the sessions keep the server defaults', async () => {
    const { pool } = open(URL, { connectionLimit: 1 });
    const [[row]] = await pool.query<Row[]>(LIMITS);
    expect(row!.seconds).toBe(0);
  });
});

describe('a link that stops answering', () => {
  let relay: Relay;
  beforeEach(async () => {
    relay = await startRelay(testServerAddress());
  });
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((handle) => handle.close()));
    await relay.close();
  });

  test.each([
    ['a statement of the pool', (db: Database) => execute(db, text('SELECT 1'))],
    ['a statement of a transaction', (db: Database) => transaction(db, (tx) => execute(tx, text('SELECT 1')))],
  ])(
    '%s fails a margin after the limit, and the pool of one drops that connection and serves again on a new one',
    async (_label, statement) => {
      const { db, stats } = open(relay.via(URL), { connectionLimit: 1, queryTimeoutMs: QUERY_TIMEOUT_MS });
      const before = await connectionId(db);
      relay.set('blackhole');
      const started = Date.now();
      const failure = await statement(db).then(
        () => 'answered',
        (error: unknown) => errorCode(error),
      );
      const ms = Date.now() - started;
      expect(failure).toBe('PROTOCOL_SEQUENCE_TIMEOUT');
      expect(ms).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS + CLIENT_MARGIN_MS - 50);
      expect(ms).toBeLessThan(QUERY_TIMEOUT_MS + CLIENT_MARGIN_MS + 2000);
      expect(stats()).toEqual({ open: 0, inUse: 0, waiting: 0 });

      relay.set('forward');
      expect(await connectionId(db)).not.toBe(before);
      // The dropped connection is closed, not left open on the server.
      expect(
        await eventually(
          () => serverHas(before),
          (has) => !has,
        ),
      ).toBe(false);
    },
  );

  test('close() returns within its time limit while a statement hangs, and closes that connection', async () => {
    // A statement limit longer than the test looks, so only close() can have closed the connection.
    const { db, close } = open(relay.via(URL), { connectionLimit: 2, queryTimeoutMs: 3000 });
    const id = await connectionId(db);
    relay.set('blackhole');
    const hung = execute(db, text('SELECT 1')).then(
      () => 'answered',
      () => 'failed',
    );
    await sleep(100);
    const started = Date.now();
    await close(300);
    expect(Date.now() - started).toBeLessThan(1000);
    handles.splice(0);
    expect(
      await eventually(
        () => serverHas(id),
        (has) => !has,
        1500,
      ),
    ).toBe(false);
    expect(await hung).toBe('failed');
  });
});

describe('the numbers the metrics read', () => {
  test('a pool of 2 under 5 slow statements: 2 open, 2 in use, 3 waiting; then all free', async () => {
    const { db, stats } = open(URL, { connectionLimit: 2, queryTimeoutMs: 5000 });
    expect(stats()).toEqual({ open: 0, inUse: 0, waiting: 0 });
    const running = Promise.all([1, 2, 3, 4, 5].map(() => execute(db, text('SELECT SLEEP(0.4)'))));
    const during = await eventually(stats, (now) => now.open === 2);
    expect(during).toEqual({ open: 2, inUse: 2, waiting: 3 });
    // The first two finish and hand their connections to the next two waiters.
    expect(await eventually(stats, (now) => now.waiting === 1, 3000)).toEqual({ open: 2, inUse: 2, waiting: 1 });
    await running;
    expect(stats()).toEqual({ open: 2, inUse: 0, waiting: 0 });
  });

  test('a connection held for a transaction is in use until released; one the server closed is no longer open', async () => {
    const { pool, stats } = open(URL, { connectionLimit: 2 });
    const held = await pool.getConnection();
    const [[{ id }]] = (await held.query<Row[]>('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
    expect(stats()).toEqual({ open: 1, inUse: 1, waiting: 0 });
    held.release();
    expect(stats()).toEqual({ open: 1, inUse: 0, waiting: 0 });

    const admin = await mysql.createConnection(testServerOptions());
    try {
      await admin.query(`KILL CONNECTION ${Number(id)}`);
    } finally {
      await admin.end();
    }
    expect(await eventually(stats, (now) => now.open === 0)).toEqual({ open: 0, inUse: 0, waiting: 0 });
  });
});
