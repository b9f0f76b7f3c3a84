import { z } from 'zod';
import { Job, JOB_EXAMPLE, timestamp, Tombstone } from '../../domain/job';
import { isUuid } from '../../domain/uuid';
import { MESSAGES } from '../errors';
import { text } from '../http/text';
import type { RequestBody } from '../http/input';


/** The webhook API's bodies and events, defined once: routes, handlers and the OpenAPI document derive from them. */

/** How long the secret a rotation replaced goes on signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

const position = z.string().meta({ description: 'A change-feed position: meta.nextSince of GET /api/v1/jobs/changes, or an event\'s position' });

const CreateWebhookFields = z.object({
  url: z.string({ error: (issue) => (issue.input === undefined ? 'url is required' : 'url must be a string') }).max(2048, 'url must be at most 2048 characters').meta({ description: 'https URL of your receiver, reachable from the internet' }),
  // The jobs' rule for one line of text: no control characters, no lone surrogates, trimmed.
  description: text('description', 500).nullable().optional(),
  position: z.string({ error: 'position must be a string' }).max(200, MESSAGES.positionInvalid).optional().meta({ description: 'Deliver the changes after this feed position (meta.nextSince of your full sync). Absent: from now on.' }),
});

/** POST /api/v1/webhooks's body: nothing of the organisation's can be set here, so every unknown field is just unknown. */
export const CREATE_WEBHOOK_BODY: RequestBody<typeof CreateWebhookFields> = {
  schema: CreateWebhookFields,
  description: 'application/json, at most 16 KB: url (https, reaching public addresses only), description, position',
  example: { url: 'https://partner.example/hooks/jobs', description: 'Job board sync' },
  internal: () => false,
};

const ReplayFields = z.object({
  position: z.string({ error: (issue) => (issue.input === undefined ? 'position is required' : 'position must be a string') }).max(200, MESSAGES.positionInvalid).meta({ description: 'Deliver again every change after this feed position' }),
});
export const REPLAY_BODY: RequestBody<typeof ReplayFields> = {
  schema: ReplayFields,
  description: 'application/json: position',
  example: { position: 'AgAAAAAAAAAqp3Yh0s2dXvNq8y1WcI7Lfw' },
  internal: () => false,
};

/** A subscription's id in a path: not a UUID, no subscription has it. */
export const WebhookIdParams = z.object({
  id: z.string().refine(isUuid, MESSAGES.webhookNotFound).meta({ description: 'The subscription\'s id', examples: ['019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11'] }),
});

export const Webhook = z
  .strictObject({
    id: z.uuid(),
    url: z.string(),
    description: z.string().nullable(),
    status: z.enum(['active', 'disabled']),
    position: position.meta({ description: 'The feed position delivered up to: continue with GET /api/v1/jobs/changes?since= from here' }),
    createdAt: timestamp,
    lastDeliveredAt: timestamp.nullable(),
    failingSince: timestamp.nullable().meta({ description: 'Since when the next event has been failing; null while deliveries succeed' }),
    nextAttemptAt: timestamp.nullable().meta({ description: 'When the failing event is tried again; null while deliveries succeed' }),
    disabledReason: z.string().nullable().meta({ description: 'Why it was disabled (failing for 3 days, 410 Gone, an operator); null while active' }),
    lastError: z.string().nullable().meta({ description: 'The last failed attempt\'s error; null after a success' }),
  })
  .meta({ description: 'A webhook subscription; its secret is shown only when created or rotated' });
export type Webhook = z.infer<typeof Webhook>;

export const WebhookEnvelope = z.strictObject({ data: Webhook });
export const WebhookList = z.strictObject({ data: z.array(Webhook) });
export const CreatedWebhook = z.strictObject({
  data: Webhook.extend({ secret: z.string().regex(/^whsec_/).meta({ description: 'The signing secret (Standard Webhooks whsec_ form): shown in this answer only' }) }),
});
export const RotatedSecret = z.strictObject({
  data: z.strictObject({
    id: z.uuid(),
    secret: z.string().regex(/^whsec_/),
    previousSecretExpiresAt: timestamp.meta({ description: 'Until then every delivery is signed with both secrets' }),
  }),
});

const eventFields = {
  id: z.string().regex(/^evt_\d+$/).meta({ description: 'The same on every retry and replay (also the webhook-id header): drop repeats by it' }),
  timestamp: timestamp.meta({ description: 'When the change happened' }),
  position: position.meta({ description: 'This event\'s feed position: GET /api/v1/jobs/changes?since= continues after it' }),
};
export const JobUpdatedEvent = z.strictObject({ ...eventFields, type: z.literal('job.updated'), data: Job }).meta({ description: 'A listable job as it is now (created, changed, or listable again): exactly what GET /api/v1/jobs/{id} answers' });
export const JobRemovedEvent = z.strictObject({ ...eventFields, type: z.literal('job.removed'), data: Tombstone.pick({ id: true }) }).meta({ description: 'A job that is no longer listable (deleted, soft-deleted or back to draft): remove it' });

export const WEBHOOK_EXAMPLE: Webhook = {
  id: '019a9e10-2b44-7c11-8f3e-5d2a7b9c0e11',
  url: 'https://partner.example/hooks/jobs',
  description: 'Job board sync',
  status: 'active',
  position: 'AgAAAAAAAAAqp3Yh0s2dXvNq8y1WcI7Lfw',
  createdAt: '2026-11-26T09:00:00.000Z',
  lastDeliveredAt: null,
  failingSince: null,
  nextAttemptAt: null,
  disabledReason: null,
  lastError: null,
};
export const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
export const EVENT_EXAMPLE = { id: 'evt_42', type: 'job.updated', timestamp: '2026-11-26T09:00:01.250Z', position: 'AgAAAAAAAAAqp3Yh0s2dXvNq8y1WcI7Lfw', data: JOB_EXAMPLE };
