/**
 * The key cursors and feed positions are signed with (db/signing-key.ts): read once per
 * process, so a cursor stays valid however the table changes later, and a failed read is not
 * remembered, so the request after a database hiccup (or a late migration) signs again.
 */
import { createDatabase } from '../../db/client';
import { signingKey } from '../../db/signing-key';
import { freshDatabase, type TestDatabase } from '../helpers/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('signing_key');
});
afterAll(() => database.close());

const restoreKey = () =>
  database.query(`insert into service_secrets (name, secret) values ('token-signing', random_bytes(32))`);

test('the key is read once: later calls keep it even when the row is gone', async () => {
  const handle = createDatabase(database.url);
  try {
    const first = await signingKey(handle.db);
    expect(first).toHaveLength(32);
    await database.query(`delete from service_secrets where name = 'token-signing'`);
    expect(await signingKey(handle.db)).toEqual(first);
  } finally {
    await restoreKey();
    await handle.close();
  }
});

test('a failed read names the missing row, and the next call reads again', async () => {
  const handle = createDatabase(database.url);
  try {
    await database.query(`delete from service_secrets where name = 'token-signing'`);
    await expect(signingKey(handle.db)).rejects.toThrow('service_secrets has no token-signing row: run the migrations');
    await restoreKey();
    const [row] = await database.query<Array<{ secret: Buffer }>>(
      `select secret from service_secrets where name = 'token-signing'`,
    );
    expect(await signingKey(handle.db)).toEqual(row!.secret);
  } finally {
    await handle.close();
  }
});
