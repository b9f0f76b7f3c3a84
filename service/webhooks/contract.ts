import { z } from 'zod';
import { EVENT_TYPES } from '../../domain/webhook';
import { Job, JOB_EXAMPLE, timestamp, Tombstone } from '../../domain/job';
import { isUuid } from '../../domain/uuid';
import { MESSAGES } from '../errors';
import { text } from '../http/text';
import type { RequestBody } from '../http/input';

/** The webhook API's bodies and events, defined once: routes, handlers and the OpenAPI document derive from them. */

/** How long the secret a rotation replaced goes on signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

/** The event a partner sends itself on demand: outside the feed's order, no position, no sequence. */
export const TEST_EVENT_TYPE = 'webhook.test';
/** The feed starts a new history (a restore): sent to every subscription, whatever its eventTypes, before that history's changes. */
export const RESTORED_EVENT_TYPE = 'feed.restored';

const eventType = z.enum(EVENT_TYPES, { error: `eventTypes may hold only ${EVENT_TYPES.join(', ')}` });
/** The event types to deliver: a non-empty list, or null for every type (also what a subscription without them gets). */
const eventTypes = z
  .array(eventType, { error: 'eventTypes must be a list of event types, or null for all' })
  .min(1, 'eventTypes must name at least one event type, or be null for all')
  .max(EVENT_TYPES.length, `eventTypes may name each of the ${EVENT_TYPES.length} event types once`)
  .nullable()
  .meta({
    description: `The event types delivered (${EVENT_TYPES.join(', ')}); null or absent: all of them. ${RESTORED_EVENT_TYPE} is sent whatever you choose`,
  });

const position = z
  .string()
  .meta({ description: "A change-feed position: meta.nextSince of GET /api/v1/jobs/changes, or an event's position" });

const url = z
  .string({ error: (issue) => (issue.input === undefined ? 'url is required' : 'url must be a string') })
  .max(2048, 'url must be at most 2048 characters')
  // url-guard.ts's first rule (the scheme, in any case), as the document can state it.
  .meta({
    description: 'https URL of your receiver, reachable from the internet',
    pattern: '^[Hh][Tt][Tt][Pp][Ss]://',
  });
// The jobs' rule for one line of text: no control characters, no lone surrogates, trimmed.
const description = text('description', 500).nullable().optional();

const CreateWebhookFields = z.object({
  url,
  description,
  eventTypes: eventTypes.optional(),
  position: z.string({ error: 'position must be a string' }).max(200, MESSAGES.positionInvalid).optional().meta({
    description:
      'Deliver the changes after this feed position (meta.nextSince of your full sync). Absent: from now on.',
  }),
});

/** POST /api/v1/webhooks's body: nothing of the organisation's can be set here, so every unknown field is just unknown. */
export const CREATE_WEBHOOK_BODY: RequestBody<typeof CreateWebhookFields> = {
  schema: CreateWebhookFields,
  description:
    'application/json, at most 16 KB: url (https, reaching public addresses only), description, eventTypes, position',
  example: {
    url: 'https://partner.example/hooks/jobs',
    description: 'Job board sync',
    eventTypes: ['job.updated', 'job.removed'],
  },
  internal: () => false,
};

const UpdateWebhookFields = z
  .object({ url: url.optional(), description, eventTypes: eventTypes.optional() })
  .meta({ minProperties: 1 });
/** PATCH /api/v1/webhooks/{id}'s body: what the partner chose; the position and the secrets stay. */
export const UPDATE_WEBHOOK_BODY: RequestBody<typeof UpdateWebhookFields> = {
  schema: UpdateWebhookFields,
  description:
    'application/json: at least one of url (checked as at create), description, eventTypes; the position is kept',
  example: { eventTypes: ['job.removed'] },
  internal: () => false,
};

const RotateFields = z.object({
  expirePrevious: z.boolean({ error: 'expirePrevious must be true or false' }).optional().meta({
    description: 'true: the replaced secrets stop signing now (one leaked); absent or false: they sign on for 24 hours',
  }),
});
/** rotate-secret's body, which may be left out. */
export const ROTATE_BODY: RequestBody<typeof RotateFields> = {
  schema: RotateFields,
  description: 'Optional, application/json: expirePrevious',
  example: { expirePrevious: true },
  internal: () => false,
  optional: true,
};

const ReplayFields = z.object({
  position: z
    .string({ error: (issue) => (issue.input === undefined ? 'position is required' : 'position must be a string') })
    .max(200, MESSAGES.positionInvalid)
    .meta({ description: 'Deliver again every change after this feed position' }),
});
export const REPLAY_BODY: RequestBody<typeof ReplayFields> = {
  schema: ReplayFields,
  description: 'application/json: position',
  example: { position: 'A3weKp1Lb4A1AAAAAAAAACqhvLOt3gsFuRgAQMYmpDy-' },
  internal: () => false,
};

