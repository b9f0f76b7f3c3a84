import type { ChangeEvent } from '../../../db/jobs/change-feed';
import type { EventType } from '../../../domain/webhook';
import { encodeSince } from '../../http/tokens';

/** An event's id: its feed position, so every retry and replay of it carries the same one. */
export const eventId = (seq: number) => `evt_${seq}`;

/** An event's type, one of EVENT_TYPES: what a subscription's eventTypes choose among. */
export const eventType = (event: ChangeEvent): EventType => ('removed' in event.entry ? 'job.removed' : 'job.updated');

/** A delivery's body: Standard Webhooks' type, timestamp and data, with the event id, its feed position and its sequence (a number that only grows: how a receiver tells a repeat). */
export function eventBody(tokenKey: Buffer, event: ChangeEvent): string {
  const removed = 'removed' in event.entry;
  return JSON.stringify({
    id: eventId(event.seq),
    type: eventType(event),
    sequence: event.seq,
    timestamp: event.changedAt.toISOString(),
    position: encodeSince(tokenKey, event.seq),
    data: removed ? { id: event.entry.id } : event.entry,
  });
}
