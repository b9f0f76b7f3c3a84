/**
 * `conditional` (service/http/conditional.ts) on its own: only a 200 with a JSON object body gets an ETag (and
 * can become a 304). The jobs routes never answer anything else without throwing, so this pins
 * the middleware's own rule on a small app: an answer of another kind passes through untouched,
 * even when If-None-Match: * would match anything.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { conditional } from '../../../service/http/conditional';
import { json, reader, writer, writer2 } from '../../helpers/consumers';
import { call } from '../../helpers/http';
import { sharedTestService } from '../../helpers/service';

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
  const handle = app.callback();
  server = http.createServer((req, res) => void handle(req, res));
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

/**
 * Conditional GETs: a partner re-reading what it already has gets 304 with no body, and a 200
 * the moment anything it can see has changed.
 */
describe('conditional-requests', () => {
  const service = sharedTestService({ name: 'conditional', seed: true });
  const get = (path: string, headers: Record<string, string> = reader) => call(`${service.url}${path}`, { headers });
  const bin = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');

  /** GETs `path`, then again with its ETag: returns the tag and asserts the 304. */
  async function tagOf(path: string, headers: Record<string, string> = reader): Promise<string> {
    const first = await get(path, headers);
    expect(first.status).toBe(200);
    const tag = first.headers.get('etag');
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    const again = await get(path, { ...headers, 'If-None-Match': tag! });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(tag);
    return tag!;
  }

  async function changedSince(path: string, tag: string, headers: Record<string, string> = reader): Promise<boolean> {
    const res = await get(path, { ...headers, 'If-None-Match': tag });
    if (res.status === 304) return false;
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).not.toBe(tag);
    return true;
  }

  describe('GET /api/v1/jobs', () => {
    test('304 while nothing visible changes; 200 on a change to a listed field, a new job or a removal', async () => {
      const path = '/api/v1/jobs?limit=5';
      let tag = await tagOf(path);
      const first = (await get(path)).body.data[0].id as string;
      const last = (await get(path)).body.data[4].id as string;

      // Internal columns are not part of the listing.
      await service.database.query('update jobs set pay_rate = pay_rate + 1, internal_notes = ? where id = ?', [
        'x',
        bin(first),
      ]);
      expect(await changedSince(path, tag)).toBe(false);

      await service.database.query('update jobs set title = ? where id = ?', ['Renamed', bin(last)]);
      expect(await changedSince(path, tag)).toBe(true);
      tag = await tagOf(path);

      // A job far down the list: not on this page, but the total changes.
      const [deep] = await service.database.query<Array<{ id: Buffer }>>(
        `select id from jobs where status = 'open' and deleted_at is null order by created_at asc limit 1`,
      );
      await service.database.query('update jobs set deleted_at = now(3) where id = ?', [deep!.id]);
      expect(await changedSince(path, tag)).toBe(true);
      tag = await tagOf(path);

      await call(`${service.url}/api/v1/jobs`, {
        method: 'POST',
        headers: { ...writer, ...json },
        body: JSON.stringify({
          title: 'New',
          department: 'Sales',
          type: 'contract',
          description: 'Fresh',
          status: 'active',
        }),
      });
      expect(await changedSince(path, tag)).toBe(true);
    });

    test('If-None-Match takes a list of tags and weak tags; a tag from another filter does not match', async () => {
      const tag = await tagOf('/api/v1/jobs?limit=3');
      expect((await get('/api/v1/jobs?limit=3', { ...reader, 'If-None-Match': `"other", W/${tag}` })).status).toBe(304);
      expect((await get('/api/v1/jobs?limit=3', { ...reader, 'If-None-Match': '*' })).status).toBe(304);
      expect((await get('/api/v1/jobs?limit=4', { ...reader, 'If-None-Match': tag })).status).toBe(200);
    });

    test('If-None-Match with no quoted tag, or with W/ anywhere but in front, matches nothing: 200 with the body', async () => {
      const tag = await tagOf('/api/v1/jobs?limit=3');
      for (const header of ['abc', tag.slice(1, -1), `"W/${tag.slice(1)}`]) {
        const res = await get('/api/v1/jobs?limit=3', { ...reader, 'If-None-Match': header });
        expect({ header, status: res.status }).toEqual({ header, status: 200 });
        expect(JSON.parse(res.text).data).toHaveLength(3);
      }
    });

    test('errors carry no ETag and ignore If-None-Match', async () => {
      const res = await get('/api/v1/jobs?limit=0', { ...reader, 'If-None-Match': '*' });
      expect(res.status).toBe(400);
      expect(res.headers.get('etag')).toBeNull();
    });

    test('HEAD answers the same ETag and 304', async () => {
      const tag = await tagOf('/api/v1/jobs?limit=2');
      const head = await call(`${service.url}/api/v1/jobs?limit=2`, { method: 'HEAD', headers: reader });
      expect(head.headers.get('etag')).toBe(tag);
      expect(
        (
          await call(`${service.url}/api/v1/jobs?limit=2`, {
            method: 'HEAD',
            headers: { ...reader, 'If-None-Match': tag },
          })
        ).status,
      ).toBe(304);
    });
  });

  describe('GET /api/v1/jobs/:id', () => {
    test('304 until the job changes in a way its reader sees', async () => {
      const [row] = await service.database.query<Array<{ h: string }>>(
        `select lower(hex(id)) as h from jobs where status = 'active' and deleted_at is null and not salary_disclosed limit 1`,
      );
      const id = row!.h.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
      const path = `/api/v1/jobs/${id}`;
      let tag = await tagOf(path);
      await service.database.query('update jobs set bill_rate = 999 where id = ?', [bin(id)]);
      expect(await changedSince(path, tag)).toBe(false);
      // Disclosing the salary changes what is shown.
      await service.database.query('update jobs set salary_disclosed = true where id = ?', [bin(id)]);
      expect(await changedSince(path, tag)).toBe(true);
      tag = await tagOf(path);
      await service.database.query('update jobs set deleted_at = now(3) where id = ?', [bin(id)]);
      const gone = await get(path, { ...reader, 'If-None-Match': tag });
      expect(gone.status).toBe(404);
    });

    test("a draft's tag is its creator's; nobody else gets a 304 for it", async () => {
      const created = await call(`${service.url}/api/v1/jobs`, {
        method: 'POST',
        headers: { ...writer, ...json },
        body: JSON.stringify({ title: 'Draft', department: 'Sales', type: 'contract', description: 'Mine' }),
      });
      const path = `/api/v1/jobs/${created.body.data.id}`;
      const tag = await tagOf(path, writer);
      expect((await get(path, { ...writer2, 'If-None-Match': tag })).status).toBe(404);
    });
  });

  describe('GET /api/v1/jobs/changes', () => {
    test('an idle poll is a 304; any visible change makes it a 200', async () => {
      let since = '';
      for (;;) {
        const page = await get(`/api/v1/jobs/changes?limit=500&since=${since}`);
        since = page.body.meta.nextSince;
        if (!page.body.meta.hasMore) break;
      }
      const path = `/api/v1/jobs/changes?since=${since}`;
      const tag = await tagOf(path);
      expect(await changedSince(path, tag)).toBe(false);
      const [row] = await service.database.query<Array<{ id: Buffer }>>(
        `select id from jobs where status = 'open' and deleted_at is null limit 1`,
      );
      await service.database.query(`update jobs set status = 'closed' where id = ?`, [row!.id]);
      expect(await changedSince(path, tag)).toBe(true);
    });
  });

  test('GET /api/v1/openapi.json is conditional too', async () => {
    await tagOf('/api/v1/openapi.json');
  });
});
