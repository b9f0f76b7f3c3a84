import { eq } from 'drizzle-orm';
import { serviceSecrets } from './schema';
import { select, type Database } from './sql';

const KEY_NAME = 'token-signing';
const loaded = new WeakMap<Database, Promise<Buffer>>();

/** The key cursors and feed positions are signed with. */
export function signingKey(db: Database): Promise<Buffer> {
  let key = loaded.get(db);
  if (!key) {
    key = select(db, { secret: serviceSecrets.secret }, (query) =>
      query.from(serviceSecrets).where(eq(serviceSecrets.name, KEY_NAME)),
    ).then(([row]) => {
      if (!row) throw new Error(`service_secrets has no ${KEY_NAME} row: run the migrations`);
      return row.secret;
    });
    key.catch(() => loaded.delete(db));
    loaded.set(db, key);
  }
  return key;
}
