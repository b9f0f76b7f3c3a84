import type { Database } from '../db/client';
import type { Logger } from './logger';

/** One warn line when numbering starts a new history: the operator sees that a restore took effect, and what partners see. */
export function newHistoryLog(logger: Logger): NonNullable<Database['onNewHistory']> {
  return ({ history, firstSeq }) =>
    logger.warn(
      { history, firstSeq },
      `the change feed starts a new history at ${firstSeq}: the database was restored from a backup (or recreated), so positions past ${firstSeq - 1} of the old one are refused with a 400, webhook subscriptions are sent feed.restored, and partners sync again`,
    );
}
