import Router from '@koa/router';
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client';

/** Probes for orchestrators, outside /api/v1 and outside the gateway's routes. */
export function healthRouter(db: Database): Router {
  const router = new Router();
  // Liveness: the process answers.
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  // Readiness: the database answers too; a failure becomes the error middleware's 503.
  router.get('/readyz', async (ctx) => {
    await db.execute(sql`select 1`);
    ctx.body = { status: 'ready' };
  });
  return router;
}
