/** The webhooks' words, defined once: db/webhooks/schema.ts makes its columns of them, the HTTP contract and the dispatcher their rules. */

/** A subscription is delivering, or was disabled for failing (or by an operator) until enabled again. */
export const SUBSCRIPTION_STATUSES = ['active', 'disabled'] as const;

/** The feed's event types a subscription may choose among. */
export const EVENT_TYPES = ['job.updated', 'job.removed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
