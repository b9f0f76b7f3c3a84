import { JOB_EXAMPLE } from '../../../domain/job';
import type { Context } from 'koa';
import type { Database } from '../../../db/client';
import type { Queryable } from '../../../db/sql';
import { writeOnce, type StoredResponse } from '../../../db/jobs/idempotency-keys';
import { storeJob } from '../../../db/jobs/job-store';
import { keyInProgress, keyReused, MESSAGES } from '../../errors';
import { CREATE_BODY, type CreateJobBody } from '../contract/create-body';
import { JobEnvelope } from '../contract/responses';
import { errorResponse, ValidationErrorBody } from '../../http/responses';
import { CREATED_HEADERS, ENCODING_HEADERS, REPLAYED_HEADERS, RETRY_HEADERS, type HeaderValues } from '../../headers';
import { idempotencyKey, KEY, KEY_LENGTH, requestHash } from '../contract/idempotency-key';
import { defineRoute } from '../../http/route';

export const createJobRoute = defineRoute({
  operationId: 'createJob',
  method: 'post',
  path: '/api/v1/jobs',
  scope: 'jobs:write',
  tag: 'jobs',
  summary: 'Create a job (stored as draft unless a status is sent)',
  headers: {
    'Idempotency-Key': {
      description:
        'Makes a retry safe: the same body with the same key within 24 hours answers the first 201 again instead of creating a second job',
      pattern: KEY.source,
      maxLength: KEY_LENGTH,
    },
  },
  body: CREATE_BODY,
  consumer: 'required',
  database: true,
  responses: {
    '201': {
      description: 'Created; the body is what GET /api/v1/jobs/{id} answers',
      body: JobEnvelope,
      example: { data: { ...JOB_EXAMPLE, status: 'active' } },
      headers: { ...CREATED_HEADERS, ...REPLAYED_HEADERS },
    },
    '400': {
      description: 'Validation failed (every problem in details), malformed JSON, or not a JSON object',
      body: ValidationErrorBody,
      example: {
        error: MESSAGES.validationFailed,
        details: [
          { field: 'title', message: 'title is required' },
          { field: 'payRate', message: 'payRate cannot be set through the API' },
        ],
      },
    },
    '409': errorResponse(
      'A request with this Idempotency-Key is still being processed: retry after Retry-After',
      MESSAGES.keyInProgress,
      RETRY_HEADERS,
    ),
    '413': errorResponse(
      'Body over 100 KB ("Request size limit exceeded" from the gateway)',
      'Request size limit exceeded',
    ),
    '415': errorResponse(
      'Content-Type is not application/json, or an unsupported body encoding',
      MESSAGES.notJson,
      ENCODING_HEADERS,
    ),
    '422': errorResponse('This Idempotency-Key was used with a different body', MESSAGES.keyReused),
  },
  handler:
    ({ db }) =>
    (ctx, { body }) =>
      createJob(ctx, db, body),
});

/** POST /api/v1/jobs: stores the job and answers what GET will answer, once per Idempotency-Key. */
async function createJob(ctx: Context, db: Database, body: CreateJobBody): Promise<void> {
  const consumerId = ctx.state.consumer!.id;
  const store = async (write: Queryable): Promise<StoredResponse> => {
    const job = await storeJob(write, body, consumerId);
    return { status: 201, location: `/api/v1/jobs/${job.id}`, body: JSON.stringify({ data: job }) };
  };
  const key = idempotencyKey(ctx);
  const outcome =
    key === undefined
      ? { response: await store(db), replayed: false }
      : await writeOnce(db, { consumerId, key, requestHash: requestHash(ctx) }, store);
  if ('refused' in outcome) throw outcome.refused === 'in progress' ? keyInProgress() : keyReused();
  const { response, replayed } = outcome;
  ctx.status = response.status;
  if (response.location) ctx.set({ Location: response.location } satisfies HeaderValues<typeof CREATED_HEADERS>);
  if (replayed) ctx.set({ 'Idempotent-Replayed': 'true' } satisfies HeaderValues<typeof REPLAYED_HEADERS>);
  // The exact text recorded is the text sent, so a replay is byte for byte the same.
  ctx.type = 'json';
  ctx.body = response.body;
}
