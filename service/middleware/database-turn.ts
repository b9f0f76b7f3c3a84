import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import getRawBody from 'raw-body';
import { clientErrorMessage, clientErrorStatus, onParserFailure, type ParserError } from '../client-error';
import { bodyIncomplete, bodyTooLarge, bodyTooSlow, HttpError, MESSAGES, unavailable, unsupportedTransferEncoding } from '../errors';

// A database turn for a ready request: the body is read first (readBodyFirst), then a turn is taken (admission).

declare module 'koa' {
  interface Request {
    /** The body's bytes as sent, read by readBodyFirst() before the request takes a turn. */
    rawBody?: Buffer;
  }
}

/** The most a body may hold, on the wire and again after decompression. */
export const BODY_LIMIT_BYTES = 100 * 1024;

// Every refusal here closes the connection: the parser cannot find the next request's start in what is left of the body.
const malformed = (error: ParserError) => new HttpError(clientErrorStatus(error.code), clientErrorMessage(error.code), {}, { Connection: 'close' });

/** Whether the request says a body follows (RFC 9112 §6.3): Transfer-Encoding, or a Content-Length above 0. */
export function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}

/**
 * Refuses a Transfer-Encoding other than plain `chunked` with a 501, as nginx does: Node would
 * hand a `gzip, chunked` body over still gzip-coded, and refuses the rest only after the head.
 */
function checkTransferEncoding(req: IncomingMessage): void {
  const value = req.headers['transfer-encoding'];
  if (value === undefined) return;
  const codings = value.split(',').map((coding) => coding.trim().toLowerCase()).filter(Boolean);
  if (codings.length !== 1 || codings[0] !== 'chunked') throw unsupportedTransferEncoding(value);
}

function fromRawBody(error: unknown): never {
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large') throw bodyTooLarge();
  if (type === 'request.aborted' || type === 'request.size.invalid') throw bodyIncomplete();
  throw error;
}

/**
 * The whole body, at most BODY_LIMIT_BYTES, within `timeoutMs` (else a 408). A framing error the
 * parser finds meanwhile (a bad chunk size, chunk extensions over 16 KB) is its JSON 4xx at once,
 * not a read that waits until the client leaves.
 */
export async function readBody(req: IncomingMessage, timeoutMs: number): Promise<Buffer> {
  checkTransferEncoding(req);
  let timer: NodeJS.Timeout | undefined;
  let stopListening = () => {};
  const interrupted = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(bodyTooSlow()), timeoutMs);
    stopListening = onParserFailure(req.socket, (error) => reject(malformed(error)));
  });
  // A Content-Length over the limit is refused before a byte is read. It counts the bytes as
  // sent (compressed, for gzip), which is what the limit applies to on the wire.
  const reading = getRawBody(req, { limit: BODY_LIMIT_BYTES, length: req.headers['content-length'] }).catch(fromRawBody);
  // Interrupted reads settle when the connection closes; nobody waits for them then.
  reading.catch(() => undefined);
  try {
    return await Promise.race([reading, interrupted]);
  } finally {
    clearTimeout(timer);
    stopListening();
  }
}

/**
 * Reads a declared body before anything downstream runs, so the admission turn after it is only
 * ever held by a request ready to run: a client that sends slowly, stops halfway or breaks its
 * chunks costs a socket and a timer, never a turn. The bytes wait in ctx.request.rawBody.
 */
export function readBodyFirst(timeoutMs: number): Middleware {
  return async (ctx, next) => {
    if (declaresBody(ctx.req)) ctx.request.rawBody = await readBody(ctx.req, timeoutMs);
    await next();
  };
}

export interface AdmissionLimits {
  /** Requests served at once: the pool's size, so admitted requests rarely wait for a connection. */
  concurrency: number;
  /** Longest wait for a turn; a request that would wait longer is refused at once. */
  queueTimeoutMs: number;
  /** A fixed number of requests that may wait, instead of the expected-wait bound (unset: that bound). */
  queueLimit?: number;
}

export interface AdmissionStats {
  inUse: number;
  waiting: number;
  /** Refused on arrival: the wait they faced was longer than queueTimeoutMs (or the fixed queue was full). */
  refused: number;
  /** Waited queueTimeoutMs without a turn. */
  timedOut: number;
  /** Their client went away while they waited. */
  abandoned: number;
  /** The running average time a request holds its turn (0 before the first one ended). */
  serviceMs: number;
}

export interface Admission {
  middleware: Middleware;
  /** Whether a request arriving now would be refused. */
  full(): boolean;
  stats(): AdmissionStats;
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

/**
 * The wait queue in front of the database pool. At most `concurrency` requests run. A request
 * that finds every turn taken waits, unless the wait it faces (the requests ahead of it, times
 * the measured time a turn is held, over the number of turns) is longer than `queueTimeoutMs`:
 * then it is a 503 with Retry-After at once, cheaper than a wait that would end in a 503 anyway.
 * So the queue is as long as the pool can serve in time, whatever the pool and the queries cost,
 * and a slower database shortens it as soon as its turns end (every query is bounded by
 * DB_QUERY_TIMEOUT_MS). The estimate counts finished turns only: counting the age of running
 * ones, which jumps with every pause of the event loop, refused work that was served in time. A
 * waiter still waiting after `queueTimeoutMs` is a 503; one whose client went away leaves
 * without running, so it costs no database time. With `queueLimit`, a fixed number may wait
 * instead (DB_QUEUE_LIMIT: an operator's choice, and the unbounded baseline of the benchmark).
 */
export function createAdmission({ concurrency, queueLimit, queueTimeoutMs }: AdmissionLimits): Admission {
  let running = 0;
  let serviceMs = 0;
  const queue: Waiter[] = [];
  const counts = { refused: 0, timedOut: 0, abandoned: 0 };

  const expectedWaitMs = () => ((queue.length + 1) * serviceMs) / concurrency;
  const full = () =>
    running >= concurrency && (queueLimit === undefined ? expectedWaitMs() > queueTimeoutMs : queue.length >= queueLimit);

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
