import Router, { type RouterMiddleware } from '@koa/router';
import type { Database } from '../../db/client';
import { primaryOf } from '../../db/replicas';
import { isUuid } from '../../db/uuid';
import { HttpError, jobNotFound } from '../errors';
import { idempotent } from '../middleware/idempotency';
import { jsonBody } from '../middleware/json-body';
import { changesPage } from './changes-page';
import { parseChangesQuery } from './changes-query';
import { conditional } from './conditional';
import { parseCreateJobBody } from './create-body';
import { newJobRow } from './create-job';
import { listPage } from './list-page';
import { parseListQuery } from './list-query';
import { projectJob } from './project';
import { findJob, insertJob } from './repository';
import { signingKey } from './signing-key';

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
  // With DATABASE_READ_URLS, `db` reads from a replica; what must see the latest writes reads here.
  const primary = primaryOf(db);

  router.get('/', conditional, async (ctx) => {
    const query = parseListQuery(ctx.query);
    const { body, next } = await listPage(db, await signingKey(db), query);
    // Relative: behind the gateway the Host we see is the upstream's, not the one the partner called.
    if (next) ctx.set('Link', `<${next}>; rel="next"`);
    ctx.body = body;
  });

  // Before '/:id', which would take "changes" for an id.
  router.get('/changes', conditional, async (ctx) => {
    const query = parseChangesQuery(ctx.query);
    // The feed reads the primary: its positions must never go backwards between two polls.
    ctx.body = await changesPage(primary, await signingKey(db), query);
  });

  router.get('/:id', conditional, async (ctx) => {
    const id = ctx.params.id ?? '';
    if (!isUuid(id)) throw jobNotFound();
    const consumerId = ctx.state.consumer?.id;
    // A replica that has not caught up yet must not 404 a job that exists: a miss is asked again
    // of the primary, so a create followed by a GET of its id is found on any instance.
    // Either case finds the job: the id is compared as the 16 bytes its hex spells (db/uuid.ts).
    const row =
      (await findJob(db, id, consumerId)) ?? (primary === db ? undefined : await findJob(primary, id, consumerId));
    if (!row) throw jobNotFound();
    ctx.body = { data: projectJob(row) };
  });

  router.post('/', requireConsumer, requireJson, parseJson, idempotent(primary), async (ctx) => {
    // With an Idempotency-Key the job is written and read back in the key's transaction.
    const write = ctx.state.tx ?? primary;
    const body = parseCreateJobBody(ctx.request.body!);
    const row = newJobRow(body, ctx.state.consumer!.id);
    await insertJob(write, row);
    // Read back through the one projection: the 201 is exactly what GET will answer. Read where
    // it was just written (the key's transaction or the primary), so it is there.
    const stored = (await findJob(write, row.id, ctx.state.consumer!.id))!;
    ctx.status = 201;
    ctx.set('Location', `/api/v1/jobs/${stored.id}`);
    ctx.body = { data: projectJob(stored) };
  });

  return router;
}
