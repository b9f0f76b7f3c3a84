/**
 * The wait queue in front of the pool (service/middleware/admission.ts), driven directly: who
 * runs, who waits, who is refused at once (a wait longer than its deadline, or the optional
 * cap), what each refusal says, what it counts, and that a client that went away never takes a
 * turn. test/faults/overload.test.ts shows the same through a locked table.
 */
import { EventEmitter } from 'node:events';
import type { Context, Middleware } from 'koa';
import { admission, createAdmission, type Admission } from '../../../service/middleware/admission';
import { HttpError } from '../../../service/errors';

/** A request's context as admission reads it: the response stream, its close event and whether it is destroyed. */
function request() {
  const res = Object.assign(new EventEmitter(), { destroyed: false });
  const hangUp = () => {
    res.destroyed = true;
    res.emit('close');
  };
  return { ctx: { res } as unknown as Context, res, hangUp };
}

/** A request through `admit` whose handler runs until done(); `started` says whether it was let in. */
function enter(admit: Middleware, ctx: Context = request().ctx) {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const entry = { started: false, result: Promise.resolve() };
  entry.result = admit(ctx, async () => {
    entry.started = true;
    await finished;
  }) as Promise<void>;
  return Object.assign(entry, {
    /** Ends the handler and waits for admission to let go. */
    async done() {
      finish();
      await entry.result;
    },
  });
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const UNAVAILABLE = 'Service temporarily unavailable. Retry in a few seconds.';

async function refusal(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

/** A turn is free: a new request runs at once. */
async function runsAtOnce(admit: Middleware): Promise<void> {
  const next = enter(admit);
  await tick();
  expect(next.started).toBe(true);
  await next.done();
}

/** `waiting` takes the turn when `running` ends. */
async function takesTheTurnAfter(running: ReturnType<typeof enter>, waiting: ReturnType<typeof enter>): Promise<void> {
  await running.done();
  await tick();
  expect(waiting.started).toBe(true);
  await waiting.done();
}

test('one runs, one waits, the next is a 503 with Retry-After at once; the waiter runs when the turn is free', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 60_000 });
  const [a, b] = [enter(admit), enter(admit)];
  await tick();
  expect([a.started, b.started]).toEqual([true, false]);

  const third = await refusal(enter(admit).result);
  expect(third).toMatchObject({ status: 503, message: UNAVAILABLE, headers: { 'Retry-After': '5' } });

  await takesTheTurnAfter(a, b);
});

test('two turns serve two at once', async () => {
  const admit = admission({ concurrency: 2, queueLimit: 0, queueTimeoutMs: 60_000 });
  const [a, b] = [enter(admit), enter(admit)];
  await tick();
  expect([a.started, b.started]).toEqual([true, true]);
  expect((await refusal(enter(admit).result)).status).toBe(503);
  await Promise.all([a.done(), b.done()]);
});

test('a waiter gives up after queueTimeoutMs with a 503, and leaves the queue', async () => {
  const gate = createAdmission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 50 });
  const a = enter(gate.middleware);
  const started = Date.now();
  const waiter = enter(gate.middleware);
  const timedOut = await refusal(waiter.result);
  expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  expect(timedOut).toMatchObject({ status: 503, message: UNAVAILABLE, headers: { 'Retry-After': '5' } });
  expect(waiter.started).toBe(false);
  expect(gate.stats()).toMatchObject({ inUse: 1, waiting: 0, timedOut: 1, refused: 0 });

  await a.done();
  await runsAtOnce(gate.middleware);
});

test('a waiter whose client hangs up leaves the queue with its own 503 and never runs', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 60_000 });
  const a = enter(admit);
  const gone = request();
  const waiter = enter(admit, gone.ctx);
  await tick();
  gone.hangUp();
  expect(await refusal(waiter.result)).toMatchObject({
    status: 503,
    message: 'Client closed the request while it waited',
  });

  // Its place is free: another request queues, and takes the turn when it comes.
  const next = enter(admit);
  await takesTheTurnAfter(a, next);
  expect(waiter.started).toBe(false);
});

test('the turn skips a waiter whose client is gone but not yet closed, and goes to the next', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 2, queueTimeoutMs: 60_000 });
  const a = enter(admit);
  const gone = request();
  const skipped = enter(admit, gone.ctx);
  void skipped.result.catch(() => undefined);
  const next = enter(admit);
  await tick();
  gone.res.destroyed = true;
  await a.done();
  await tick();
  expect([skipped.started, next.started]).toEqual([false, true]);
  gone.res.emit('close');
  await next.done();
  // Every turn is back.
  await runsAtOnce(admit);
});

test('a skipped waiter whose connection closes later takes no one else out of the queue', async () => {
  const gate = createAdmission({ concurrency: 1, queueTimeoutMs: 60_000 });
  const a = enter(gate.middleware);
  const gone = request();
  const skipped = enter(gate.middleware, gone.ctx);
  void skipped.result.catch(() => undefined);
  const [b, c] = [enter(gate.middleware), enter(gate.middleware)];
  await tick();
  gone.res.destroyed = true;
  await a.done();
  await tick();
  expect(b.started).toBe(true);
  gone.res.emit('close');
  expect(gate.stats()).toMatchObject({ waiting: 1, abandoned: 1 });
  await takesTheTurnAfter(b, c);
});

