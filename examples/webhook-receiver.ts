/**
 * Receiving the job listings' webhooks (docs/guides/webhooks.md): each POST is verified with
 * the Standard Webhooks library, then applied to the same mirror file as examples/sync-client.ts
 * (job.updated upserts, job.removed deletes) unless its sequence is at or below the last one applied
 * (a retry, a replay, or an older state overtaken), and its position saved as the mirror's nextSince.
 * An event of another history (our database was restored from a backup) first catches up through the
 * feed; when the feed refuses the saved position, the mirror is emptied and read again from the beginning.
 * A feed.restored event (sent at once after a restore, even if no change follows) does the same.
 * A webhook.test event is answered and applies nothing. On start, it first catches up through the change
 * feed from that position (whatever it missed while down), answering 503 meanwhile so the
 * dispatcher tries again later. On start and every CHECK_SECONDS (3600) it checks the mirror against the
 * API's digests and repairs the buckets that differ (examples/mirror-check.ts). Every request waits out a 429 or a
 * 5xx as its Retry-After says (examples/api-get.ts).
 *
 *   WEBHOOK_SECRET=whsec_... JOBS_API_URL=http://127.0.0.1:8000 JOBS_API_KEY=demo-reader-2f6c1a9e \
 *     PORT=9000 npm run -s example:webhooks
 *
 * (tsc compiles it, node runs it, on Node 20.12 too.) MIRROR_FILE: the store (mirror.json).
 */
import http from 'node:http';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { apiGet } from './api-get';
import { checkMirror, describeCheck } from './mirror-check';

type Job = { id: string; [field: string]: unknown };
interface Mirror {
  nextSince: string | null;
  etag: string | null;
  jobs: Record<string, Job>;
  /** The sequence of the last event applied: one at or below it is a repeat or older, and dropped. */
  lastSequence?: number;
  /** The history of that sequence: sequences are compared only within one. */
  history?: string;
}
type RestoredEvent = { id: string; type: 'feed.restored'; history: string; sequence: number };
type JobEvent =
  | { id: string; type: 'job.updated' | 'job.removed'; position: string; history: string; sequence: number; data: Job }
  | RestoredEvent
  | { id: string; type: 'webhook.test' };

const API = (process.env.JOBS_API_URL ?? 'http://127.0.0.1:8000').replace(/\/$/, '');
const KEY = process.env.JOBS_API_KEY ?? '';
const FILE = process.env.MIRROR_FILE ?? 'mirror.json';
const PORT = Number(process.env.PORT ?? 9000);
const verifier = new Webhook(process.env.WEBHOOK_SECRET ?? '');
const CHECK_MS = Number(process.env.CHECK_SECONDS ?? 3600) * 1000;
/** A check taken while events were still on their way is tried again this soon, this many times. */
const RECHECK = { ms: 5000, times: 5 };

async function load(): Promise<Mirror> {
  try {
    return JSON.parse(await readFile(FILE, 'utf8')) as Mirror;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { nextSince: null, etag: null, jobs: {} };
    throw err;
  }
}

/** All or nothing, as the sync client writes it: a crash leaves the previous file or the new one. */
async function save(mirror: Mirror): Promise<void> {
  await writeFile(`${FILE}.tmp`, JSON.stringify(mirror));
  await rename(`${FILE}.tmp`, FILE);
}

function apply(mirror: Mirror, id: string, change: Job, removed: boolean): void {
  if (removed) delete mirror.jobs[id];
  else mirror.jobs[id] = change;
}

/** The feed after the last position applied, page by page (a gap: missed while down, or before subscribing). */
async function catchUp(mirror: Mirror): Promise<void> {
  for (;;) {
    const res = await apiGet(
      `${API}/api/v1/jobs/changes?limit=500&since=${encodeURIComponent(mirror.nextSince ?? '')}`,
      KEY,
    );
    if (res.status === 400 && mirror.nextSince !== null) {
      // The feed no longer holds the saved position (a restore): what the mirror holds may be gone. Start again.
      console.error(`${((await res.json()) as { error: string }).error}: full sync from the beginning`);
      Object.assign(mirror, { nextSince: null, jobs: {}, lastSequence: undefined, history: undefined });
      continue;
    }
    if (!res.ok)
      throw new Error(
        `the feed answered ${res.status}: ${((await res.json().catch(() => ({}))) as { error?: string }).error ?? ''}`,
      );
    const page = (await res.json()) as {
      data: Array<Job & { removed?: true }>;
      meta: { nextSince: string; hasMore: boolean };
    };
    for (const change of page.data) apply(mirror, change.id, change, change.removed === true);
    mirror.nextSince = page.meta.nextSince;
    await save(mirror);
    if (!page.meta.hasMore) return;
  }
}