/** A subscription's id in a path: not a UUID, no subscription has it. */
export const WebhookIdParams = z.object({
  id: z
    .string()
    .refine(isUuid, MESSAGES.webhookNotFound)
    .meta({
      description: "The subscription's id",
      format: 'uuid',
      maxLength: 36,
      examples: ['019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11'],
    }),
});

export const Webhook = z
  .strictObject({
    id: z.uuid(),
    url: z.string(),
    description: z.string().nullable(),
    status: z.enum(['active', 'disabled']),
    eventTypes,
    position: position.meta({
      description: 'The feed position delivered up to: continue with GET /api/v1/jobs/changes?since= from here',
    }),
    createdAt: timestamp,
    lastDeliveredAt: timestamp.nullable(),
    failingSince: timestamp
      .nullable()
      .meta({ description: 'Since when the next event has been failing; null while deliveries succeed' }),
    nextAttemptAt: timestamp
      .nullable()
      .meta({ description: 'When the failing event is tried again; null while deliveries succeed' }),
    disabledReason: z
      .string()
      .nullable()
      .meta({ description: 'Why it was disabled (failing for 3 days, 410 Gone, an operator); null while active' }),
    lastError: z.string().nullable().meta({
      description:
        "The last failed attempt's error, or why deliveries wait (the server cannot open the signing secret); null after a success",
    }),
  })
  .meta({ description: 'A webhook subscription; its secret is shown only when created or rotated' });
export type Webhook = z.infer<typeof Webhook>;

export const WebhookEnvelope = z.strictObject({ data: Webhook });
export const WebhookList = z.strictObject({ data: z.array(Webhook) });
export const CreatedWebhook = z.strictObject({
  data: Webhook.extend({
    secret: z
      .string()
      .regex(/^whsec_/)
      .meta({ description: 'The signing secret (Standard Webhooks whsec_ form): shown in this answer only' }),
  }),
});
export const RotatedSecret = z.strictObject({
  data: z.strictObject({
    id: z.uuid(),
    secret: z.string().regex(/^whsec_/),
    previousSecretExpiresAt: timestamp.meta({
      description: 'Until then the secret this one replaced signs every delivery too (now, with expirePrevious)',
    }),
    olderSecretExpiresAt: timestamp
      .nullable()
      .meta({ description: 'Until then the secret before that signs too, when it is still valid; null otherwise' }),
  }),
});

/** One delivery attempt as its owner reads it back: never the receiver's answer body. */
export const Attempt = z
  .strictObject({
    eventId: z.string().meta({ description: "The event's id (the webhook-id header)" }),
    position: position.nullable().meta({
      description: `The event's feed position, as Webhook.position; null for a test or ${RESTORED_EVENT_TYPE} event`,
    }),
    attemptedAt: timestamp,
    status: z
      .int()
      .nullable()
      .meta({ description: 'The HTTP status your receiver answered; null when none came back' }),
    error: z.string().nullable().meta({
      description:
        'Why it failed (timeout, connection failed, TLS failed, HTTP <status>, answer too large); null on a 2xx',
    }),
    latencyMs: z.int().min(0).meta({ description: 'From sending to your answer (or to the failure), in milliseconds' }),
  })
  .meta({ description: 'One delivery attempt' });
export type Attempt = z.infer<typeof Attempt>;
export const AttemptList = z.strictObject({
  data: z.array(Attempt).meta({ description: 'The last 100 attempts, newest first' }),
});

export const TestOutcome = z.strictObject({
  data: z.strictObject({
    eventId: z.string(),
    delivered: z.boolean().meta({ description: 'Your receiver answered 2xx' }),
    status: z
      .int()
      .nullable()
      .meta({ description: 'The HTTP status your receiver answered; null when none came back' }),
    error: z.string().nullable().meta({ description: 'Why it failed; null on a 2xx' }),
    latencyMs: z.int().min(0),
  }),
});

const eventFields = {
  id: z
    .string()
    .regex(/^evt_[0-9a-f]{16}_\d+$/)
    .meta({
      description:
        "evt_<history>_<sequence>: the same on every retry and replay (also the webhook-id header), and never another change's, restores included",
    }),
  history: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .meta({
      description:
        'The history of the feed this sequence was numbered in. It changes only when our database was restored from a backup: then catch up through GET /api/v1/jobs/changes from your saved position (a 400 there means empty your mirror and read the feed from the beginning), and compare sequences within the new history',
    }),
  timestamp: timestamp.meta({ description: 'When the change happened' }),
  position: position.meta({
    description: "This event's feed position: GET /api/v1/jobs/changes?since= continues after it",
  }),
  sequence: z.int().min(1).meta({
    description:
      'Within one history, a later change has a higher one. Drop an event of the same history at or below the last sequence you applied',
  }),
};
export const JobUpdatedEvent = z.strictObject({ ...eventFields, type: z.literal('job.updated'), data: Job }).meta({
  description:
    'A listable job as it is now (created, changed, or listable again): exactly what GET /api/v1/jobs/{id} answers',
});
export const WebhookTestEvent = z
  .strictObject({
    id: z.string().regex(/^evt_test_/),
    type: z.literal(TEST_EVENT_TYPE),
    timestamp,
    data: z.strictObject({ subscriptionId: z.uuid() }),
  })
  .meta({
    description:
      'Sent only when you ask (POST /api/v1/webhooks/{id}/test), outside the order: no position, no sequence; answer 2xx and apply nothing',
  });
