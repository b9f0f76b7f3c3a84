/**
 * GET /api/v1/jobs/changes as a partner keeping a mirror uses it, with the jobs table changed by
 * plain SQL the way the organisation's internal systems change it.
 */
import { type PoolConnection } from 'mysql2/promise';
import { SEQUENCER_LIMITS, sequencePendingChanges } from '../../../../db/jobs/change-numbering';
import { json, writer, reader } from '../../../helpers/consumers';
import { call, expectJsonError, refusesQueries } from '../../../helpers/http';
import { sharedTestService } from '../../../helpers/service';
import { dumpDatabase, loadDump } from '../../../helpers/backup';
import { MESSAGES } from '../../../../service/errors';

const service = sharedTestService({ name: 'changes', seed: true });

type Entry = { id: string; removed?: true; title?: string; status?: string };
type Feed = { data: Entry[]; meta: { nextSince: string; hasMore: boolean; limit: number } };

async function feed(since?: string, limit?: number): Promise<Feed> {
  const params = new URLSearchParams();
  if (since !== undefined) params.set('since', since);
  if (limit !== undefined) params.set('limit', String(limit));
  const res = await call(`${service.url}/api/v1/jobs/changes?${params.toString()}`, { headers: reader });
  expect(res.status).toBe(200);
  return res.body as Feed;
}

/** Reads on until the feed says nothing more is waiting; returns every entry and the position. */
async function drain(since?: string, limit = 50): Promise<{ entries: Entry[]; since: string }> {
  const entries: Entry[] = [];
  for (;;) {
    const page = await feed(since, limit);
    entries.push(...page.data);
    since = page.meta.nextSince;
    if (!page.meta.hasMore) return { entries, since };
  }
}

const uuid = (h: string) => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;

async function idsWhere(condition: string, count = 1): Promise<string[]> {
  const rows = await service.database.query<Array<{ h: string }>>(
    `select lower(hex(id)) as h from jobs where ${condition} order by created_at desc, id desc limit ${count}`,
  );
  return rows.map(({ h }) => uuid(h));
}

const bin = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');

/** The listable jobs as the API shows them (a cursor walk of every listable status). */
async function listable(): Promise<Map<string, Entry>> {
  const jobs = new Map<string, Entry>();
  let cursor = '';
  for (;;) {
    const res = await call(`${service.url}/api/v1/jobs?status=active,open,paused,closed&limit=100&cursor=${cursor}`, {
      headers: reader,
    });
    for (const job of res.body.data) jobs.set(job.id, job);
    if (res.body.meta.nextCursor === null) return jobs;
    cursor = res.body.meta.nextCursor;
  }
}

function apply(mirror: Map<string, Entry>, entries: Entry[]): void {
  for (const entry of entries) {
    if (entry.removed) mirror.delete(entry.id);
    else mirror.set(entry.id, entry);
  }
}

