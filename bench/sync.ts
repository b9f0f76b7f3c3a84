/**
 * A partner's full sync as the docs tell it: the change feed from the start, 500 jobs a page, until
 * meta.hasMore is false. Counts the bytes on the wire and the time, decompression and parsing
 * included (a compressed body is inflated as it arrives, as HTTP clients do).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { createGunzip } from 'node:zlib';

/** `bytes` as sent (after any Content-Encoding), `decodedBytes` once decoded; `contentEncoding` of the answers. */
export type SyncRun = {
  jobs: number;
  pages: number;
  bytes: number;
  decodedBytes: number;
  seconds: number;
  contentEncoding: string;
};

type Page = { status: number; encoding: string; wire: number; body: Buffer };

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(url: URL, headers: Record<string, string>): Promise<Page> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent }, (response) => {
      const encoding = String(response.headers['content-encoding'] ?? 'identity');
      let wire = 0;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => (wire += chunk.length));
      response.on('error', reject);
      const body = encoding === 'gzip' ? response.pipe(createGunzip()) : response;
      body.on('data', (chunk: Buffer) => chunks.push(chunk));
      body.on('end', () => resolve({ status: response.statusCode ?? 0, encoding, wire, body: Buffer.concat(chunks) }));
      body.on('error', reject);
    });
    request.on('error', reject);
  });
}

export async function fullSync(
  origin: string,
  headers: Record<string, string>,
  options: { gzip: boolean; limit?: number },
): Promise<SyncRun> {
  const asked = options.gzip ? { ...headers, 'Accept-Encoding': 'gzip' } : headers;
  const run: SyncRun = { jobs: 0, pages: 0, bytes: 0, decodedBytes: 0, seconds: 0, contentEncoding: '' };
  const encodings = new Set<string>();
  let since = '';
  const started = performance.now();
  for (;;) {
    const page = await get(
      new URL(`/api/v1/jobs/changes?limit=${options.limit ?? 500}&since=${encodeURIComponent(since)}`, origin),
      asked,
    );
    if (page.encoding !== 'identity' && page.encoding !== 'gzip')
      throw new Error(`the change feed answered Content-Encoding ${page.encoding}`);
    const text = page.body.toString('utf8');
    if (page.status !== 200) throw new Error(`the change feed answered ${page.status}: ${text.slice(0, 200)}`);
    const body = JSON.parse(text) as { data: unknown[]; meta: { nextSince: string; hasMore: boolean } };
    encodings.add(page.encoding);
    run.pages++;
    run.jobs += body.data.length;
    run.bytes += page.wire;
    run.decodedBytes += page.body.length;
    if (!body.meta.hasMore) break;
    since = body.meta.nextSince;
  }
  run.seconds = (performance.now() - started) / 1000;
  run.contentEncoding = [...encodings].join('+');
  return run;
}

/** Each pass, warm-up ones (plain, then gzip) apart: not counted. */
export type SyncComparison = Record<'warmup' | 'plain' | 'gzip', SyncRun[]>;

/**
 * Plain against gzip, like with like: one warm-up pass each way (the first pass after a start pays
 * for a cold database cache and the feed's sequencer), then `rounds` rounds in ABBA order (plain,
 * gzip; gzip, plain; ...), so a machine that speeds up or slows down over minutes moves both.
 */
export async function compareSyncs(
  origin: string,
  headers: Record<string, string>,
  rounds: number,
  onRun: (run: SyncRun, gzip: boolean, warmup: boolean) => void = () => undefined,
): Promise<SyncComparison> {
  const result: SyncComparison = { warmup: [], plain: [], gzip: [] };
  const abba = Array.from({ length: rounds }, (_, i) => (i % 2 ? [true, false] : [false, true])).flat();
  for (const [n, gzip] of [false, true, ...abba].entries()) {
    const run = await fullSync(origin, headers, { gzip });
    (n < 2 ? result.warmup : gzip ? result.gzip : result.plain).push(run);
    onRun(run, gzip, n < 2);
  }
  return result;
}

// In the link's namespace (bench/link.ts): `node sync.js <origin> <headers as JSON> <rounds>`, a JSON line a pass.
if (require.main === module) {
  const [origin, headers, rounds] = process.argv.slice(2) as [string, string, string];
  const print = (run: SyncRun, gzip: boolean, warmup: boolean) => console.log(JSON.stringify({ run, gzip, warmup }));
  compareSyncs(origin, JSON.parse(headers) as Record<string, string>, Number(rounds), print).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
}
