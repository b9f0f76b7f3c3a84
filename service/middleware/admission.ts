import type { Context, Middleware } from 'koa';
import { HttpError } from '../errors';
import { RETRY_AFTER_SECONDS } from './error-handler';

export interface AdmissionLimits {
  /** Requests served at once: the pool's size, so admitted requests rarely wait for a connection. */
  concurrency: number;
  /** Requests waiting for a turn; one more is refused at once. */
  queueLimit: number;
  /** Longest wait for a turn. */
  queueTimeoutMs: number;
}

const unavailable = (message: string) => new HttpError(503, message, {}, { 'Retry-After': RETRY_AFTER_SECONDS });

/** The client closed its connection: nobody would read the answer. */
const abandoned = (ctx: Context) => ctx.res.destroyed;

interface Waiter {
  admit(): void;
  ctx: Context;
}

/**
 * A bounded wait queue in front of the database pool. At most `concurrency` requests run; up to
 * `queueLimit` more wait, each at most `queueTimeoutMs`; beyond that a request is a 503 with
 * Retry-After at once instead of an ever longer queue. A request whose client has gone away
 * while it waited is dropped without running, so it costs no database time.
 */
export function admission({ concurrency, queueLimit, queueTimeoutMs }: AdmissionLimits): Middleware {
  let running = 0;
  const queue: Waiter[] = [];

  const release = () => {
    // Hand the turn to the next waiter whose client is still there.
    for (let next = queue.shift(); next; next = queue.shift()) {
      if (!abandoned(next.ctx)) return next.admit();
    }
    running--;
  };

  const waitForTurn = (ctx: Context) =>
    new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        ctx,
        admit: () => {
          settle();
          resolve();
        },
      };
      // Only while waiting: admit() settles first, which clears both triggers of leave().
      const leave = (error: HttpError) => {
        settle();
        queue.splice(queue.indexOf(waiter), 1);
        reject(error);
      };
      const timer = setTimeout(() => leave(unavailable('Service temporarily unavailable. Retry in a few seconds.')), queueTimeoutMs);
      const onClose = () => leave(unavailable('Client closed the request while it waited'));
      const settle = () => {
        clearTimeout(timer);
        ctx.res.off('close', onClose);
      };
      ctx.res.once('close', onClose);
      queue.push(waiter);
    });

  return async (ctx, next) => {
    if (abandoned(ctx)) throw unavailable('Client closed the request before it was served');
    if (running < concurrency) {
      running++;
    } else if (queue.length < queueLimit) {
      await waitForTurn(ctx); // the turn is handed over with `running` unchanged
    } else {
      throw unavailable('Service temporarily unavailable. Retry in a few seconds.');
    }
    try {
      await next();
    } finally {
      release();
    }
  };
}
