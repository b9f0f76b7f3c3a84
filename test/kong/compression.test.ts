/**
 * Responses compressed at the gateway (gateway/kong/kong.conf nginx_proxy_gzip*, and
 * gateway/local/upstream/compress.ts), through the local gateway and a real Kong 3.9 in front of
 * the real service: gzip when asked for JSON of 1 KiB or more, Vary on every such response, the
 * service's bytes untouched for a client that did not ask, and conditional requests answering 304
 * to the weak ETag that compression makes.
 */
import { gunzipSync } from 'node:zlib';
import { reader as readerIdentity } from '../helpers/consumers';
import { DEMO, SECRET, request, startBoth, type BothGateways, type Exchange } from './both-gateways';

let both: BothGateways;
beforeAll(async () => {
  both = await startBoth('kong_compression');
}, 120_000);
afterAll(async () => {
  await both?.close();
});

const reader = { 'X-API-Key': DEMO.reader };
const gzip = { ...reader, 'Accept-Encoding': 'gzip' };

/** The same request straight to the service, as the gateway forwards it for the demo reader. */
function fromService(path: string): Promise<Exchange> {
  return request(both.service.url, { path, headers: { ...readerIdentity, 'X-Gateway-Secret': SECRET } });
}

function vary(res: Exchange): string[] {
  return String(res.headers.vary ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);
}

async function anyJobId(): Promise<string> {
  const list = await fromService('/api/v1/jobs?limit=1');
  return (JSON.parse(list.body.toString()) as { data: Array<{ id: string }> }).data[0]!.id;
}

const LIST = '/api/v1/jobs?limit=50';
const FEED = '/api/v1/jobs/changes?limit=50';

describe.each(['local gateway', 'real Kong'] as const)('through the %s', (name) => {
  const url = (): string => both.gateways.find((g) => g.name === name)!.url;

  test("a list page asked for with gzip comes compressed, with Vary, a weak ETag and no Content-Length; it inflates to the service's exact bytes", async () => {
    const direct = await fromService(LIST);
    expect(direct.body.length).toBeGreaterThan(1024);
    const res = await request(url(), { path: LIST, headers: gzip });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-length']).toBeUndefined();
    expect(vary(res)).toContain('accept-encoding');
    expect(res.headers.etag).toBe(`W/${direct.headers.etag}`);
    expect(gunzipSync(res.body).equals(direct.body)).toBe(true);
    // job JSON compresses well: a page is a small fraction of its size
    expect(res.body.length).toBeLessThan(direct.body.length * 0.3);
  });

  test("a client that does not ask gets exactly the service's bytes, Content-Length and strong ETag (plus Vary, for caches)", async () => {
    const direct = await fromService(LIST);
    for (const headers of [
      reader,
      { ...reader, 'Accept-Encoding': 'identity' },
      { ...reader, 'Accept-Encoding': 'gzip;q=0' },
      { ...reader, 'Accept-Encoding': 'br' },
    ]) {
      const res = await request(url(), { path: LIST, headers });
      expect([headers, res.status, res.headers['content-encoding']]).toEqual([headers, 200, undefined]);
      expect(res.body.equals(direct.body)).toBe(true);
      expect(res.headers['content-length']).toBe(String(direct.body.length));
      expect(res.headers.etag).toBe(direct.headers.etag);
      expect(vary(res)).toContain('accept-encoding');
    }
  });

  test('gzip is found in a list of codings and with a q above 0', async () => {
    for (const ae of ['deflate, gzip', 'br;q=1.0, gzip;q=0.5', 'GZIP']) {
      const res = await request(url(), { path: LIST, headers: { ...reader, 'Accept-Encoding': ae } });
      expect([ae, res.headers['content-encoding']]).toEqual([ae, 'gzip']);
    }
  });

  test('bodies under 1 KiB and errors are never compressed and carry no Vary', async () => {
    const small = await request(url(), { path: '/api/v1/jobs/changes?since=zz', headers: gzip });
    const noKey = await request(url(), { path: LIST, headers: { 'Accept-Encoding': 'gzip' } });
    const notFound = await request(url(), { path: '/api/v1/jobs/3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f', headers: gzip });
    for (const res of [small, noKey, notFound]) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.body.length).toBeLessThan(1024);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(vary(res)).not.toContain('accept-encoding');
      expect(JSON.parse(res.body.toString())).toHaveProperty('error');
    }
  });

  test('HEAD answers with the headers the GET would have, and no body', async () => {
    const get = await request(url(), { path: LIST, headers: gzip });
    const head = await request(url(), { method: 'HEAD', path: LIST, headers: gzip });
    const shape = (res: Exchange) => [
      res.status,
      res.headers['content-encoding'],
      res.headers['content-length'],
      res.headers.etag,
      vary(res),
    ];
    expect(shape(head)).toEqual(shape(get));
    expect(head.body.length).toBe(0);
  });

  test.each([
    ['the list', () => Promise.resolve(LIST)],
    ['one job', async () => `/api/v1/jobs/${await anyJobId()}`],
    ['the change feed', () => Promise.resolve(FEED)],
  ])(
    '%s: the ETag of a compressed response, sent back weak as received, is a 304; so is the strong form',
    async (_what, pathOf) => {
      const path = await pathOf();
      const first = await request(url(), { path, headers: gzip });
      expect(first.status).toBe(200);
      const tag = String(first.headers.etag);
      if (first.headers['content-encoding'] === 'gzip') expect(tag).toMatch(/^W\/"/);
      for (const ifNoneMatch of [tag, tag.replace(/^W\//, '')]) {
        for (const headers of [gzip, reader]) {
          const again = await request(url(), { path, headers: { ...headers, 'If-None-Match': ifNoneMatch } });
          expect([ifNoneMatch, again.status, again.body.length]).toEqual([ifNoneMatch, 304, 0]);
        }
      }
    },
  );

  test('a full change-feed page (every job, as a first sync gets it) comes at most an eighth of its size', async () => {
    const path = '/api/v1/jobs/changes?limit=500';
    const direct = await fromService(path);
    const res = await request(url(), { path, headers: gzip });
    expect(gunzipSync(res.body).equals(direct.body)).toBe(true);
    expect(res.body.length / direct.body.length).toBeLessThanOrEqual(0.125);
  });

  test('the change feed is compressed too, and an idle poll with its weak ETag is a 304 until something changes', async () => {
    const page = await request(url(), { path: FEED, headers: gzip });
    expect(page.headers['content-encoding']).toBe('gzip');
    const tag = String(page.headers.etag);
    expect(tag).toMatch(/^W\/"/);
    const idle = await request(url(), { path: FEED, headers: { ...gzip, 'If-None-Match': tag } });
    expect(idle.status).toBe(304);
  });
});

test('both gateways compress the same responses the same way (headers that matter, inflated bytes)', async () => {
  const [local, kong] = await Promise.all(both.gateways.map((g) => request(g.url, { path: LIST, headers: gzip })));
  const shape = (res: Exchange) => ({
    status: res.status,
    encoding: res.headers['content-encoding'],
    length: res.headers['content-length'],
    chunked: res.headers['transfer-encoding'],
    vary: vary(res),
    etag: res.headers.etag,
    body: gunzipSync(res.body).toString(),
  });
  expect(shape(local!)).toEqual(shape(kong!));
});
