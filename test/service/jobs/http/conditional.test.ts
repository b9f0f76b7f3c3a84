/**
 * service/jobs/conditional.ts on its own: only a 200 with a JSON object body gets an ETag (and
 * can become a 304). The jobs routes never answer anything else without throwing, so this pins
 * the middleware's own rule on a small app: an answer of another kind passes through untouched,
 * even when If-None-Match: * would match anything.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { conditional } from '../../../../service/jobs/http/conditional';

let server: http.Server;
let base: string;

beforeAll(async () => {
  const app = new Koa();
  app.use(conditional);
  app.use((ctx) => {
    if (ctx.path === '/accepted') {
      ctx.status = 202;
      ctx.body = { queued: true };
    } else if (ctx.path === '/text') {
      ctx.body = 'plain words';
    } else if (ctx.path === '/empty') {
      ctx.body = null;
    } else {
      ctx.body = { ok: true };
    }
  });
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const anyTag = { 'If-None-Match': '*' };

test('a 200 with a JSON object gets its ETag and answers If-None-Match: * with 304', async () => {
  const res = await fetch(`${base}/object`, { headers: anyTag });
  expect(res.status).toBe(304);
  expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
});

test.each([
  ['a 202 with a JSON object', '/accepted', 202, '{"queued":true}'],
  ['a 200 with a text body', '/text', 200, 'plain words'],
  ['an empty answer', '/empty', 204, ''],
])('%s passes through: no ETag, no 304, its own body', async (_label, path, status, body) => {
  const res = await fetch(`${base}${path}`, { headers: anyTag });
  expect(res.status).toBe(status);
  expect(res.headers.get('etag')).toBeNull();
  expect(res.headers.get('cache-control')).toBeNull();
  expect(await res.text()).toBe(body);
});
