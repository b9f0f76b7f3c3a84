import type { z } from 'zod';
import type { ChangeEvent } from '../db/jobs/change-feed';
import type { History } from '../domain/feed';
import type { EventType } from '../domain/webhook';
import { encodeSince } from '../service/http/tokens';
import { RESTORED_EVENT_TYPE, type FeedRestoredEvent } from '../service/webhooks/contract';

/** An event's id: its feed position with its history, so every retry and replay of it carries the same one, and no other change ever does (a restore starts a new history). */
export const eventId = (event: Pick<ChangeEvent, 'history' | 'seq'>) => `evt_${event.history}_${event.seq}`;

/** An event's type, one of EVENT_TYPES: what a subscription's eventTypes choose among. */
export const eventType = (event: ChangeEvent): EventType => ('removed' in event.entry ? 'job.removed' : 'job.updated');

/** A delivery's body: Standard Webhooks' type, timestamp and data, with the event id, its feed position, its history and its sequence (a number that only grows within a history: how a receiver tells a repeat). */
export function eventBody(tokenKey: Buffer, event: ChangeEvent): string {
  const removed = 'removed' in event.entry;
  return JSON.stringify({
    id: eventId(event),
    type: eventType(event),
    history: event.history,
    sequence: event.seq,
    timestamp: event.changedAt.toISOString(),
    position: encodeSince(tokenKey, event),
    data: removed ? { id: event.entry.id } : event.entry,
  });
}

/** A feed.restored event: what a subscription is told, once per new history, before that history's changes (FeedRestoredEvent). */
export function restoredEvent(history: History & { toldAt: Date }): { id: string; body: string } {
  const id = `evt_${history.id}_restored`;
  const body: z.infer<typeof FeedRestoredEvent> = {
    id,
    type: RESTORED_EVENT_TYPE,
    history: history.id,
    sequence: history.firstSeq - 1,
    timestamp: history.toldAt.toISOString(),
    data: { history: history.id, firstSequence: history.firstSeq },
  };
  return { id, body: JSON.stringify(body) };
}
