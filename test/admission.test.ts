/**
 * The wait queue in front of the pool (service/middleware/admission.ts), driven directly: who
 * runs, who waits, who is refused at once, what each refusal says, and that a client that went
 * away never takes a turn. test/faults/overload.test.ts shows the same through a locked table.
 */
import { EventEmitter } from 'node:events';
import type { Context } from 'koa';
import { admission } from '../service/middleware/admission';
import { HttpError } from '../service/errors';

/** A request's context as admission reads it: the response stream, its close event and whether it is destroyed. */
function request() {
  const res = Object.assign(new EventEmitter(), { destroyed: false });
  const hangUp = () => {
    res.destroyed = true;
    res.emit('close');
  };
  return { ctx: { res } as unknown as Context, res, hangUp };
}

/** A handler that runs until finish() is called; `started` says whether it was let in. */
function handler() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const state = { started: false, finish: () => finish() };
  const next = async () => {
    state.started = true;
    await done;
  };
  return { state, next };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const UNAVAILABLE = 'Service temporarily unavailable. Retry in a few seconds.';

async function refusal(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

test('one runs, one waits, the next is a 503 with Retry-After at once; the waiter runs when the turn is free', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 60_000 });
  const [a, b] = [handler(), handler()];
  const first = admit(request().ctx, a.next);
  const second = admit(request().ctx, b.next);
  await tick();
  expect([a.state.started, b.state.started]).toEqual([true, false]);

  const third = await refusal(admit(request().ctx, handler().next));
  expect(third).toMatchObject({ status: 503, message: UNAVAILABLE, headers: { 'Retry-After': '5' } });

  a.state.finish();
  await first;
  await tick();
  expect(b.state.started).toBe(true);
  b.state.finish();
  await second;
});

test('two turns serve two at once', async () => {
  const admit = admission({ concurrency: 2, queueLimit: 0, queueTimeoutMs: 60_000 });
  const [a, b] = [handler(), handler()];
  const running = [admit(request().ctx, a.next), admit(request().ctx, b.next)];
  await tick();
  expect([a.state.started, b.state.started]).toEqual([true, true]);
  expect((await refusal(admit(request().ctx, handler().next))).status).toBe(503);
  a.state.finish();
  b.state.finish();
  await Promise.all(running);
});

test('a waiter gives up after queueTimeoutMs with a 503, and its place is free again', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 50 });
  const a = handler();
  const first = admit(request().ctx, a.next);
  const waiter = handler();
  const started = Date.now();
  const timedOut = await refusal(admit(request().ctx, waiter.next));
  expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  expect(timedOut).toMatchObject({ status: 503, message: UNAVAILABLE, headers: { 'Retry-After': '5' } });
  expect(waiter.state.started).toBe(false);

  // The place it left can be taken: this one waits instead of being refused at once.
  const next = handler();
  const queued = admit(request().ctx, next.next);
  await tick();
  a.state.finish();
  await first;
  await tick();
  expect(next.state.started).toBe(true);
  next.state.finish();
  await queued;
});

test('a waiter whose client hangs up leaves the queue with its own 503 and never runs', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 60_000 });
  const a = handler();
  const first = admit(request().ctx, a.next);
  const gone = request();
  const waiter = handler();
  const waiting = admit(gone.ctx, waiter.next);
  await tick();
  gone.hangUp();
  expect(await refusal(waiting)).toMatchObject({ status: 503, message: 'Client closed the request while it waited' });

  // Its place is free: another request queues, and takes the turn when it comes.
  const next = handler();
  const queued = admit(request().ctx, next.next);
  a.state.finish();
  await first;
  await tick();
  expect([waiter.state.started, next.state.started]).toEqual([false, true]);
  next.state.finish();
  await queued;
});

test('the turn skips a waiter whose client is gone but not yet closed, and goes to the next', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 2, queueTimeoutMs: 60_000 });
  const a = handler();
  const first = admit(request().ctx, a.next);
  const gone = request();
  const [skipped, next] = [handler(), handler()];
  void admit(gone.ctx, skipped.next).catch(() => undefined);
  const queued = admit(request().ctx, next.next);
  await tick();
  gone.res.destroyed = true;
  a.state.finish();
  await first;
  await tick();
  expect([skipped.state.started, next.state.started]).toEqual([false, true]);
  gone.res.emit('close');
  next.state.finish();
  await queued;
  // Every turn is back: a new request runs at once.
  const later = handler();
  const last = admit(request().ctx, later.next);
  await tick();
  expect(later.state.started).toBe(true);
  later.state.finish();
  await last;
});

test('a request whose client is already gone is refused before it takes a turn', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 60_000 });
  const gone = request();
  gone.res.destroyed = true;
  const never = handler();
  expect(await refusal(admit(gone.ctx, never.next))).toMatchObject({
    status: 503,
    message: 'Client closed the request before it was served',
    headers: { 'Retry-After': '5' },
  });
  expect(never.state.started).toBe(false);
  // It took nothing: the one turn is still free.
  const next = handler();
  const running = admit(request().ctx, next.next);
  await tick();
  expect(next.state.started).toBe(true);
  next.state.finish();
  await running;
});

test('a handler that throws still gives its turn back', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 0, queueTimeoutMs: 60_000 });
  await expect(admit(request().ctx, async () => { throw new Error('boom'); })).rejects.toThrow('boom');
  const next = handler();
  const running = admit(request().ctx, next.next);
  await tick();
  expect(next.state.started).toBe(true);
  next.state.finish();
  await running;
});

test('a waiter let in keeps nothing of its wait: neither its timer nor its client closing touches the queue', async () => {
  const admit = admission({ concurrency: 1, queueLimit: 1, queueTimeoutMs: 100 });
  const [a, b, c] = [handler(), handler(), handler()];
  const first = admit(request().ctx, a.next);
  const bRequest = request();
  const second = admit(bRequest.ctx, b.next);
  // b waits 50 ms of its 100, then runs; c queues behind it.
  await sleep(50);
  a.state.finish();
  await first;
  await tick();
  expect(b.state.started).toBe(true);
  const third = admit(request().ctx, c.next);
  // While b runs, its client goes away and its old wait limit passes; c's has 30 ms to go.
  bRequest.hangUp();
  await sleep(70);
  b.state.finish();
  await second;
  await tick();
  expect(c.state.started).toBe(true);
  c.state.finish();
  await third;
});
