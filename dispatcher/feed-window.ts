import type { Database } from '../db/client';
import { readChangeEvents, type ChangeEvent } from '../db/jobs/change-feed';
import { readLineage } from '../db/jobs/change-history';
import { lastSequenced } from '../db/jobs/change-numbering';
import type { History } from '../domain/feed';
import type { EventType } from '../domain/webhook';
import { eventBody, eventId, eventType } from './events';

/** A feed entry with its delivery body, made once for every subscription that is sent it. */
export interface WindowEvent {
  seq: number;
  /** The feed history it was numbered in: a newer one than the subscription was told of is told first (feed.restored). */
  history: string;
  /** Its id: the webhook-id header and the body's id. */
  id: string;
  jobId: string;
  type: EventType;
  body: string;
}

/** Entries read per query, and how many of the newest ones the window keeps. */
const READ = 500;
const KEEP = 5_000;

export interface FeedWindow {
  /** Reads what the feed gained since the last refresh, once for every walk. */
  refresh(): Promise<void>;
  /** Up to `limit` entries after `position`: from the window when it covers them, else from the database. */
  after(position: number, limit: number): Promise<WindowEvent[]>;
  /** The feed's lineage as the last refresh read it, oldest history first. */
  lineage(): readonly History[];
}

/** The newest feed entries, shared by a dispatcher's walks: one read a tick instead of one per subscription (docs/decisions.md, Webhooks). */
export function feedWindow(db: Database, tokenKey: () => Promise<Buffer>): FeedWindow {
  // Every public entry with from < seq <= to is in `events`, in order.
  let from: number | undefined;
  let to = 0;
  let events: WindowEvent[] = [];
  // The lineage's newest history when the window last read: a new one (a restore) empties the window.
  let tip: string | undefined;
  let lineage: History[] = [];
  const withBodies = async (read: ChangeEvent[]) => {
    const key = await tokenKey();
    return read.map((event) => ({
      seq: event.seq,
      history: event.history,
      id: eventId(event),
      jobId: event.entry.id,
      type: eventType(event),
      body: eventBody(key, event),
    }));
  };

  return {
    async refresh() {
      lineage = await readLineage(db);
      const newest = lineage.at(-1)?.id;
      // Restored under us: what the window holds may be a history the feed no longer has; read afresh.
      if (from !== undefined && (newest !== tip || (await lastSequenced(db)) < to)) {
        from = undefined;
        events = [];
      }
      tip = newest;
      if (from === undefined) {
        to = await lastSequenced(db);
        from = to;
        return;
      }
      for (;;) {
        const read = await withBodies(await readChangeEvents(db, to, READ, lineage));
        if (read.length === 0) break;
        // A job's newer entry replaces its older one, as in the feed: the window stays what the feed is now.
        const moved = new Set(read.map((event) => event.jobId));
        events = events.filter((event) => !moved.has(event.jobId));
        events.push(...read);
        to = read[read.length - 1]!.seq;
        if (read.length < READ) break;
      }
      if (events.length > KEEP) {
        const dropped = events.length - KEEP;
        from = events[dropped - 1]!.seq;
        events = events.slice(dropped);
      }
    },
    async after(position, limit) {
      if (from === undefined || position < from) return withBodies(await readChangeEvents(db, position, limit));
      // First entry past `position`: binary search, the window is ordered by seq.
      let low = 0;
      let high = events.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (events[middle]!.seq <= position) low = middle + 1;
        else high = middle;
      }
      return events.slice(low, low + limit);
    },
    lineage: () => lineage,
  };
}