/**
 * Our database was restored from a backup: changes after it are gone, and the mirror may hold some. Catch up
 * from the saved position (a 400 there: full sync), then count sequences in the new history. A repeat does nothing.
 */
async function restored(mirror: Mirror, event: RestoredEvent): Promise<void> {
  if (event.history === mirror.history) return;
  console.log(`the feed was restored from a backup (history ${event.history}): catching up`);
  await catchUp(mirror);
  mirror.history = event.history;
  mirror.lastSequence = event.sequence;
  await save(mirror);
}

let rechecks = 0;
/**
 * The mirror checked against the API's digests and its differing buckets repaired, run in the event
 * queue so no event is applied meanwhile. At another position than the API's (events on their way),
 * it waits for them and tries again soon. Returns the ms until the next check.
 */
async function check(mirror: Mirror): Promise<number> {
  try {
    const report = await checkMirror({
      api: API,
      key: KEY,
      mirror: () => mirror,
      catchUp: () => Promise.resolve(false),
      save: () => save(mirror),
    });
    if (report.outcome === 'moving' && rechecks++ < RECHECK.times) return RECHECK.ms;
    console.log(describeCheck(report, Object.keys(mirror.jobs).length));
  } catch (err) {
    console.error(`${(err as Error).message}: checking again at the next interval`);
  }
  rechecks = 0;
  return CHECK_MS;
}

async function main(): Promise<void> {
  if (!KEY || !process.env.WEBHOOK_SECRET) throw new Error('set JOBS_API_KEY and WEBHOOK_SECRET');
  const mirror = await load();
  let ready = false;
  let queue = Promise.resolve();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // One event at a time, in arrival order (the dispatcher sends one at a time, in feed order).
      queue = queue
        .then(async () => {
          if (!ready) return void res.writeHead(503, { 'Retry-After': '5' }).end();
          let event: JobEvent;
          try {
            // The exact bytes received, never re-serialised JSON: that is what was signed.
            event = verifier.verify(Buffer.concat(chunks), req.headers as Record<string, string>) as JobEvent;
          } catch (err) {
            if (!(err instanceof WebhookVerificationError)) throw err;
            return void res.writeHead(401).end();
          }
          if (event.type === 'feed.restored') await restored(mirror, event);
          else if (event.type !== 'webhook.test' && event.history !== mirror.history) {
            // Another history: the feed was restored, or this is the first event. The feed is the truth: read it
            // through (it covers this event, numbered before it was sent), then count sequences in this history.
            await catchUp(mirror);
            mirror.history = event.history;
            mirror.lastSequence = event.sequence;
            await save(mirror);
          } else if (event.type !== 'webhook.test' && event.sequence > (mirror.lastSequence ?? 0)) {
            apply(mirror, event.data.id, event.data, event.type === 'job.removed');
            mirror.nextSince = event.position;
            mirror.lastSequence = event.sequence;
            await save(mirror);
          }
          res.writeHead(204).end();
        })
        .catch((err: Error) => {
          console.error(err.message);
          res.writeHead(500).end();
        });
    });
  });
  server.listen(PORT, () => console.log(`receiving webhooks on port ${PORT}`));
  await catchUp(mirror);
  ready = true;
  console.log(`caught up through the feed (${Object.keys(mirror.jobs).length} jobs mirrored)`);
  const scheduleCheck = (ms: number): void =>
    void setTimeout(() => void (queue = queue.then(() => check(mirror)).then(scheduleCheck)), ms);
  scheduleCheck(0);
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
