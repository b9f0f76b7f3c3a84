/**
 * Keeping a mirror of the job listings (docs/partners.md, "Keeping a mirror"): a full sync replays the
 * change feed from the beginning, then incremental polls ask for what changed after the saved
 * meta.nextSince, sending the last ETag so an idle poll is a 304 with no body. Each job is upserted
 * by id, each {"id", "removed": true} deleted. The mirror is a JSON file, written whole after
 * every page (to a temporary file renamed over it), so a restart resumes exactly where the last
 * page left off: nothing lost, nothing applied twice. On start and every CHECK_SECONDS it checks the
 * mirror against the API's digests and repairs the buckets that differ (examples/mirror-check.ts). Every request waits out a 429 or a
 * 5xx as its Retry-After says (examples/api-get.ts).
 *
 *   JOBS_API_URL=http://127.0.0.1:8000 JOBS_API_KEY=demo-reader-2f6c1a9e npm run -s example:sync
 *
 * which compiles it with the project's TypeScript (Node 20.12 or newer, after npm ci). Settings:
 *   MIRROR_FILE    the store (default mirror.json)     POLL_SECONDS  between polls (default 300)
 *   SYNC_LIMIT     changes per page, 1-500 (500)       SYNC_ONCE=1   catch up and check once, then exit
 *   CHECK_SECONDS  between mirror checks (default 3600)
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { apiGet } from './api-get';
import { checkMirror, describeCheck } from './mirror-check';

type Job = { id: string; [field: string]: unknown };
type Change = Job | { id: string; removed: true };
interface ChangePage {
  data: Change[];
  meta: { nextSince: string; hasMore: boolean };
}
interface Mirror {
  nextSince: string | null; // null: a full sync from the beginning
  etag: string | null;
  jobs: Record<string, Job>;
}

const API = (process.env.JOBS_API_URL ?? 'http://127.0.0.1:8000').replace(/\/$/, '');
const KEY = process.env.JOBS_API_KEY ?? '';
const FILE = process.env.MIRROR_FILE ?? 'mirror.json';
const LIMIT = Number(process.env.SYNC_LIMIT ?? 500);
const POLL_MS = Number(process.env.POLL_SECONDS ?? 300) * 1000;
const ONCE = process.env.SYNC_ONCE === '1';
const CHECK_MS = Number(process.env.CHECK_SECONDS ?? 3600) * 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const EMPTY: Mirror = { nextSince: null, etag: null, jobs: {} };

async function load(): Promise<Mirror> {
  try {
    return JSON.parse(await readFile(FILE, 'utf8')) as Mirror;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return structuredClone(EMPTY);
    throw err; // a mirror we cannot read must not be silently replaced
  }
}

/** All or nothing: a crash leaves either the previous file or the new one, never half of one. */
async function save(mirror: Mirror): Promise<void> {
  await writeFile(`${FILE}.tmp`, JSON.stringify(mirror));
  await rename(`${FILE}.tmp`, FILE);
}

type Fetched =
  { kind: 'page'; page: ChangePage; etag: string | null } | { kind: 'unchanged' } | { kind: 'restart'; reason: string };

/** One page of the feed after `since` (a 429 or a 5xx waited out and asked again). */
async function fetchChanges(since: string | null, etag: string | null): Promise<Fetched> {
  const url = `${API}/api/v1/jobs/changes?limit=${LIMIT}&since=${encodeURIComponent(since ?? '')}`;
  const res = await apiGet(url, KEY, etag ? { 'If-None-Match': etag } : {});
  if (res.status === 200)
    return { kind: 'page', page: (await res.json()) as ChangePage, etag: res.headers.get('ETag') };
  if (res.status === 304) return { kind: 'unchanged' };
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  // A position the feed no longer accepts (a rotated signing key, a restored database): the
  // feed says to read it again from the beginning.
  if (res.status === 400 && since !== null) return { kind: 'restart', reason: body.error ?? 'since refused' };
  throw new Error(`${res.status} ${body.error ?? res.statusText}`); // 401/403: the key; nothing to retry
}

/** Applies pages until the feed has nothing more right now. */
async function catchUp(mirror: Mirror): Promise<Mirror> {
  for (;;) {
    const fetched = await fetchChanges(mirror.nextSince, mirror.etag);
    if (fetched.kind === 'unchanged') {
      console.log(`no changes (${Object.keys(mirror.jobs).length} jobs mirrored)`);
      return mirror;
    }
    if (fetched.kind === 'restart') {
      console.error(`${fetched.reason}: full sync from the beginning`);
      mirror = structuredClone(EMPTY);
      await save(mirror);
      continue;
    }
    const { data, meta } = fetched.page;
    for (const change of data) {
      if ('removed' in change && change.removed === true) delete mirror.jobs[change.id];
      else mirror.jobs[change.id] = change;
    }
    mirror.nextSince = meta.nextSince;
    mirror.etag = fetched.etag;
    await save(mirror);
    console.log(`applied ${data.length} changes (${Object.keys(mirror.jobs).length} jobs mirrored)`);
    if (!meta.hasMore) return mirror;
  }
}

/** The mirror checked against the API's digests, its differing buckets repaired; a failed check waits for the next. */
async function check(mirror: Mirror): Promise<Mirror> {
  let current = mirror;
  try {
    const report = await checkMirror({
      api: API,
      key: KEY,
      mirror: () => current,
      catchUp: async () => Boolean((current = await catchUp(current))),
      save: () => save(current),
    });
    console.log(describeCheck(report, Object.keys(current.jobs).length));
  } catch (err) {
    console.error(`${(err as Error).message}: checking again at the next interval`);
  }
  return current;
}

async function main(): Promise<void> {
  if (!KEY) throw new Error('JOBS_API_KEY is not set');
  let mirror = await load();
  console.log(mirror.nextSince === null ? 'full sync' : 'resuming from the saved position');
  let nextCheck = 0;
  for (;;) {
    mirror = await catchUp(mirror);
    if (Date.now() >= nextCheck) {
      mirror = await check(mirror);
      nextCheck = Date.now() + CHECK_MS;
    }
    if (ONCE) return;
    await sleep(POLL_MS);
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
