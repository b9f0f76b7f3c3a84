import { findJob } from '../../../db/jobs/job-store';
import { primaryOf } from '../../../db/sql';
import { jobNotFound, MESSAGES } from '../../errors';
import { JobIdParams } from '../contract/queries';
import { errorResponse, JOB_EXAMPLE, JobEnvelope } from '../contract/responses';
import { defineRoute } from './route';

export const getJobRoute = defineRoute({
  operationId: 'getJob',
  method: 'get',
  path: '/api/v1/jobs/:id',
  scope: 'jobs:read',
  tag: 'jobs',
  summary: 'One job (any status but draft; a draft only to the consumer that created it)',
  params: JobIdParams,
  conditional: true,
  database: true,
  responses: {
    '200': { description: 'The job', body: JobEnvelope, example: { data: JOB_EXAMPLE } },
    '404': errorResponse('Job not found: unknown id, not a UUID, removed, or another consumer\'s draft', MESSAGES.jobNotFound),
  },
  handler: (db) => {
    const primary = primaryOf(db);
    return async (ctx, { params: { id } }) => {
      const consumerId = ctx.state.consumer?.id;
      // A replica that has not caught up yet must not 404 a job that exists: a miss is asked again
      // of the primary, so a create followed by a GET of its id is found on any instance.
      // Either case finds the job: the id is compared as the 16 bytes its hex spells (uuidToBuffer, db/schema.ts).
      const job = (await findJob(db, id, consumerId)) ?? (primary === db ? undefined : await findJob(primary, id, consumerId));
      if (!job) throw jobNotFound();
      ctx.body = { data: job };
    };
  },
});
