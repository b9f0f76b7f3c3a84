import { findJob, insertJob } from '../../../db/jobs/job-store';
import { primaryOf } from '../../../db/sql';
import { MESSAGES } from '../../errors';
import { idempotently } from '../../middleware/idempotency';
import { CREATE_BODY } from '../contract/create-body';
import { errorResponse, JOB_EXAMPLE, JobEnvelope, ValidationErrorBody } from '../contract/responses';
import { defineRoute } from './route';

export const createJobRoute = defineRoute({
  operationId: 'createJob',
  method: 'post',
  path: '/api/v1/jobs',
  scope: 'jobs:write',
  tag: 'jobs',
  summary: 'Create a job (stored as draft unless a status is sent)',
  headers: {
    'Idempotency-Key': {
      description: 'Makes a retry safe: the same body with the same key within 24 hours answers the first 201 again instead of creating a second job',
      pattern: '^[\\x21-\\x7E]{1,255}$',
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
      headers: {
        Location: '/api/v1/jobs/{id}',
        'Idempotent-Replayed': 'true when this is the stored answer to an earlier request with the same Idempotency-Key',
      },
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
      { 'Retry-After': { description: 'Seconds to wait', type: 'integer' } },
    ),
    '413': errorResponse('Body over 100 KB ("Request size limit exceeded" from the gateway)', 'Request size limit exceeded'),
    '415': errorResponse('Content-Type is not application/json, or an unsupported body encoding', MESSAGES.notJson),
    '422': errorResponse(
      'This Idempotency-Key was used with a different body',
      MESSAGES.keyReused,
    ),
  },
  handler: (db) => {
    // Writes, and the read-back after them, go to the primary: a replica may not have the job yet.
    const primary = primaryOf(db);
    return (ctx, { body }) =>
      idempotently(ctx, primary, async (write) => {
        const consumerId = ctx.state.consumer!.id;
        const id = await insertJob(write, body, consumerId);
        // Read back through the one projection, where it was just written: the 201 is exactly what GET will answer.
        const job = (await findJob(write, id, consumerId))!;
        ctx.status = 201;
        ctx.set('Location', `/api/v1/jobs/${job.id}`);
        ctx.body = { data: job };
      });
  },
});
