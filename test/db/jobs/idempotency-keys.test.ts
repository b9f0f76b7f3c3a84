/**
 * writeOnce (db/jobs/idempotency-keys.ts) when the link to the database dies inside the keyed
 * write: the transaction's connection, which cannot roll back, is never handed to another
 * request, and the key is not kept (the server drops the claim with the session).
 */
import { sql } from 'drizzle-orm';
import { createDatabase, type DatabaseHandle } from '../../../db/client';
import { writeOnce } from '../../../db/jobs/idempotency-keys';
import { select, type Queryable } from '../../../db/sql';
import { freshDatabase, type TestDatabase } from '../../helpers/database';
import { testServerAddress } from '../../helpers/server';
import { startRelay, type LinkMode, type Relay } from '../../faults/relay';

let database: TestDatabase;
let relay: Relay;
let handle: DatabaseHandle;
beforeAll(async () => {
  database = await freshDatabase('idempotency_link');
  relay = await startRelay(testServerAddress());
  // One connection: a broken one given back would be the next statement's.
  handle = createDatabase(relay.via(database.url), { connectionLimit: 1, connectTimeoutMs: 1000, queryTimeoutMs: 500 });
});
afterAll(async () => {
  await handle?.close();
  await relay?.close();
  await database?.close();
});

const connectionId = async (on: Queryable) => {
  const [row] = await select(on, { id: sql<number>`connection_id()` }, (query) => query.from(sql`dual`));
  return row!.id;
};

test.each<[string, LinkMode]>([
  ['reset (the host went away)', 'reset'],
  ['silent (bytes dropped, the client deadline ends the wait)', 'blackhole'],
])(
  'link %s during the keyed write: the request fails, its connection is not reused, the key is free again',
  async (_name, mode) => {
    const key = `link-${mode}`;
    let inTransaction = 0;
    const failed = writeOnce(handle.db, { consumerId: 'consumer', key, requestHash: 'hash' }, async (tx) => {
      inTransaction = await connectionId(tx);
      relay.set(mode);
      await connectionId(tx);
      return { status: 201, location: null, body: '{}' };
    });
    await expect(failed).rejects.toThrow();
    relay.set('forward');
    const after = await connectionId(handle.db);
    expect(after).not.toBe(inTransaction);
    const again = await writeOnce(handle.db, { consumerId: 'consumer', key, requestHash: 'hash' }, () =>
      Promise.resolve({ status: 201, location: null, body: '{"again":true}' }),
    );
    expect(again).toEqual({ response: { status: 201, location: null, body: '{"again":true}' }, replayed: false });
  },
  20_000,
);
