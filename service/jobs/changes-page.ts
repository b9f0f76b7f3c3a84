import type { Database } from '../../db/client';
import { badRequest } from '../errors';
import { readChanges } from './change-feed';
import { lastSequenced, sequencePendingChanges } from './change-sequencer';
import type { ChangesQuery } from './changes-query';
import type { ChangeList } from './responses';
import { decodeSince, encodeSince } from './tokens';

/**
 * GET /api/v1/jobs/changes: numbers whatever has been committed since the last call, then reads
 * the changes after the caller's position. `nextSince` is the position of the last entry (or the
 * same position when nothing changed, so an idle poll answers the same body and ETag).
 */
export async function changesPage(db: Database, key: Buffer, query: ChangesQuery): Promise<ChangeList> {
  const since = query.since ? decodeSince(key, query.since) : 0;
  const stillNumbering = await sequencePendingChanges(db);
  const { entries, lastSeq, hasMore } = await readChanges(db, since, query.limit);
  if (entries.length === 0 && since > (await lastSequenced(db))) {
    // Only a database restored from an older backup gets here: positions are never reused.
    throw badRequest('since is ahead of this feed (the data was restored from a backup?): read the feed again from the beginning, without since');
  }
  const meta = { nextSince: encodeSince(key, lastSeq ?? since), hasMore: hasMore || stillNumbering, limit: query.limit };
  return { data: entries, meta };
}
