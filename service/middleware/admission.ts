import type { Context, Middleware } from 'koa';
import { HttpError, MESSAGES, unavailable } from '../errors';
import type { AdmissionStats } from '../metrics';

export interface AdmissionLimits {
  /** Requests served at once: the pool's size, so admitted requests rarely wait for a connection. */
  concurrency: number;
  /** Longest wait for a turn; a request that would wait longer is refused at once. */
  queueTimeoutMs: number;
  /** A fixed number of requests that may wait, instead of the expected-wait bound (unset: that bound). */
  queueLimit?: number;
}

export interface Admission {
  middleware: Middleware;
  /** Whether a request arriving now would be refused. */
  full: () => boolean;
  stats: () => AdmissionStats;
}

const gone = () => unavailable(MESSAGES.leftWhileWaiting);

/** The client closed its connection: nobody would read the answer. */
const abandoned = (ctx: Context) => ctx.res.destroyed;

// Weight of the latest turn in the running average: about the last twenty turns count.
const SMOOTHING = 0.05;

interface Waiter {
  admit(): void;
  /** Leaves the queue, its client gone. */
  drop(): void;
  ctx: Context;
}

/** The wait queue in front of the database pool. */
export function createAdmission({ concurrency, queueLimit, queueTimeoutMs }: AdmissionLimits): Admission {
  let running = 0;
  let serviceMs = 0;
  const queue: Waiter[] = [];
  const counts = { refused: 0, timedOut: 0, abandoned: 0 };

  const expectedWaitMs = () => ((queue.length + 1) * serviceMs) / concurrency;
  const full = () =>
    running >= concurrency &&
    (queueLimit === undefined ? expectedWaitMs() > queueTimeoutMs : queue.length >= queueLimit);

  const release = (heldMs: number) => {
    serviceMs = serviceMs === 0 ? heldMs : serviceMs + SMOOTHING * (heldMs - serviceMs);
    // Hand the turn to the next waiter whose client is still there.
    for (let next = queue.shift(); next; next = queue.shift()) {
      if (!abandoned(next.ctx)) return next.admit();
      next.drop();
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
        drop: () => leave('abandoned', gone()),
      };
      // Only while waiting: admit() settles first, which clears both triggers of leave().
      const leave = (count: 'timedOut' | 'abandoned', error: HttpError) => {
        settle();
        counts[count]++;
        const place = queue.indexOf(waiter);
        if (place >= 0) queue.splice(place, 1); // drop() is called once release() took it out
        reject(error);
      };
      const timer = setTimeout(() => leave('timedOut', unavailable()), queueTimeoutMs);
      const onClose = () => leave('abandoned', gone());
      const settle = () => {
        clearTimeout(timer);
        ctx.res.off('close', onClose);
      };
      ctx.res.once('close', onClose);
      queue.push(waiter);
    });

  const middleware: Middleware = async (ctx, next) => {
    if (abandoned(ctx)) throw unavailable(MESSAGES.leftBeforeServed);
    if (running < concurrency) {
      running++;
    } else if (full()) {
      counts.refused++;
      throw unavailable();
    } else {
      await waitForTurn(ctx); // the turn is handed over with `running` unchanged
    }
    const started = performance.now();
    try {
      await next();
    } finally {
      release(performance.now() - started);
    }
  };

  return {
    middleware,
    full,
    stats: () => ({ inUse: running, waiting: queue.length, ...counts, serviceMs }),
  };
}

/** The admission middleware alone. */
export const admission = (limits: AdmissionLimits): Middleware => createAdmission(limits).middleware;
