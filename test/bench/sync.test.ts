/**
 * The bench's full sync (bench/sync.ts) against a change feed of three pages that compresses only
 * when asked: it follows nextSince to the end and counts the bytes as they crossed the wire; plain
 * and gzip are compared after a warm-up pass each way, in ABBA order, by their median pass.
 */
import { gzipSync } from 'node:zlib';
import { syncRatios } from '../../bench/report';
import { compareSyncs, fullSync, type SyncRun } from '../../bench/sync';
import { serve, type Served } from '../helpers/http';

const PAGES = [
  {
    data: Array.from({ length: 500 }, (_, i) => ({ id: `a${i}`, title: 'Platform Engineer '.repeat(5) })),
    meta: { nextSince: 's1', hasMore: true },
  },
  {
    data: Array.from({ length: 500 }, (_, i) => ({ id: `b${i}`, title: 'Platform Engineer '.repeat(5) })),
    meta: { nextSince: 's2', hasMore: true },
  },
  { data: [{ id: 'c0', removed: true }], meta: { nextSince: 's3', hasMore: false } },
];
const bodies = PAGES.map((page) => Buffer.from(JSON.stringify(page)));
let feed: Served;
const asked: string[] = [];

beforeAll(async () => {
  feed = await serve((req, res) => {
    const url = new URL(req.url!, 'http://feed');
    asked.push(`${url.pathname}?${url.searchParams.toString()}`);
    if (req.headers['x-api-key'] === 'broken')
      return void res
        .writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' })
        .end('not gzip at all');
    if (req.headers['x-api-key'] !== 'k') return void res.writeHead(401).end('{"error":"Invalid API key"}');
    const body = bodies[['', 's1', 's2'].indexOf(url.searchParams.get('since') ?? '')]!;
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' }).end(gzipSync(body));
    } else {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
    }
  });
});
afterAll(() => feed.close());

test('a plain sync walks every page and counts the bytes as sent', async () => {
  asked.length = 0;
  const run = await fullSync(feed.url, { 'X-API-Key': 'k' }, { gzip: false });
  expect(asked).toEqual([
    '/api/v1/jobs/changes?limit=500&since=',
    '/api/v1/jobs/changes?limit=500&since=s1',
    '/api/v1/jobs/changes?limit=500&since=s2',
  ]);
  const total = bodies.reduce((sum, b) => sum + b.length, 0);
  expect(run).toMatchObject({ jobs: 1001, pages: 3, bytes: total, decodedBytes: total, contentEncoding: 'identity' });
  expect(run.seconds).toBeGreaterThan(0);
});

test('with Accept-Encoding: gzip the wire bytes are the compressed ones, the decoded ones the same as plain', async () => {
  const run = await fullSync(feed.url, { 'X-API-Key': 'k' }, { gzip: true });
  expect(run.contentEncoding).toBe('gzip');
  expect(run.bytes).toBe(bodies.reduce((sum, b) => sum + gzipSync(b).length, 0));
  expect(run.decodedBytes).toBe(bodies.reduce((sum, b) => sum + b.length, 0));
  expect(run.jobs).toBe(1001);
});

test('a refused page stops the sync with the status and the answer', async () => {
  await expect(fullSync(feed.url, { 'X-API-Key': 'wrong' }, { gzip: false })).rejects.toThrow(
    'the change feed answered 401: {"error":"Invalid API key"}',
  );
});

test('a body that says gzip but is not stops the sync', async () => {
  await expect(fullSync(feed.url, { 'X-API-Key': 'broken' }, { gzip: true })).rejects.toThrow();
});

test('the comparison runs one uncounted warm-up pass each way, then plain and gzip in ABBA order', async () => {
  asked.length = 0;
  const passes: string[] = [];
  const comparison = await compareSyncs(feed.url, { 'X-API-Key': 'k' }, 2, (run, gzip, warmup) =>
    passes.push(`${warmup ? 'warm-up ' : ''}${gzip ? 'gzip' : 'plain'} ${run.contentEncoding}`),
  );
  expect(passes).toEqual([
    'warm-up plain identity',
    'warm-up gzip gzip',
    'plain identity',
    'gzip gzip',
    'gzip gzip',
    'plain identity',
  ]);
  expect(asked).toHaveLength(6 * 3);
  expect(comparison.warmup).toHaveLength(2);
  expect(comparison.plain.map((r) => r.contentEncoding)).toEqual(['identity', 'identity']);
  expect(comparison.gzip.map((r) => r.contentEncoding)).toEqual(['gzip', 'gzip']);
});

test('the ratios are of the median pass, so one slow pass (a cold cache) does not decide them', () => {
  const run = (bytes: number, seconds: number): SyncRun => ({
    jobs: 1,
    pages: 1,
    bytes,
    decodedBytes: 1000,
    seconds,
    contentEncoding: '',
  });
  const ratios = syncRatios({
    plain: [run(1000, 57), run(1000, 16), run(1000, 15)],
    gzip: [run(150, 17), run(150, 16), run(150, 15.5)],
  });
  expect(ratios.bytes).toBeCloseTo(0.15);
  expect(ratios.time).toBeCloseTo(16 / 16);
});