test('a request whose client is already gone is refused before it takes a turn', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 60_000 });
  const gone = request();
  gone.res.destroyed = true;
  const never = enter(admit, gone.ctx);
  expect(await refusal(never.result)).toMatchObject({
    status: 503,
    message: 'Client closed the request before it was served',
    headers: { 'Retry-After': '5' },
  });
  expect(never.started).toBe(false);
  // It took nothing: the one turn is still free.
  await runsAtOnce(admit);
});

test('a handler that throws still gives its turn back', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 0, queueTimeoutMs: 60_000 });
  await expect(admit(request().ctx, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  await runsAtOnce(admit);
});

test('a waiter let in keeps nothing of its wait: neither its timer nor its client closing touches the queue', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 100 });
  const a = enter(admit);
  const bRequest = request();
  const b = enter(admit, bRequest.ctx);
  // b waits 50 ms of its 100, then runs; c queues behind it.
  await sleep(50);
  await a.done();
  await tick();
  expect(b.started).toBe(true);
  const c = enter(admit);
  // While b runs, its client goes away and its old wait limit passes; c's has 30 ms to go.
  bRequest.hangUp();
  await sleep(70);
  await takesTheTurnAfter(b, c);
});

/** One request through `gate` that holds its turn for `ms`. */
async function holdFor(gate: Admission, ms: number): Promise<void> {
  const entry = enter(gate.middleware);
  await sleep(ms);
  await entry.done();
}

describe('shedding by expected wait', () => {
  test('with no cap, requests wait while the wait ahead of them fits in queueTimeoutMs; the next is a 503 at once', async () => {
    const gate = createAdmission({ concurrency: 2, queueTimeoutMs: 1000 });
    // Two turns held 100 ms each: a turn is held about 100 ms.
    await Promise.all([holdFor(gate, 100), holdFor(gate, 100)]);
    const serviceMs = gate.stats().serviceMs;
    expect(serviceMs).toBeGreaterThanOrEqual(95);

    const running = [enter(gate.middleware), enter(gate.middleware)];
    const waiting: Array<ReturnType<typeof enter>> = [];
    // The n-th waiter expects to wait n x serviceMs / 2 turns.
    const fits = Math.floor((1000 * 2) / serviceMs);
    for (let n = 1; n <= fits; n++) waiting.push(enter(gate.middleware));
    expect(gate.full()).toBe(true);
    const refused = await refusal(enter(gate.middleware).result);
    expect(refused).toMatchObject({ status: 503, message: UNAVAILABLE, headers: { 'Retry-After': '5' } });
    expect(gate.stats()).toMatchObject({ inUse: 2, waiting: fits, refused: 1, timedOut: 0 });

    // Every one that waited is served in turn.
    for (const entry of [...running, ...waiting]) await entry.done();
    expect(waiting.every((entry) => entry.started)).toBe(true);
    expect(gate.stats()).toMatchObject({ inUse: 0, waiting: 0 });
    expect(gate.full()).toBe(false);
  });

  test('a fast pool queues far more than a fixed cap of 50 would', async () => {
    const gate = createAdmission({ concurrency: 1, queueTimeoutMs: 5000 });
    await holdFor(gate, 5);
    const running = enter(gate.middleware);
    const waiting = Array.from({ length: 200 }, () => enter(gate.middleware));
    await tick();
    expect(gate.stats()).toMatchObject({ waiting: 200, refused: 0 });
    await running.done();
    for (const entry of waiting) await entry.done();
    expect(waiting.every((entry) => entry.started)).toBe(true);
  });

  test('slower turns shorten the queue: the estimate follows the time turns are held', async () => {
    const gate = createAdmission({ concurrency: 1, queueTimeoutMs: 250 });
    /** Waiters let in behind one running request until the next is refused; all of them then finish. */
    const queueLength = async () => {
      const running = enter(gate.middleware);
      const waiting: Array<ReturnType<typeof enter>> = [];
      while (!gate.full()) waiting.push(enter(gate.middleware));
      expect((await refusal(enter(gate.middleware).result)).status).toBe(503);
      await running.done();
      for (const entry of waiting) await entry.done();
      return waiting.length;
    };
    await holdFor(gate, 10);
    const fast = await queueLength();
    // A database grown slow: turns now held 100 ms or more.
    for (let i = 0; i < 40; i++) await holdFor(gate, 100);
    const fits = Math.floor(250 / gate.stats().serviceMs);
    const slow = await queueLength();
    expect(slow).toBe(fits);
    expect(slow).toBeLessThanOrEqual(2);
    expect(fast).toBeGreaterThan(slow);
  }, 15_000);

  test('a client gone while it waited is counted as abandoned, and a turn it would have had goes on', async () => {
    const gate = createAdmission({ concurrency: 1, queueTimeoutMs: 60_000 });
    const a = enter(gate.middleware);
    const gone = request();
    const waiter = enter(gate.middleware, gone.ctx);
    await tick();
    gone.hangUp();
    await refusal(waiter.result);
    expect(gate.stats()).toMatchObject({ abandoned: 1, waiting: 0, inUse: 1 });
    await a.done();
    expect(gate.stats().inUse).toBe(0);
  });
});
