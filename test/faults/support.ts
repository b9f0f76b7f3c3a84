import mysql from 'mysql2/promise';
import { call, type JsonResponse } from '../helpers/http';
import { testServerOptions } from '../helpers/server';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The response and how long it took. */
export async function timed(request: Promise<JsonResponse>): Promise<JsonResponse & { ms: number }> {
  const started = Date.now();
  const response = await request;
  return { ...response, ms: Date.now() - started };
}

/** The answer a partner gets while the database cannot serve: retry later, not an error of theirs. */
export function expectRetryLater(response: JsonResponse): void {
  expect({ status: response.status, retryAfter: response.headers.get('retry-after'), body: response.body }).toEqual({
    status: 503,
    retryAfter: '5',
    body: { error: expect.stringMatching(/Retry in a few seconds/) },
  });
}

/** Calls `url` until it answers 200 or `withinMs` pass; the last status. */
export async function statusOnceRecovered(url: string, init: RequestInit, withinMs: number): Promise<number> {
  const deadline = Date.now() + withinMs;
  let status = 0;
  while (status !== 200 && Date.now() < deadline) {
    status = (await call(url, init)).status;
    if (status !== 200) await sleep(100);
  }
  return status;
}

/** Another client holding `LOCK TABLES <table> WRITE` on `database` until release(). */
export async function lockTable(database: string, table: string) {
  const connection = await mysql.createConnection({ ...testServerOptions(), database });
  await connection.query(`LOCK TABLES \`${table}\` WRITE`);
  /** Ids of the statements of `database` waiting for the lock. */
  const waiting = async (): Promise<number[]> => {
    const [rows] = await connection.query<mysql.RowDataPacket[]>(
      "SELECT id FROM information_schema.processlist WHERE db = ? AND state LIKE '%lock%' AND id <> CONNECTION_ID()",
      [database],
    );
    return rows.map((row) => Number(row.id));
  };
  return {
    waiting,
    /** Resolves once `count` statements of `database` wait for the lock; throws after `withinMs`, so a failing test ends. */
    async waiters(count: number, withinMs = 10_000): Promise<void> {
      const deadline = Date.now() + withinMs;
      while ((await waiting()).length < count) {
        if (Date.now() > deadline)
          throw new Error(`${count} statements did not come to wait for the lock within ${withinMs} ms`);
        await sleep(20);
      }
    },
    /** Interrupts the waiting statements (KILL QUERY), keeping the lock. */
    async interruptWaiters(): Promise<void> {
      for (const id of await waiting()) await connection.query(`KILL QUERY ${id}`);
    },
    async release(): Promise<void> {
      await connection.query('UNLOCK TABLES');
      await connection.end();
    },
  };
}

export const job = (title: string) =>
  JSON.stringify({
    title,
    department: 'Faults',
    type: 'contract',
    description: 'Written while the database misbehaves.',
  });
