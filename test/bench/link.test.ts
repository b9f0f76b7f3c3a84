/**
 * The partner link S syncs across (bench/link.ts): a network namespace for the client and a veth
 * pair shaped by tbf. Needs root and iproute2, which CI has; elsewhere the suite says why it
 * cannot run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync, spawnSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { linkUnavailable, openLink, type Link } from '../../bench/link';

const why = linkUnavailable();
const onLink = why ? test.skip : test;
if (why) console.warn(`bench-link: not run here: ${why}`);

// Two pages of 1 MB that compress well: 16 Mbit each way at 8 Mbit/s is about 2 s plain.
const page = (since: string, hasMore: boolean) =>
  Buffer.from(
    JSON.stringify({
      data: Array.from({ length: 4000 }, (_, i) => ({ id: `${since}${i}`, title: 'Platform Engineer '.repeat(12) })),
      meta: { nextSince: `${since}x`, hasMore },
    }),
  );
const PAGES = [page('a', true), page('b', false)];

let server: http.Server;
let port: number;
let link: Link | undefined;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const since = new URL(req.url!, 'http://feed').searchParams.get('since');
    const body = PAGES[since === '' ? 0 : 1]!;
    if (/gzip/.test(String(req.headers['accept-encoding'])))
      res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(gzipSync(body));
    else res.end(body);
  });
  // All addresses: the client in the namespace reaches this host at the link's address.
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  port = (server.address() as AddressInfo).port;
  if (!why) link = openLink('8mbit');
});

afterAll(async () => {
  link?.close();
  await new Promise((resolve) => server.close(resolve));
});

onLink(
  'the client runs across the link, shaped to its rate both ways, and counts plain and gzip bytes as they crossed',
  async () => {
    const passes: string[] = [];
    const result = await link!.compareSyncs(
      `http://${link!.hostAddress}:${port}`,
      { 'X-API-Key': 'k' },
      1,
      (run, gzip, warmup) => passes.push(`${gzip ? 'gzip' : 'plain'}${warmup ? ' warm-up' : ''}`),
    );
    expect(passes).toEqual(['plain warm-up', 'gzip warm-up', 'plain', 'gzip']);
    const [plain, gzip] = [result.plain[0]!, result.gzip[0]!];
    expect(plain).toMatchObject({
      pages: 2,
      jobs: 8000,
      bytes: PAGES[0]!.length + PAGES[1]!.length,
      contentEncoding: 'identity',
    });
    expect(gzip).toMatchObject({ pages: 2, jobs: 8000, decodedBytes: plain.bytes, contentEncoding: 'gzip' });
    // Shaped to the rate asked for, both ways: tbf on this host's end and on the namespace's.
    const shaped = /tbf .*rate 8Mbit/;
    const [here, there] = [`bl${process.pid}h`, `bl${process.pid}c`];
    expect(execFileSync('tc', ['qdisc', 'show', 'dev', here], { encoding: 'utf8' })).toMatch(shaped);
    const inside = ['netns', 'exec', `bench-link-${process.pid}`, 'tc', 'qdisc', 'show', 'dev', there];
    expect(execFileSync('ip', inside, { encoding: 'utf8' })).toMatch(shaped);
  },
);

onLink("closing the link removes its namespace and its veth pair; a killed run's are removed by the next one", () => {
  const namespaces = () => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  expect(namespaces()).toContain(`bench-link-${process.pid}`);
  link!.close();
  link = undefined;
  expect(namespaces()).not.toContain(`bench-link-${process.pid}`);
  expect(execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' })).not.toContain(`bl${process.pid}h`);

  // A run killed before it closed its link left this behind: its process is gone.
  const dead = spawnSync(process.execPath, ['-e', '']).pid;
  execFileSync('ip', ['netns', 'add', `bench-link-${dead}`]);
  const next = openLink('1gbit');
  next.close();
  expect(namespaces()).not.toContain(`bench-link-${dead}`);
});
