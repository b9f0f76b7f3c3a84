import Router from '@koa/router';
import { ping as pingDatabase, type Database } from '../db/client';
import { deadlineError } from '../db/errors';
import { MESSAGES, unavailable } from './errors';
import { named } from './http/router';
import type { Admission } from './middleware/admission';

/** Resolves like `work`, or rejects with a deadline error after `ms` (the work itself goes on). */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(deadlineError(ms)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Probes for orchestrators, outside /api/v1 and outside the gateway's routes. */
export function healthRouter(db: Database, readyTimeoutMs: number, admission?: Pick<Admission, 'full'>): Router {
  const router = new Router();
  // Liveness, what Kong's active checks read: the process answers; never the database every instance shares.
  router.get('/healthz', named('/healthz'), (ctx) => {
    ctx.body = { status: 'ok' };
  });
  // Readiness, for orchestrators and operators (Kong never reads it): the database answers in time, else the error middleware's 503.
  router.get('/readyz', named('/readyz'), async (ctx) => {
    if (admission?.full()) {
      throw unavailable(MESSAGES.saturated);
    }
    const ping = pingDatabase(db);
    ping.catch(() => undefined); // a late failure, after the deadline answered, is not unhandled
    await within(ping, readyTimeoutMs);
    ctx.body = { status: 'ready' };
  });
  return router;
}
