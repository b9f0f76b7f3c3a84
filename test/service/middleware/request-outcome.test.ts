/**
 * The one error middleware (service/middleware/request-outcome.ts): what a client reads when
 * something fails, and what the log keeps of it.
 * - through the real app: a database error that is not an outage is a bare 500; a router's 501
 *   (a method it does not know) is the same 405 as any other wrong method;
 * - through a Koa app with only the middleware: the kinds of error Koa, its routers and raw-body
 *   throw (http-errors with status and expose), which the service's own routes rarely produce,
 *   and responses a route writes itself.
 */
import Koa from 'koa';
import { requestOutcome } from '../../../service/middleware/request-outcome';
import { createLogger } from '../../../service/logger';
import { HttpError } from '../../../service/errors';
import { call, expectJsonError, serve, type Served } from '../../helpers/http';
import { reader, json, writer } from '../../helpers/consumers';
import { memoryLog, sharedTestService } from '../../helpers/service';
import http from 'node:http';
import type { Parsed } from '../../helpers/parsed';

/** The log lines written so far, parsed (the logger may write a moment after the response). */
async function logLines(lines: string[], until: (entries: Array<Record<string, Parsed>>) => boolean) {
  let entries: Array<Record<string, Parsed>> = [];
  for (let i = 0; i < 50; i++) {
    entries = lines.map((line) => JSON.parse(line) as Record<string, Parsed>);
    if (until(entries)) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return entries;
}

describe('through the real app', () => {
  const service = sharedTestService({ name: 'error_handler' });

  test('a database error that is not an outage: 500 with a bare body, logged with its code and request id only', async () => {
    // A table gone missing is a bug or an operator's mistake, not something to retry: no 503.
    await service.database.query('RENAME TABLE jobs TO jobs_moved_away');
    try {
      const res = await call(`${service.url}/api/v1/jobs?department=Finance`, {
        headers: { ...reader, 'X-Request-ID': 'req-500-check' },
      });
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('retry-after')).toBeNull();
      expect(res.text).toBe('{"error":"Internal server error"}');

      const entries = await logLines(service.logs, (all) => all.some((e) => e.msg === 'request failed'));
      const failed = entries.filter((e) => e.msg === 'request failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ level: 50, reqId: 'req-500-check', err: { code: 'ER_NO_SUCH_TABLE' } });
      // The driver's message quotes the statement (and would quote bound values): never logged.
      expect(JSON.stringify(entries)).not.toMatch(/doesn't exist|select|Finance/i);
    } finally {
      await service.database.query('RENAME TABLE jobs_moved_away TO jobs');
    }
  });

  test('a client error is answered, not logged as a failure', async () => {
    const before = service.logs.length;
    const res = await call(`${service.url}/api/v1/jobs?limit=0`, { headers: reader });
    expect(res.status).toBe(400);
    const entries = await logLines(service.logs, (all) => all.length > before);
    expect(entries.slice(before).map((e) => e.msg)).toEqual(['request']);
  });

  test.each(['PROPFIND', 'MKCOL'])(
    '%s (a method the router does not implement: 501 inside) is a 405 with Allow',
    async (method) => {
      const res = await call(`${service.url}/api/v1/jobs`, { method, headers: reader });
      expectJsonError(res, 405, 'Method not allowed');
      expect(res.headers.get('allow')).toBe('HEAD, GET, POST');
    },
  );
});

describe('errors thrown by Koa and its middleware', () => {
  const lines: string[] = [];
  let served: Served;
  let thrown: unknown;
  beforeAll(async () => {
    const app = new Koa();
    app.silent = true;
    app.use(requestOutcome(createLogger('info', memoryLog(lines))));
    app.use((ctx) => {
      if (ctx.path === '/empty') return; // nothing answers: 404
      if (ctx.path === '/teapot') {
        ctx.body = 'short and stout';
        ctx.status = 418;
        return;
      }
      if (ctx.path === '/own-404') {
        ctx.body = { error: 'Job not found', id: 'x' };
        ctx.status = 404;
        return;
      }
      if (ctx.path === '/own-405') {
        ctx.body = { error: 'Not here' };
        ctx.status = 405;
        return;
      }
      if (ctx.path === '/no-content') {
        ctx.status = 204;
        return;
      }
      throw thrown;
    });
    served = await serve(app.callback());
  });
  afterAll(() => served.close());

  async function answerTo(error: unknown) {
    thrown = error;
    return call(`${served.url}/boom`);
  }
  const withStatus = (status: unknown, expose: unknown, message = 'Something the client did') =>
    Object.assign(new Error(message), { status, expose });

  test.each([
    [400, 'Bad Request: the header is malformed'],
    [411, 'Length Required'],
    [431, 'Request Header Fields Too Large'],
    [499, 'Client Closed Request'],
  ])('an exposed %i passes through with its message', async (status, message) => {
    const res = await answerTo(withStatus(status, true, message));
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error: message });
  });

  test("Koa's own ctx.throw(400) passes through", async () => {
    const app = new Koa();
    app.silent = true;
    app.use(requestOutcome(createLogger('silent')));
    app.use((ctx) => ctx.throw(400, 'Invalid thing'));
    const local = await serve(app.callback());
    try {
      expect(await call(local.url)).toMatchObject({ status: 400, body: { error: 'Invalid thing' } });
    } finally {
      await local.close();
    }
  });

  test.each([
    ['a 4xx not marked exposable', withStatus(400, false, 'internal detail')],
    ['a 4xx with an empty message', withStatus(404, true, '')],
    ['a 5xx, even marked exposable', withStatus(500, true, 'connection string mysql://root:pw@db')],
    ['a 502 marked exposable', withStatus(502, true, 'upstream detail')],
    ['a 3xx status', withStatus(399, true, 'redirect detail')],
    ['a status that is not a number', withStatus('400', true, 'string status')],
    ['a plain Error', new Error('TypeError in the code: x is undefined')],
    ['a thrown string', 'just a string'],
    ['a thrown null', null],
  ])('%s: 500 Internal server error, message hidden', async (_label, error) => {
    const before = lines.length;
    const res = await answerTo(error);
    expect(res.status).toBe(500);
    expect(res.text).toBe('{"error":"Internal server error"}');
    const entries = await logLines(lines, (all) => all.length > before);
    expect(entries.slice(before).filter((entry) => entry.msg !== 'request')).toEqual([
      expect.objectContaining({ level: 50, msg: 'request failed' }),
    ]);
  });

  test('an HttpError keeps its status, extra fields and headers', async () => {
    const res = await answerTo(
      new HttpError(409, 'Conflict here', { requiredScope: 'jobs:write' }, { 'Retry-After': '7' }),
    );
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'Conflict here', requiredScope: 'jobs:write' });
    expect(res.headers.get('retry-after')).toBe('7');
  });

  test('an HttpError with a 5xx status is logged as a failure', async () => {
    const before = lines.length;
    const res = await answerTo(new HttpError(503, 'Try later'));
    expect(res).toMatchObject({ status: 503, body: { error: 'Try later' } });
    const entries = await logLines(lines, (all) => all.length > before);
    expect(entries.slice(before).filter((entry) => entry.msg !== 'request')).toEqual([
      expect.objectContaining({ msg: 'request failed', err: { name: 'HttpError' } }),
    ]);
  });

  test('nothing answered: a JSON 404', async () => {
    const res = await call(`${served.url}/empty`);
    expectJsonError(res, 404, 'Not found');
  });

  test('a response with a body is left as it is, whatever its status', async () => {
    expect(await call(`${served.url}/teapot`)).toMatchObject({ status: 418, text: 'short and stout' });
    expect(await call(`${served.url}/own-404`)).toMatchObject({
      status: 404,
      body: { error: 'Job not found', id: 'x' },
    });
    expect(await call(`${served.url}/own-405`)).toMatchObject({ status: 405, body: { error: 'Not here' } });
  });

  test('a 204 without a body is left as it is', async () => {
    const res = await call(`${served.url}/no-content`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });
});

