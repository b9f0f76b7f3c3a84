import type { ChangeEvent } from '../../../db/jobs/change-feed';
import { encodeSince } from '../../http/tokens';

/** An event's id: its feed position, so every retry and replay of it carries the same one. */
export const eventId = (seq: number) => `evt_${seq}`;

/** A delivery's body: Standard Webhooks' type, timestamp and data, with the event id and feed position. */
export function eventBody(tokenKey: Buffer, event: ChangeEvent): string {
  const removed = 'removed' in event.entry;
  return JSON.stringify({
    id: eventId(event.seq),
    type: removed ? 'job.removed' : 'job.updated',
    timestamp: event.changedAt.toISOString(),
    position: encodeSince(tokenKey, event.seq),
    data: removed ? { id: event.entry.id } : event.entry,
  });
}
