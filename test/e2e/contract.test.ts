/**
 * The data contract (api-spec.md + decisions.md) end to end through the local gateway, on the
 * demo seed in a real MariaDB database.
 */
import { demoJobs } from '../../db/seed-data';
import { JOB_FIELDS } from '../../domain/job';
import { DEMO, send, gatewayKinds, startStackOn, type Stack } from './support';

const seed = demoJobs().filter((j) => !j.deletedAt);
const countWhere = (f: (j: (typeof seed)[number]) => boolean) => seed.filter(f).length;

describe.each(gatewayKinds())('through the %s', (kind) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'e2e_contract');
  });
  afterAll(() => stack.close());

  const list = (query: Record<string, string | string[]> = {}, key = DEMO.reader) =>
    send(stack.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': key }, query });
  const byId = (id: string, key = DEMO.reader) =>
    send(stack.url, { path: `/api/v1/jobs/${id}`, headers: { 'X-API-Key': key } });
  const post = (body: string, key = DEMO.writer, contentType = 'application/json') =>
    send(stack.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': key, 'Content-Type': contentType },
      body,
    });
  const valid = {
    title: 'Data Platform Engineer',
    department: 'Data & Analytics',
    type: 'contract',
    description: 'Pipelines and people.',
  };

  function expectPublicJob(job: Record<string, unknown>): void {
    const keys = Object.keys(job);
    expect(keys).toEqual(JOB_FIELDS.filter((f) => f !== 'workplace' || 'workplace' in job));
  }

  test('every read operation, its HEAD and its 304 answer as the document says, headers included (send() checks each)', async () => {
    const reader = { 'X-API-Key': DEMO.reader };
    const id = (await list({ limit: '1' })).json.data[0].id as string;
    for (const path of [
      '/api/v1/jobs',
      `/api/v1/jobs/${id}`,
      '/api/v1/jobs/changes',
      '/api/v1/jobs/changes/digest',
      '/api/v1/jobs/changes/digest/0',
      '/api/v1/openapi.json',
    ]) {
      const got = await send(stack.url, { path, headers: reader });
      const head = await send(stack.url, { method: 'HEAD', path, headers: reader });
      expect([path, got.status, head.status, head.headers['ratelimit-remaining']]).toEqual([
        path,
        200,
        200,
        expect.stringMatching(/^\d+$/),
      ]);
      if (path === '/api/v1/openapi.json') continue;
      const again = await send(stack.url, {
        path,
        headers: { ...reader, 'If-None-Match': got.headers.etag as string },
      });
      expect([path, again.status, again.headers['cache-control']]).toEqual([path, 304, 'private, no-cache']);
    }
    const keyless = await send(stack.url, { path: '/api/v1/jobs' });
    expect([keyless.status, keyless.headers['www-authenticate']]).toEqual([401, 'Key realm="kong"']);
  });

  describe('GET /api/v1/jobs', () => {
    test('default: active and open jobs only, newest first, each with exactly the public fields', async () => {
      const res = await list({ limit: '100' });
      expect(res.status).toBe(200);
      const expected = countWhere((j) => j.status === 'active' || j.status === 'open');
      expect(res.json.meta).toEqual({ total: expected, page: 1, limit: 100, totalPages: Math.ceil(expected / 100) });
      expect(res.json.data).toHaveLength(expected);
      for (const job of res.json.data) {
        expect(['active', 'open']).toContain(job.status);
        expectPublicJob(job);
      }
      const created = res.json.data.map((j: { createdAt: string }) => j.createdAt);
      expect([...created].sort().reverse()).toEqual(created);
      expect(res.text).not.toMatch(
        /internal|margin|billRate|payRate|bill_rate|pay_rate|recruiterEmail|createdByConsumer|deleted/i,
      );
    });

    test('filters: status list, type, department (case-insensitive, + and %20), workplace', async () => {
      const paused = await list({ status: 'paused,closed', limit: '100' });
      expect(paused.json.meta.total).toBe(countWhere((j) => j.status === 'paused' || j.status === 'closed'));
      const contract = await list({ type: 'contract', limit: '100' });
      expect(contract.json.data.every((j: { type: string }) => j.type === 'contract')).toBe(true);
      expect(contract.json.meta.total).toBe(
        countWhere((j) => j.type === 'contract' && (j.status === 'active' || j.status === 'open')),
      );

      const plus = await send(stack.url, {
        path: '/api/v1/jobs?department=human+resources&limit=100',
        headers: { 'X-API-Key': DEMO.reader },
      });
      const pct = await send(stack.url, {
        path: '/api/v1/jobs?department=Human%20Resources&limit=100',
        headers: { 'X-API-Key': DEMO.reader },
      });
      expect(plus.status).toBe(200);
      expect(plus.json.meta.total).toBe(
        countWhere((j) => j.department === 'Human Resources' && (j.status === 'active' || j.status === 'open')),
      );
      expect(pct.json).toEqual(plus.json);

      const remote = await list({ workplace: 'remote', limit: '100' });
      expect(remote.json.data.every((j: { workplace?: string }) => j.workplace === 'remote')).toBe(true);
    });

    test('pagination: meta per page, stable pages, a page past the end is empty with true meta', async () => {
      const p1 = await list({ limit: '5', page: '1' });
      const p2 = await list({ limit: '5', page: '2' });
      expect(p1.json.meta).toEqual({
        total: p1.json.meta.total,
        page: 1,
        limit: 5,
        totalPages: Math.ceil(p1.json.meta.total / 5),
      });
      expect(p2.json.meta.page).toBe(2);
      const ids1 = p1.json.data.map((j: { id: string }) => j.id);
      const ids2 = p2.json.data.map((j: { id: string }) => j.id);
      expect(ids1.filter((id: string) => ids2.includes(id))).toEqual([]);
      const beyond = await list({ limit: '5', page: '999' });
      expect(beyond.status).toBe(200);
      expect(beyond.json.data).toEqual([]);
      expect(beyond.json.meta.total).toBe(p1.json.meta.total);
    });

    test('bad queries are 400s that explain themselves; api_key is tolerated', async () => {
      for (const [query, pattern] of [
        [{ limit: '0' }, /1.*100/],
        [{ limit: '101' }, /1.*100/],
        [{ limit: 'abc' }, /1.*100/],
        [{ type: 'remote' }, /workplace/],
        [{ status: 'draft' }, /status/],
        [{ color: 'blue' }, /color/],
      ] as const) {
        const res = await list(query);
        expect([query, res.status]).toEqual([query, 400]);
        expect(res.json.error).toMatch(pattern);
      }
      expect(
        (await send(stack.url, { path: '/api/v1/jobs', query: { api_key: DEMO.reader, limit: '1' } })).status,
      ).toBe(200);
    });
  });

  describe('GET /api/v1/jobs/:id', () => {
    test('a listed job by id; unknown and malformed ids are 404 Job not found', async () => {
      const first = (await list({ limit: '1' })).json.data[0];
      const res = await byId(first.id);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ data: first });
      for (const id of ['00000000-0000-7000-8000-000000000000', 'not-a-uuid']) {
        const missing = await byId(id);
        expect(missing.status).toBe(404);
        expect(missing.json).toEqual({ error: 'Job not found' });
      }
    });
  });

  describe('POST /api/v1/jobs', () => {
    test('a writer creates: 201, Location, draft by default; the draft is visible by id to its creator only and never listed', async () => {
      const res = await post(JSON.stringify(valid));
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/api/v1/jobs/${res.json.data.id}`);
      expect(res.json.data.status).toBe('draft');
      expectPublicJob(res.json.data);

      const mine = await byId(res.json.data.id, DEMO.writer);
      expect(mine.status).toBe(200);
      expect(mine.json.data).toEqual(res.json.data);
      expect((await byId(res.json.data.id, DEMO.writer2)).status).toBe(404);
      expect((await byId(res.json.data.id, DEMO.reader)).status).toBe(404);
      const all = await list({ status: 'active,open,paused,closed', limit: '100' }, DEMO.writer);
      expect(all.json.data.map((j: { id: string }) => j.id)).not.toContain(res.json.data.id);
    });

    test('a created active job is listed and readable by anyone', async () => {
      const res = await post(JSON.stringify({ ...valid, title: 'Listed now', status: 'active', workplace: 'remote' }));
      expect(res.status).toBe(201);
      expect((await byId(res.json.data.id, DEMO.writer2)).json.data.title).toBe('Listed now');
      expect((await list({ limit: '1' })).json.data[0].id).toBe(res.json.data.id);
    });

    test('validation: 400 with field details; internal fields cannot be set', async () => {
      const bad = await post(JSON.stringify({ ...valid, title: '', salary: { min: 10, max: 5, currency: 'USD' } }));
      expect(bad.status).toBe(400);
      expect(bad.json.error).toBe('Validation failed');
      const fields = bad.json.details.map((d: { field: string }) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['title']));
      const internal = await post(JSON.stringify({ ...valid, clientName: 'Fabrikam' }));
      expect(internal.status).toBe(400);
      expect(JSON.stringify(internal.json.details)).toMatch(/clientName/);
    });

    test('415 for non-JSON, 400 for malformed JSON, 413 (from the gateway) over 100 KB', async () => {
      const text = await post('title=x', DEMO.writer, 'text/plain');
      expect(text.status).toBe(415);
      expect(typeof text.json.error).toBe('string');
      const malformed = await post('{"title": ');
      expect(malformed.status).toBe(400);
      expect(malformed.json).toEqual({ error: 'Malformed JSON body' });
      const before = stack.service.received.length;
      const huge = await post(JSON.stringify({ ...valid, description: 'x'.repeat(101 * 1024) }));
      expect(huge.status).toBe(413);
      expect(huge.json.error).toBe('Request size limit exceeded');
      expect(stack.service.received.length).toBe(before);
    });
  });

  describe('unknown paths and methods', () => {
    test('unknown path: 404 JSON; known path, wrong method: 405 with Allow (after the key check)', async () => {
      // The API's own 404 from the gateway's catch-all route, with or without a key, never Kong's "no Route matched".
      for (const [method, path, headers] of [
        ['GET', '/api/v1/candidates', { 'X-API-Key': DEMO.reader }],
        ['GET', '/', {}],
        ['POST', '/api/v2/jobs', {}],
        ['GET', '/docs/a/b', {}],
      ] as const) {
        const unknown = await send(stack.url, { method, path, headers });
        expect([method, path, unknown.status, unknown.json]).toEqual([method, path, 404, { error: 'Not found' }]);
      }

      const del = await send(stack.url, {
        method: 'DELETE',
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.writer },
      });
      expect(del.status).toBe(405);
      expect(del.headers.allow).toMatch(/GET/);
      expect(del.headers.allow).toMatch(/POST/);
      expect(typeof del.json.error).toBe('string');
      expect((await send(stack.url, { method: 'DELETE', path: '/api/v1/jobs' })).status).toBe(401);
    });

    test('HEAD on the list answers like GET without a body', async () => {
      const head = await send(stack.url, {
        method: 'HEAD',
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.reader },
      });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
    });
  });
});
