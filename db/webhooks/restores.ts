import { eq, sql } from 'drizzle-orm';
import { findHistory } from '../jobs/change-history';
import { execute, qb, select, type Database } from '../sql';
import type { History } from '../../domain/feed';
import { utcNow, webhookRestores } from './schema';

/**
 * The new history a feed.restored event tells of: where it starts, and when the dispatchers first told
 * of it, kept so every retry and every subscription says the same; undefined once a restore removed it.
 */
export async function restoreToTell(db: Database, history: string): Promise<(History & { toldAt: Date }) | undefined> {
  const found = await findHistory(db, history);
  if (!found) return undefined;
  await execute(
    db,
    qb
      .insert(webhookRestores)
      .ignore()
      .values({ history, toldAt: sql`${utcNow}` }),
  );
  const [row] = await select(db, { toldAt: webhookRestores.toldAt }, (query) =>
    query.from(webhookRestores).where(eq(webhookRestores.history, history)),
  );
  return { ...found, toldAt: row!.toldAt };
}