describe('the change feed', () => {
  test('replayed from the beginning, it gives exactly the listable jobs with their current fields', async () => {
    const mirror = new Map<string, Entry>();
    const { entries } = await drain(undefined, 7);
    apply(mirror, entries);
    expect(mirror).toEqual(await listable());
    const [row] = await service.database.query<Array<{ n: number }>>(
      `select count(*) as n from jobs where deleted_at is null and status <> 'draft'`,
    );
    expect(mirror.size).toBe(Number(row!.n));
  });

  test('an idle feed answers nothing new and the same position', async () => {
    const { since } = await drain();
    const again = await feed(since);
    expect(again).toEqual({ data: [], meta: { nextSince: since, hasMore: false, limit: 100 } });
  });

  test('drafts never appear; publishing, going back to draft, soft and hard deletes do', async () => {
    let { since } = await drain();
    const created = await call(`${service.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...writer, ...json },
      body: JSON.stringify({
        title: 'Secret draft',
        department: 'Engineering',
        type: 'contract',
        description: 'Not yet',
      }),
    });
    const draft = created.body.data.id as string;
    let step = await drain(since);
    expect(step.entries.map((e) => e.id)).not.toContain(draft);
    // Nor when a draft that was never listable is edited.
    await service.database.query('update jobs set title = ? where id = ?', ['Still secret', bin(draft)]);
    step = await drain(step.since);
    expect(step.entries).toEqual([]);

    await service.database.query(`update jobs set status = 'open' where id = ?`, [bin(draft)]);
    step = await drain(step.since);
    expect(step.entries).toEqual([expect.objectContaining({ id: draft, status: 'open', title: 'Still secret' })]);

    await service.database.query(`update jobs set status = 'draft' where id = ?`, [bin(draft)]);
    step = await drain(step.since);
    expect(step.entries).toEqual([{ id: draft, removed: true }]);

    const [softDeleted, hardDeleted] = await idsWhere(`status = 'active' and deleted_at is null`, 2);
    await service.database.query('update jobs set deleted_at = now(3) where id = ?', [bin(softDeleted!)]);
    await service.database.query('delete from jobs where id = ?', [bin(hardDeleted!)]);
    step = await drain(step.since);
    expect(step.entries).toEqual([
      { id: softDeleted, removed: true },
      { id: hardDeleted, removed: true },
    ]);
    since = step.since;

    // A change to a paused job is news too: it is listable (with status=paused).
    const [paused] = await idsWhere(`status = 'paused' and deleted_at is null`);
    await service.database.query('update jobs set title = ? where id = ?', ['Paused, renamed', bin(paused!)]);
    expect((await drain(since)).entries).toEqual([
      expect.objectContaining({ id: paused, status: 'paused', title: 'Paused, renamed' }),
    ]);
  });

  test('a bulk import by plain SQL arrives whole, numbered a share at a time while the feed says more is waiting', async () => {
    const { since } = await drain();
    const [before] = await service.database.query<Array<{ n: number }>>('select count(*) as n from jobs');
    // 300 copies of listable seed jobs, by INSERT ... SELECT.
    await service.database.query(`
      insert into jobs (id, title, department, location, type, description, requirements, responsibilities, status, created_at)
      select unhex(replace(uuid(), '-', '')), concat(j.title, ' #', d.n), j.department, j.location, j.type, j.description,
             j.requirements, j.responsibilities, j.status, j.created_at
      from (select * from jobs where status in ('active', 'open') and deleted_at is null limit 30) j,
        (select 0 n union all select 1 union all select 2 union all select 3 union all select 4 union all select 5 union all select 6 union all select 7 union all select 8 union all select 9) d`);
    const [after] = await service.database.query<Array<{ n: number }>>('select count(*) as n from jobs');
    const added = Number(after!.n) - Number(before!.n);
    expect(added).toBe(300);
    // One call numbers its share (2 x 50 here, 10 x 500 in service) and says more is waiting...
    expect(await sequencePendingChanges(service.database.db, { batch: 50, batchesPerCall: 2 })).toBe(true);
    const [waiting] = await service.database.query<Array<{ n: number }>>(
      'select count(*) as n from job_changes where seq is null',
    );
    expect(Number(waiting!.n)).toBe(200);
    // ...and the feed says so too while it still numbers (meta.hasMore), until every job is there once.
    SEQUENCER_LIMITS.batchesPerCall = 1;
    SEQUENCER_LIMITS.batch = 60;
    try {
      const first = await feed(since, 500);
      expect(first.data).toHaveLength(160);
      expect(first.meta.hasMore).toBe(true);
      const rest = await drain(first.meta.nextSince, 500);
      const ids = [...first.data, ...rest.entries].map((e) => e.id);
      expect(ids).toHaveLength(added);
      expect(new Set(ids).size).toBe(added);
    } finally {
      Object.assign(SEQUENCER_LIMITS, { batch: 500, batchesPerCall: 10 });
    }
  });

  test('a job changed twice before a read appears once, as it is now', async () => {
    const { since } = await drain();
    const [id] = await idsWhere(`status = 'open' and deleted_at is null`);
    await service.database.query('update jobs set title = ? where id = ?', ['First', bin(id!)]);
    await service.database.query('update jobs set title = ? where id = ?', ['Second', bin(id!)]);
    expect((await drain(since)).entries).toEqual([expect.objectContaining({ id, title: 'Second' })]);
  });
});

describe('writes that commit out of order', () => {
  let a: PoolConnection;
  let b: PoolConnection;
  beforeEach(async () => {
    a = await service.database.pool.getConnection();
    b = await service.database.pool.getConnection();
  });
  afterEach(async () => {
    await a.query('ROLLBACK');
    a.release();
    b.release();
  });

  test.each([
    ['updates', 'update'],
    ['inserts', 'insert'],
  ])(
    '%s: the one that started first and commits last is not skipped, even with the same timestamp',
    async (_label, kind) => {
      const { since } = await drain();
      const [first, second] = await idsWhere(`status = 'active' and deleted_at is null`, 2);
      const stamp = '2026-06-01 12:00:00.000';
      const write = async (connection: PoolConnection, id: string, title: string) => {
        if (kind === 'update') {
          await connection.query('update jobs set title = ?, updated_at = ? where id = ?', [title, stamp, bin(id)]);
        } else {
          // A copy of an existing job under a new id, created at the same instant as the other.
          await connection.query(
            `insert into jobs (id, title, department, location, type, description, requirements, responsibilities, status, created_at)
           select unhex(replace(uuid(), '-', '')), ?, department, location, type, description, requirements, responsibilities, 'open', ? from jobs where id = ?`,
            [title, stamp, bin(id)],
          );
        }
      };
      // A writes first (its change is recorded first) but commits last.
      await a.query('START TRANSACTION');
      await write(a, first!, `A ${kind}`);
      await b.query('START TRANSACTION');
      await write(b, second!, `B ${kind}`);
      await b.query('COMMIT');

      // The feed answers while A is still open (it neither waits for A nor sees it)...
      const middle = await drain(since);
      expect(middle.entries.map((e) => e.title)).toEqual([`B ${kind}`]);

      // ...and a reader continuing from there gets A once it commits.
      await a.query('COMMIT');
      const after = await drain(middle.since);
      expect(after.entries.map((e) => e.title)).toEqual([`A ${kind}`]);
    },
  );

  test('a rolled-back write leaves no entry and no gap that stops the feed', async () => {
    const { since } = await drain();
    const [first, second] = await idsWhere(`status = 'open' and deleted_at is null`, 2);
    await a.query('START TRANSACTION');
    await a.query('update jobs set title = ? where id = ?', ['Never', bin(first!)]);
    await b.query('update jobs set title = ? where id = ?', ['Kept', bin(second!)]);
    await a.query('ROLLBACK');
    expect((await drain(since)).entries.map((e) => e.title)).toEqual(['Kept']);
  });
});

describe('bad positions are 400s that say what to do', () => {
  test.each([
    ['garbage', 'yesterday'],
    ['a number', '12'],
    ['too long', 'x'.repeat(300)],
  ])('since: %s', async (_label, since) => {
    const res = await call(`${service.url}/api/v1/jobs/changes?since=${encodeURIComponent(since)}`, {
      headers: reader,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^since is not valid: pass meta.nextSince back exactly/);
  });

  test('a position with one character changed, or a list cursor passed as since', async () => {
    const { since } = await drain();
    const flipped = since.slice(0, 5) + (since[5] === 'A' ? 'B' : 'A') + since.slice(6);
    const cursor = (await call(`${service.url}/api/v1/jobs?cursor=&limit=1`, { headers: reader })).body.meta.nextCursor;
    for (const value of [flipped, cursor]) {
      const res = await call(`${service.url}/api/v1/jobs/changes?since=${value}`, { headers: reader });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^since is not valid/);
    }
    // And the other way round: a feed position is not a list cursor.
    expect((await call(`${service.url}/api/v1/jobs?cursor=${since}`, { headers: reader })).status).toBe(400);
  });

  test('a position beyond the feed (a database restored from an older backup)', async () => {
    const { since } = await drain();
    await service.database.query('update job_change_sequence set last_seq = 0');
    await service.database.query('update job_changes set seq = null');
    try {
      const res = await call(`${service.url}/api/v1/jobs/changes?since=${since}`, { headers: reader });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^since is ahead of this feed/);
    } finally {
      await drain(); // renumbers everything, after what the test wiped
    }
  });

  test('a position the restore undid, however many changes came after the restore; one from before the backup walks on', async () => {
    const atBackup = (await drain()).since;
    const backup = dumpDatabase(service.database.name);
    const ids = await idsWhere(`status in ('active', 'open') and deleted_at is null`, 12);
    // Five changes the partner applied, then lost when the database goes back to the backup.
    for (const id of ids.slice(0, 5))
      await service.database.query('update jobs set title = ? where id = ?', ['Lost in the restore', bin(id)]);
    const ahead = (await drain(atBackup)).since;
    // A restore is told by the table's creation time, to the second: not within the second this database was made.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    loadDump(service.database.name, backup);
    // More changes after the restore than the partner's position is ahead by.
    for (const id of ids)
      await service.database.query('update jobs set title = ? where id = ?', ['After the restore', bin(id)]);
    const refused = await call(`${service.url}/api/v1/jobs/changes?since=${ahead}`, { headers: reader });
    expectJsonError(refused, 400, MESSAGES.sinceRewritten);
    // A mirror at the backup's position was never ahead of it: it walks on, and ends exact.
    const mirror = new Map<string, Entry>();
    apply(mirror, (await drain()).entries);
    const walked = new Map(mirror);
    const walkedOn = (await drain(atBackup)).entries;
    expect(new Set(walkedOn.filter((entry) => entry.title === 'After the restore').map((entry) => entry.id))).toEqual(
      new Set(ids),
    );
    expect(walkedOn.some((entry) => entry.title === 'Lost in the restore')).toBe(false);
    expect(walked).toEqual(await listable());
  });

  test.each(['0', '501', 'ten', ''])('limit=%s', async (limit) => {
    const res = await call(`${service.url}/api/v1/jobs/changes?limit=${limit}`, { headers: reader });
    expectJsonError(res, 400, 'limit must be an integer from 1 to 500');
  });

  test('unknown and repeated parameters', async () => {
    const unknown = await call(`${service.url}/api/v1/jobs/changes?page=2`, { headers: reader });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('Unknown query parameter "page". Allowed: since, limit');
    expect((await call(`${service.url}/api/v1/jobs/changes?limit=1&limit=2`, { headers: reader })).status).toBe(400);
  });
});

/**
 * GET /api/v1/jobs/changes: the exact 400 a partner reads for each bad query, and the edges of
 * what is accepted (issue 12: the feed's query rules had status-only tests for several of these).
 */
describe('query messages', () => {
  const service = sharedTestService({ name: 'changes_messages' });

  const changes = (query: string) => call(`${service.url}/api/v1/jobs/changes${query}`, { headers: reader });
  const LIMIT = 'limit must be an integer from 1 to 500';

  refusesQueries(changes, [
    ['limit of five digits, even a valid value', '?limit=00500', LIMIT],
    ['limit with a letter before', '?limit=a5', LIMIT],
    ['limit with a letter after', '?limit=5a', LIMIT],
    ['negative limit', '?limit=-1', LIMIT],
    ['limit twice', '?limit=1&limit=2', 'Query parameter "limit" was given more than once; send one value'],
    // Longer than any position the API hands out: refused before it is even checked.
    [
      'since of 201 characters',
      `?since=${'A'.repeat(201)}`,
      'since is not valid: pass meta.nextSince back exactly as it was given',
    ],
  ]);

  test('an unknown parameter name is clipped to 40 characters', async () => {
    const res = await changes(`?${'q'.repeat(41)}=1`);
    expectJsonError(res, 400, `Unknown query parameter "${'q'.repeat(40)}…". Allowed: since, limit`);
    const exact = await changes(`?${'r'.repeat(40)}=1`);
    expect(exact.body).toEqual({ error: `Unknown query parameter "${'r'.repeat(40)}". Allowed: since, limit` });
  });

  test.each([
    ['no limit', '', 100],
    ['limit=1', '?limit=1', 1],
    ['limit=500', '?limit=500', 500],
    ['limit=0500', '?limit=0500', 500],
    // The gateway strips api_key; a direct caller may still send it, and it is neither an error nor echoed.
    ['api_key', '?api_key=demo-reader-2f6c1a9e&limit=7', 7],
  ])('%s is accepted', async (_label, query, limit) => {
    const res = await changes(query);
    expect(res.status).toBe(200);
    expect(res.body.meta.limit).toBe(limit);
    expect(res.text).not.toContain('demo-reader-2f6c1a9e');
  });
});
