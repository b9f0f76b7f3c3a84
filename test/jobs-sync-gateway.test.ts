/**
 * A partner's sync through the gateway (the local gateway on kong.yaml + demo.yaml): the change
 * feed and the OpenAPI document need a jobs:read key like every read, 304s and Link headers
 * survive the proxy, and a Link followed against the gateway's URL is the next page.
 */
import { readFileSync } from 'node:fs';
import { OPENAPI_PATH } from '../scripts/openapi';
import { DEMO, send, startStack, type Stack } from './e2e/support';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('sync_gateway');
});
afterAll(() => stack.close());

const get = (path: string, headers: Record<string, string> = { 'X-API-Key': DEMO.reader }) =>
  send(stack.url, { path, headers });

test.each(['/api/v1/jobs/changes', '/api/v1/openapi.json'])('%s needs a key with jobs:read', async (path) => {
  expect((await get(path, {})).status).toBe(401);
  expect((await get(path, { 'X-API-Key': 'not-a-key' })).status).toBe(401);
  expect((await get(path, { 'X-API-Key': DEMO.disabled })).status).toBe(403);
  expect((await get(path)).status).toBe(200);
  expect((await send(stack.url, { path, query: { api_key: DEMO.reader } })).status).toBe(200);
});

test('the gateway serves the committed OpenAPI document', async () => {
  expect((await get('/api/v1/openapi.json')).json).toEqual(JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')));
});

test('a full sync by cursor, then an incremental one by the feed, with 304s in between', async () => {
  // Full: follow Link headers from the first page; the key in the query is never echoed in them.
  const seen: string[] = [];
  let path: string | undefined = '/api/v1/jobs?status=active,open,paused,closed&limit=10';
  while (path) {
    const url = new URL(path, stack.url);
    const res = await send(stack.url, { path: url.pathname + url.search + `&api_key=${DEMO.reader}` });
    expect(res.status).toBe(200);
    seen.push(...res.json.data.map((job: { id: string }) => job.id));
    const link = res.headers.link as string | undefined;
    if (link) expect(link).not.toContain(DEMO.reader);
    path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : undefined;
  }
  const [listable] = await stack.service.database.query<Array<{ n: number }>>(
    `select count(*) as n from jobs where deleted_at is null and status <> 'draft'`,
  );
  expect(new Set(seen).size).toBe(Number(listable!.n));
  expect(seen).toHaveLength(Number(listable!.n));

  // Incremental: read the feed to its end, then poll conditionally.
  let since = '';
  for (;;) {
    const page = await get(`/api/v1/jobs/changes?limit=500&since=${since}`);
    since = page.json.meta.nextSince;
    if (!page.json.meta.hasMore) break;
  }
  const poll = await get(`/api/v1/jobs/changes?since=${since}`);
  const tag = poll.headers.etag as string;
  const idle = await get(`/api/v1/jobs/changes?since=${since}`, { 'X-API-Key': DEMO.reader, 'If-None-Match': tag });
  expect(idle.status).toBe(304);
  expect(idle.text).toBe('');

  const [row] = await stack.service.database.query<Array<{ id: Buffer }>>(
    `select id from jobs where status = 'active' and deleted_at is null limit 1`,
  );
  await stack.service.database.query('update jobs set deleted_at = now(3) where id = ?', [row!.id]);
  const changed = await get(`/api/v1/jobs/changes?since=${since}`, { 'X-API-Key': DEMO.reader, 'If-None-Match': tag });
  expect(changed.status).toBe(200);
  expect(changed.json.data).toEqual([{ id: expect.any(String), removed: true }]);
});
