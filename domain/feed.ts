/**
 * A feed position names the history it was numbered in, not only its number: a database restored
 * from a backup numbers again from the backup's last change, and those numbers are a new history
 * (as PostgreSQL's timelines and Kafka's leader epochs). A position stays good while its history
 * is on the feed's lineage and it is not past where that history ended.
 */

/** A history: 16 hex digits, and the first number it gave out. */
export interface History {
  id: string;
  firstSeq: number;
}

/** Where a reader stands: after change `seq` of history `history`. */
export interface FeedPosition {
  history: string;
  seq: number;
}

/** The history of positions handed out before positions named theirs (and of the beginning, 0). */
export const FIRST_HISTORY = '0000000000000000';

/** The history change `seq` was numbered in: the last one, in minting order, that starts at or before it. */
export function historyOf(lineage: readonly History[], seq: number): History {
  for (let i = lineage.length - 1; i > 0; i--) if (lineage[i]!.firstSeq <= seq) return lineage[i]!;
  return lineage[0]!;
}

/** Whether the feed still holds `position`: its history is on the lineage, and it ends no earlier than the position. */
export function holds(lineage: readonly History[], position: FeedPosition): boolean {
  const at = lineage.findIndex((history) => history.id === position.history);
  if (at === -1) return false;
  const next = lineage[at + 1];
  return next === undefined || position.seq < next.firstSeq;
}
