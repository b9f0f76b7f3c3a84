import Router from '@koa/router';
import { conditional } from './conditional';
import { openApiDocument } from './openapi';

/** GET /api/v1/openapi.json: the contract, behind the gateway's jobs:read like every read. */
export function openApiRouter(): Router {
  const router = new Router();
  router.get('/api/v1/openapi.json', conditional, (ctx) => {
    ctx.body = openApiDocument();
  });
  return router;
}