export const FeedRestoredEvent = z
  .strictObject({
    id: z
      .string()
      .regex(/^evt_[0-9a-f]{16}_restored$/)
      .meta({ description: 'evt_<history>_restored: the same on every retry; one per subscription and new history' }),
    type: z.literal(RESTORED_EVENT_TYPE),
    history: eventFields.history.meta({
      description: 'The new history: the changes after this event carry it',
    }),
    sequence: z.int().min(0).meta({
      description:
        "The new history's changes have higher sequences: once caught up, take this history and sequence as the last applied",
    }),
    timestamp: timestamp.meta({ description: 'When we first told of the new history: the same on every retry' }),
    data: z.strictObject({
      history: eventFields.history.meta({ description: 'The new history, as above' }),
      firstSequence: z.int().min(1).meta({ description: "The sequence of the new history's first change" }),
    }),
  })
  .meta({
    description:
      'Our database was restored from a backup: changes after the backup are gone, and your mirror may hold some of them. Sent at once, before any change of the new history, even if none follows. Catch up through GET /api/v1/jobs/changes from your saved position; a 400 there means that position is gone: empty your mirror and read the feed from the beginning. It has no position: never save one from it',
  });
export const JobRemovedEvent = z
  .strictObject({ ...eventFields, type: z.literal('job.removed'), data: Tombstone.pick({ id: true }) })
  .meta({ description: 'A job that is no longer listable (deleted, soft-deleted or back to draft): remove it' });

export const WEBHOOK_EXAMPLE: Webhook = {
  id: '019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11',
  url: 'https://partner.example/hooks/jobs',
  description: 'Job board sync',
  status: 'active',
  eventTypes: null,
  position: 'A3weKp1Lb4A1AAAAAAAAACqhvLOt3gsFuRgAQMYmpDy-',
  createdAt: '2026-11-26T09:00:00.000Z',
  lastDeliveredAt: null,
  failingSince: null,
  nextAttemptAt: null,
  disabledReason: null,
  lastError: null,
};
export const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
export const EVENT_EXAMPLE = {
  id: 'evt_7c1e2a9d4b6f8035_42',
  type: 'job.updated',
  history: '7c1e2a9d4b6f8035',
  timestamp: '2026-11-26T09:00:01.250Z',
  position: 'A3weKp1Lb4A1AAAAAAAAACqhvLOt3gsFuRgAQMYmpDy-',
  sequence: 42,
  data: JOB_EXAMPLE,
};
export const RESTORED_EVENT_EXAMPLE = {
  id: 'evt_b41f06c2d8e7a953_restored',
  type: RESTORED_EVENT_TYPE,
  history: 'b41f06c2d8e7a953',
  sequence: 40,
  timestamp: '2026-11-27T03:12:09.514Z',
  data: { history: 'b41f06c2d8e7a953', firstSequence: 41 },
};
export const TEST_EVENT_EXAMPLE = {
  id: 'evt_test_019a9e11-0c3d-7a21-9b4e-2f6d8a1c3e57',
  type: TEST_EVENT_TYPE,
  timestamp: '2026-11-26T09:00:01.250Z',
  data: { subscriptionId: WEBHOOK_EXAMPLE.id },
};
export const ATTEMPT_EXAMPLES: Attempt[] = [
  {
    eventId: 'evt_7c1e2a9d4b6f8035_43',
    position: 'A3weKp1Lb4A1AAAAAAAAACsJwxRkvctXIEvQuvbFr0_D',
    attemptedAt: '2026-11-26T09:00:12.004Z',
    status: null,
    error: 'timeout',
    latencyMs: 10_000,
  },
  {
    eventId: 'evt_7c1e2a9d4b6f8035_43',
    position: 'A3weKp1Lb4A1AAAAAAAAACsJwxRkvctXIEvQuvbFr0_D',
    attemptedAt: '2026-11-26T09:00:02.001Z',
    status: 500,
    error: 'HTTP 500',
    latencyMs: 35,
  },
  {
    eventId: 'evt_7c1e2a9d4b6f8035_42',
    position: 'A3weKp1Lb4A1AAAAAAAAACqhvLOt3gsFuRgAQMYmpDy-',
    attemptedAt: '2026-11-26T09:00:01.300Z',
    status: 204,
    error: null,
    latencyMs: 21,
  },
];
