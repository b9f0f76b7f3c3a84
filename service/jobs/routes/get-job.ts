import { JOB_EXAMPLE } from '../../../domain/job';
import { findJob } from '../../../db/jobs/job-store';
import { jobNotFound, MESSAGES } from '../../errors';
import { JobIdParams } from '../contract/queries';
import { JobEnvelope } from '../contract/responses';
import { errorResponse } from '../../http/responses';
import { defineRoute } from '../../http/route';

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
    '404': errorResponse(
      "Job not found: unknown id, not a UUID, removed, or another consumer's draft",
      MESSAGES.jobNotFound,
    ),
  },
  handler:
    ({ db }) =>
    async (ctx, { params: { id } }) => {
      const job = await findJob(db, id, ctx.state.consumer?.id);
      if (!job) throw jobNotFound();
      ctx.body = { data: job };
    },
});
