/**
 * A partner's full sync, as the docs tell partners to do it: the change feed from the beginning,
 * 500 jobs a page, each page's meta.nextSince asked for next until meta.hasMore is false. Counts
 * the bytes that crossed the wire (compressed, when the answer was) and the time, including the
 * client's own decompression and JSON parsing, which a partner pays too.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';

export interface SyncRun {
  jobs: number;
  pages: number;
  /** Body bytes as sent (after any Content-Encoding). */
  bytes: number;
  /** Body bytes once decoded. */
  decodedBytes: number;
  seconds: number;
  /** The Content-Encoding the answers carried ("identity" when none). */
  contentEncoding: string;
}

interface Page {
  status: number;
  encoding: string;
  raw: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(url: URL, headers: Record<string, string>): Promise<Page> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, encoding: String(response.headers['content-encoding'] ?? 'identity'), raw: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

export async function fullSync(origin: string, headers: Record<string, string>, options: { gzip: boolean; limit?: number }): Promise<SyncRun> {
  const asked = options.gzip ? { ...headers, 'Accept-Encoding': 'gzip' } : headers;
  const run: SyncRun = { jobs: 0, pages: 0, bytes: 0, decodedBytes: 0, seconds: 0, contentEncoding: '' };
  const encodings = new Set<string>();
  let since = '';
  const started = performance.now();
  for (;;) {
    const page = await get(new URL(`/api/v1/jobs/changes?limit=${options.limit ?? 500}&since=${encodeURIComponent(since)}`, origin), asked);
    if (page.encoding !== 'identity' && page.encoding !== 'gzip') throw new Error(`the change feed answered Content-Encoding ${page.encoding}`);
    const text = (page.encoding === 'gzip' ? gunzipSync(page.raw) : page.raw).toString('utf8');
    if (page.status !== 200) throw new Error(`the change feed answered ${page.status}: ${text.slice(0, 200)}`);
    const body = JSON.parse(text) as { data: unknown[]; meta: { nextSince: string; hasMore: boolean } };
    encodings.add(page.encoding);
    run.pages++;
    run.jobs += body.data.length;
    run.bytes += page.raw.length;
    run.decodedBytes += Buffer.byteLength(text);
    if (!body.meta.hasMore) break;
    since = body.meta.nextSince;
  }
  run.seconds = (performance.now() - started) / 1000;
  run.contentEncoding = [...encodings].join('+');
  return run;
}