/**
 * The request log line (service/middleware/request-outcome.ts): the fields an operator greps for when
 * a partner reports a request: its id (the gateway's X-Request-ID), how long it took, who sent it.
 */
describe('request-log', () => {
  const service = sharedTestService({ name: 'request_log' });

  /** The request lines logged from `from` on, once `count` of them are there. */
  async function requestLines(from: number, count = 1): Promise<Array<Record<string, Parsed>>> {
    let lines: Array<Record<string, Parsed>> = [];
    for (let i = 0; i < 50 && lines.length < count; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      lines = service.logs
        .slice(from)
        .map((line) => JSON.parse(line) as Record<string, Parsed>)
        .filter((entry) => entry.msg === 'request');
    }
    return lines;
  }

  test('the request id is the X-Request-ID the gateway sent', async () => {
    const from = service.logs.length;
    await call(`${service.url}/api/v1/jobs`, {
      headers: { ...reader, 'X-Request-ID': 'f3b9c1d2-0b4e-4a8e-9d5c-7e2a1b3c4d5e' },
    });
    const [line] = await requestLines(from);
    expect(line).toMatchObject({
      reqId: 'f3b9c1d2-0b4e-4a8e-9d5c-7e2a1b3c4d5e',
      method: 'GET',
      path: '/api/v1/jobs',
      status: 200,
      consumer: 'demo-reader',
    });
  });

  test('a request id on an error answer too (the line is written after the error middleware)', async () => {
    const from = service.logs.length;
    await call(`${service.url}/api/v1/jobs?colour=blue`, { headers: { ...reader, 'X-Request-ID': 'req-400' } });
    const [line] = await requestLines(from);
    expect(line).toMatchObject({ reqId: 'req-400', status: 400 });
  });

  test('without an X-Request-ID (or an empty one) the line has no reqId field', async () => {
    const from = service.logs.length;
    await call(`${service.url}/healthz`);
    await call(`${service.url}/healthz`, { headers: { 'X-Request-ID': '' } });
    const lines = await requestLines(from, 2);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toHaveProperty('reqId');
  });

  test('a request without identity headers has no consumer field', async () => {
    const from = service.logs.length;
    await call(`${service.url}/healthz`);
    const [line] = await requestLines(from);
    expect(line).not.toHaveProperty('consumer');
  });

  /** POSTs a job whose body arrives in two parts `pauseMs` apart; resolves with the status. */
  function slowPost(pauseMs: number): Promise<number> {
    const body = JSON.stringify({ title: 'Slow', department: 'Ops', type: 'contract', description: 'Arrives late.' });
    return new Promise((resolve, reject) => {
      const req = http.request(`${service.url}/api/v1/jobs`, {
        method: 'POST',
        headers: { ...writer, ...json, 'Content-Length': Buffer.byteLength(body), 'X-Request-ID': 'slow-one' },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => req.end(body.slice(10)), pauseMs);
    });
  }

  test('the duration is in milliseconds and covers the whole request, body upload included', async () => {
    const from = service.logs.length;
    const started = performance.now();
    expect(await slowPost(300)).toBe(201);
    const elapsed = performance.now() - started;
    const [line] = await requestLines(from);
    expect(line!.reqId).toBe('slow-one');
    expect(typeof line!.ms).toBe('number');
    // At least the pause the client took, at most what the client itself measured.
    expect(line!.ms).toBeGreaterThanOrEqual(290);
    expect(line!.ms).toBeLessThanOrEqual(elapsed);
  });

  test('a quick request logs a small positive duration', async () => {
    const from = service.logs.length;
    const started = performance.now();
    await call(`${service.url}/healthz`);
    const elapsed = performance.now() - started;
    const [line] = await requestLines(from);
    expect(line!.ms).toBeGreaterThan(0);
    expect(line!.ms).toBeLessThanOrEqual(elapsed);
  });
});
