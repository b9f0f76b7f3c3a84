/**
 * The request log line (service/middleware/request-log.ts): the fields an operator greps for when
 * a partner reports a request: its id (the gateway's X-Request-ID), how long it took, who sent it.
 */
import http from 'node:http';
import { json, reader, writer } from './helpers/consumers';
import { call } from './helpers/http';
import { startTestService, type TestService } from './helpers/service';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ name: 'request_log' });
});
afterAll(() => service.close());

/** The request lines logged from `from` on, once `count` of them are there. */
async function requestLines(from: number, count = 1): Promise<Array<Record<string, any>>> {
  let lines: Array<Record<string, any>> = [];
  for (let i = 0; i < 50 && lines.length < count; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    lines = service.logs
      .slice(from)
      .map((line) => JSON.parse(line) as Record<string, any>)
      .filter((entry) => entry.msg === 'request');
  }
  return lines;
}

test('the request id is the X-Request-ID the gateway sent', async () => {
  const from = service.logs.length;
  await call(`${service.url}/api/v1/jobs`, { headers: { ...reader, 'X-Request-ID': 'f3b9c1d2-0b4e-4a8e-9d5c-7e2a1b3c4d5e' } });
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
