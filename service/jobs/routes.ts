import Router, { type RouterMiddleware } from '@koa/router';
import type { Database } from '../../db/client';
import { isUuid } from '../../db/uuid';
import { HttpError, jobNotFound } from '../errors';
import { jsonBody } from '../middleware/json-body';
import { parseCreateJobBody } from './create-body';
import { newJob } from './create-job';
import { parseListQuery } from './list-query';
import { projectJob } from './project';
import { findJob, insertJob, listJobs } from './repository';

/** Create takes JSON only; anything else is refused before the body is read. */
const requireJson: RouterMiddleware = async (ctx, next) => {
  if (!ctx.is('application/json')) {
    throw new HttpError(415, 'Content-Type must be application/json');
  }
  await next();
};

const requireConsumer: RouterMiddleware = async (ctx, next) => {
  if (!ctx.state.consumer) {
    throw new HttpError(401, 'Missing consumer identity: requests must come through the API gateway');
  }
  await next();
};

const parseJson = jsonBody();

export function jobsRouter(db: Database): Router {
  const router = new Router({ prefix: '/api/v1/jobs' });

  router.get('/', async (ctx) => {
    const query = parseListQuery(ctx.query);
    const { rows, total } = await listJobs(db, query);
    ctx.body = {
      data: rows.map(projectJob),
      meta: { total, page: query.page, limit: query.limit, totalPages: Math.ceil(total / query.limit) },
    };
  });

  router.get('/:id', async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isUuid(id)) throw jobNotFound();
    const row = await findJob(db, id.toLowerCase(), ctx.state.consumer?.id);
    if (!row) throw jobNotFound();
    ctx.body = { data: projectJob(row) };
  });

  router.post('/', requireConsumer, requireJson, parseJson, async (ctx) => {
    const body = parseCreateJobBody(ctx.request.body);
    const { row, view } = newJob(body, ctx.state.consumer!.id);
    await insertJob(db, row);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/jobs/${view.id}`);
    ctx.body = { data: projectJob(view) };
  });

  return router;
}
