/**
 * The docs route on the local gateway serving kong.yaml: keyless, limited per client address,
 * serving the page, its assets and the document, and nothing else (data paths still need a key).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { apiDocument } from '../../../service/api/routes';
import { loadConfig } from '../../../service/config';
import { DEMO, startStack, type Stack } from '../../e2e/support';
import { send } from '../../local-gateway/support';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('docs_route');
}, 60000);
afterAll(() => stack.close());

/** Windows are aligned to the clock: start early enough in a minute to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

// Each test its own client address, so the per-IP budgets do not mix (any 127.x.y.z is loopback).
const get = (p: string, from: string, headers: Record<string, string> = {}) =>
  send(stack.url, { path: p, headers, localAddress: from });

test('the page and the document are served without a key, and the service sees no identity', async () => {
  const page = await get('/docs', '127.0.0.2');
  expect(page.status).toBe(200);
  expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(page.text).toContain('<script src="/docs/swagger-ui-bundle.js"></script>');
  expect(page.headers['content-security-policy']).toContain("default-src 'none'");
  expect((await get('/docs/', '127.0.0.2')).text).toBe(page.text);
  const head = await send(stack.url, { method: 'HEAD', path: '/docs', localAddress: '127.0.0.2' });
  expect(head.status).toBe(200);
  expect(head.text).toBe('');

  const doc = await get('/docs/openapi.json', '127.0.0.2');
  expect(doc.status).toBe(200);
  expect(doc.json).toEqual(JSON.parse(JSON.stringify(apiDocument({ webhooks: loadConfig({}).webhooks }))));

  const reached = stack.service.received.filter((r) => r.url.startsWith('/docs'));
  expect(reached.length).toBeGreaterThanOrEqual(3);
  for (const r of reached) {
    expect(r.headers['x-gateway-secret']).toBeUndefined();
    expect(r.headers['x-consumer-id']).toBeUndefined();
  }
});

test('Swagger UI comes from us, gzipped when asked, and revalidates with its ETag', async () => {
  const file = readFileSync(
    path.join(path.dirname(require.resolve('swagger-ui-dist/package.json')), 'swagger-ui-bundle.js'),
    'utf8',
  );
  const res = await fetch(`${stack.url}/docs/swagger-ui-bundle.js`, { headers: { 'Accept-Encoding': 'gzip' } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-encoding')).toBe('gzip');
  expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  expect(await res.text()).toBe(file);
  const again = await send(stack.url, {
    path: '/docs/swagger-ui-bundle.js',
    headers: { 'If-None-Match': res.headers.get('etag')! },
    localAddress: '127.0.0.3',
  });
  expect(again.status).toBe(304);
  expect(again.text).toBe('');
  for (const refused of ['identity', 'gzip;q=0', 'br']) {
    const plain = await send(stack.url, {
      path: '/docs/swagger-ui-bundle.js',
      headers: { 'Accept-Encoding': refused },
      localAddress: '127.0.0.3',
    });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.text).toBe(file);
  }
});

test('nothing else: other /docs paths and other methods are 404, data paths still need a key', async () => {
  const from = '127.0.0.4';
  expect((await get('/docs/index.html', from)).status).toBe(404);
  expect((await get('/docs/swagger-ui-bundle.js.map', from)).json).toEqual({ error: 'Not found' });
  expect((await get('/docs/assets/x.js', from)).status).toBe(404); // two segments: no route
  const posted = await send(stack.url, {
    method: 'POST',
    path: '/docs',
    body: '{}',
    headers: { 'Content-Type': 'application/json' },
    localAddress: from,
  });
  expect(posted.status).toBe(404);
  expect(posted.json).toEqual({ error: 'Not found' });
  // Dot segments are removed before routing: this is /api/v1/jobs, which needs a key.
  const escaped = await get('/docs/../api/v1/jobs', from);
  expect(escaped.status).toBe(401);
  expect(escaped.json).toMatchObject({ error: 'Missing API key. Pass your key in the X-API-Key header.' });
  expect((await get('/api/v1/openapi.json', from)).status).toBe(401);
  expect((await get('/api/v1/jobs', from)).status).toBe(401);
  expect((await get('/api/v1/jobs', from, { 'X-API-Key': DEMO.reader })).status).toBe(200);
});

test('rate limited per client address: 60 a minute, then 429 with Retry-After; another address is unaffected', async () => {
  await awayFromMinuteEnd();
  const from = '127.0.0.5';
  const first = await get('/docs/reference.css', from);
  expect(first.status).toBe(200);
  expect(first.headers['ratelimit-policy']).toBe('"minute";q=60;w=60, "hour";q=600;w=3600');
  for (let i = 1; i < 60; i++) expect((await get('/docs/reference.css', from)).status).toBe(200);
  const limited = await get('/docs/reference.css', from);
  expect(limited.status).toBe(429);
  expect(limited.json).toMatchObject({ error: 'Rate limit exceeded' });
  expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect((await get('/docs/reference.css', '127.0.0.6')).status).toBe(200);
}, 60000);
