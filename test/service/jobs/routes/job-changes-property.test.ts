/**
 * Property: a partner that builds a mirror from the change feed alone, polling at arbitrary
 * moments while the table is changed by plain SQL (creates, edits, internal-only edits, status
 * changes, back to draft, soft and hard deletes, undeletes, transactions that commit late or roll
 * back), ends with exactly the listable jobs and their current fields. Random but seeded: a
 * failure prints the seed and the operations, and replays the same way.
 */
import type { PoolConnection } from 'mysql2/promise';
import { generateJobs, generator } from '../../../../db/seed-data';
import { jobs } from '../../../../db/schema';
import { reader } from '../../../helpers/consumers';
import { call } from '../../../helpers/http';
import { sharedTestService } from '../../../helpers/service';

const service = sharedTestService({ name: 'changes_property', seed: true });

type Entry = { id: string; removed?: true };

async function listable(): Promise<Map<string, unknown>> {
  const found = new Map<string, unknown>();
  let cursor = '';
  for (;;) {
    const res = await call(`${service.url}/api/v1/jobs?status=active,open,paused,closed&limit=100&cursor=${cursor}`, {
      headers: reader,
    });
    expect(res.status).toBe(200);
    for (const job of res.body.data) found.set(job.id, job);
    if (res.body.meta.nextCursor === null) return found;
    cursor = res.body.meta.nextCursor;
  }
}

test.each([[20260901], [7], [424242]])('a mirror built from the feed equals the table (seed %i)', async (seed) => {
  const rnd = generator(seed);
  const log: string[] = [];
  const mirror = new Map<string, unknown>();
  let since: string | undefined;
  let numbered = 0;

  const poll = async () => {
    const limit = 1 + rnd.int(25);
    const res = await call(`${service.url}/api/v1/jobs/changes?limit=${limit}${since ? `&since=${since}` : ''}`, {
      headers: reader,
    });
    expect(res.status).toBe(200);
    for (const entry of res.body.data as Entry[]) {
      if (entry.removed) mirror.delete(entry.id);
      else mirror.set(entry.id, entry);
    }
    since = res.body.meta.nextSince;
    log.push(`poll(${limit}) -> ${res.body.data.length}`);
  };

  const ids = async (): Promise<Buffer[]> =>
    (await service.database.query<Array<{ id: Buffer }>>('select id from jobs order by id')).map((row) => row.id);

  // Rows an open transaction has written: the pool leaves them alone (it would wait for it).
  const held = new Set<string>();

  // One random write on a connection (the pool, or an open transaction).
  const write = async (run: (sql: string, values?: unknown[]) => Promise<unknown>, inTransaction = false) => {
    const all = (await ids()).filter((candidate) => !held.has(candidate.toString('hex')));
    const id = rnd.pick(all);
    if (inTransaction) held.add(id.toString('hex'));
    const op = rnd.int(10);
    switch (op) {
      case 0: {
        const [row] = generateJobs({
          count: 1,
          seed: rnd.int(1e9),
          firstNumber: 10_000 + numbered++,
          statusFor: () => rnd.pick(['draft', 'active', 'open', 'paused', 'closed'] as const),
        });
        const values = {
          ...row!,
          id: Buffer.from(row!.id.replace(/-/g, ''), 'hex'),
          requirements: '[]',
          responsibilities: '[]',
        };
        const columns = [
          'id',
          'title',
          'department',
          'location',
          'type',
          'description',
          'requirements',
          'responsibilities',
          'status',
          'created_at',
          'salary_min',
          'salary_max',
          'salary_currency',
          'salary_disclosed',
        ];
        await run(`insert into jobs (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`, [
          values.id,
          values.title,
          values.department,
          values.location,
          values.type,
          values.description,
          values.requirements,
          values.responsibilities,
          values.status,
          values.createdAt,
          values.salaryMin,
          values.salaryMax,
          values.salaryCurrency,
          values.salaryDisclosed,
        ]);
        log.push(`insert ${values.status}`);
        return;
      }
      case 1:
        await run('update jobs set title = ?, updated_at = now(3) where id = ?', [`Retitled ${rnd.int(1000)}`, id]);
        break;
      case 2:
        await run(
          'update jobs set salary_disclosed = not salary_disclosed, client_name_disclosed = not client_name_disclosed where id = ?',
          [id],
        );
        break;
      case 3:
        await run('update jobs set pay_rate = pay_rate + 1, internal_notes = ? where id = ?', [
          `note ${rnd.int(1000)}`,
          id,
        ]);
        break;
      case 4:
      case 5:
        await run('update jobs set status = ? where id = ?', [rnd.pick(jobs.status.enumValues), id]);
        break;
      case 6:
        await run(`update jobs set status = 'draft' where id = ?`, [id]);
        break;
      case 7:
        await run('update jobs set deleted_at = now(3) where id = ?', [id]);
        break;
      case 8:
        await run('update jobs set deleted_at = null where id = ?', [id]);
        break;
      default:
        await run('delete from jobs where id = ?', [id]);
    }
    log.push(`op ${op} on ${id.toString('hex').slice(0, 8)}`);
  };

  const viaPool = (sql: string, values?: unknown[]) => service.database.query(sql, values);

  try {
    for (let step = 0; step < 150; step++) {
      const roll = rnd.int(10);
      if (roll < 5) {
        await write(viaPool);
      } else if (roll < 8) {
        await poll();
      } else {
        // A transaction that writes, lets other writes and polls happen, then commits or rolls back.
        const connection: PoolConnection = await service.database.pool.getConnection();
        const inTx = (sql: string, values?: unknown[]) => connection.query(sql, values);
        try {
          await connection.query('START TRANSACTION');
          log.push('begin');
          for (let i = 1 + rnd.int(3); i > 0; i--) await write(inTx, true);
          for (let i = rnd.int(4); i > 0; i--) await (rnd.int(2) ? write(viaPool) : poll());
          const commit = rnd.int(4) > 0;
          await connection.query(commit ? 'COMMIT' : 'ROLLBACK');
          log.push(commit ? 'commit' : 'rollback');
        } catch (error) {
          await connection.query('ROLLBACK');
          throw error;
        } finally {
          held.clear();
          connection.release();
        }
      }
    }
    // Catch up, then the mirror must be the table.
    for (let guard = 0; guard < 100; guard++) {
      const res = await call(`${service.url}/api/v1/jobs/changes?limit=500${since ? `&since=${since}` : ''}`, {
        headers: reader,
      });
      for (const entry of res.body.data as Entry[]) {
        if (entry.removed) mirror.delete(entry.id);
        else mirror.set(entry.id, entry);
      }
      since = res.body.meta.nextSince;
      if (!res.body.meta.hasMore) break;
    }
    expect(mirror).toEqual(await listable());
  } catch (error) {
    throw new Error(`seed ${seed}: ${(error as Error).message}\noperations: ${log.join('; ')}`, { cause: error });
  }
});
