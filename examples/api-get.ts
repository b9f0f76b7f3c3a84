/**
 * One GET to the Job Listings API as the examples make it (docs/guides/keeping-a-mirror.md): a 429 or a
 * 5xx waits as its Retry-After says (seconds or an HTTP date; without one, a backoff doubling to a minute)
 * and a network error waits the backoff, each logged, then the same request is made again. Any other
 * answer is the caller's to read.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retry-After in ms; without a readable one, the caller's own backoff. */
function retryAfterMs(header: string | null, fallbackMs: number): number {
  if (header === null) return fallbackMs;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? fallbackMs : Math.max(0, date - Date.now());
}

/** GETs `url` with the key (and any other headers) until the answer is neither a 429 nor a 5xx. */
export async function apiGet(url: string, key: string, headers: Record<string, string> = {}): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const backoffMs = Math.min(60_000, 1000 * 2 ** attempt);
    let res: Response;
    try {
      res = await fetch(url, { headers: { 'X-API-Key': key, ...headers } });
    } catch (err) {
      console.error(`network error (${(err as Error).message}), retrying in ${backoffMs / 1000}s`);
      await sleep(backoffMs);
      continue;
    }
    if (res.status !== 429 && res.status < 500) return res;
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    const waitMs = retryAfterMs(res.headers.get('Retry-After'), backoffMs);
    console.error(`${res.status} ${body.error ?? ''}: waiting ${Math.ceil(waitMs / 1000)}s`);
    await sleep(waitMs);
  }
}
