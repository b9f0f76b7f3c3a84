/**
 * A request writes only what it answers for (every statement the service sends, as mysql2 traces
 * it): a GET of the listing or of one job writes nothing, even with counter rows waiting to be
 * folded and idempotency keys past their retention; a POST inserts its job, and with an
 * Idempotency-Key its own key's row, and nothing else. Folding and cleaning are the periodic
 * task's (service/housekeeping.ts).
 */
import type { Statement } from '../../../db/sql';
import { uuidToBuffer, uuidv7 } from '../../../domain/uuid';
import { json, reader, writer } from '../../helpers/consumers';
import { call } from '../../helpers/http';
import { sharedTestService } from '../../helpers/service';
import { recordStatements } from '../../helpers/statements';

const service = sharedTestService({ name: 'no_unanswered_writes', seed: true });

const WRITE = /^\s*(insert|update|delete|replace|alter|create|drop|truncate|lock)\b/i;
const writesOf = (statements: Statement[]) => statements.map((one) => one.sql).filter((sql) => WRITE.test(sql));

let recording: ReturnType<typeof recordStatements>;
beforeAll(async () => {
  // A committed job adds connection rows to the counters (a fold would write), and an expired key waits to be cleaned.
  await service.database.query(
    `insert into jobs (id, title, department, type, description, requirements, responsibilities, status, created_at)
     values (?, 'Unfolded', 'Waiting', 'contract', '', '[]', '[]', 'active', utc_timestamp(3))`,
    [uuidToBuffer(uuidv7())],
  );
  await service.database.query(
    `insert into idempotency_keys (consumer_id, idempotency_key, request_hash, created_at, expires_at)
     values ('someone', 'expired', 'hash', utc_timestamp(3) - interval 2 day, utc_timestamp(3) - interval 1 day)`,
  );
  const [waiting] = await service.database.query<Array<{ n: number }>>(
    'select count(*) as n from job_counts where slot <> 0',
  );
  expect(Number(waiting!.n)).toBeGreaterThan(0);
  recording = recordStatements(service.database.name);
});
afterAll(() => recording.stop());

/** The statements sent while `request` ran, and a while after (what a write in the background would be). */
async function statementsOf(request: () => Promise<unknown>): Promise<Statement[]> {
  recording.take();
  await request();
  await new Promise((resolve) => setTimeout(resolve, 300));
  return recording.take();
}

test('GET /api/v1/jobs (a total with connection rows, a deep page, a keyset page) writes nothing', async () => {
  for (const query of ['', '?department=waiting', '?page=4&limit=10', '?cursor=', '?status=paused']) {
    const statements = await statementsOf(async () => {
      const res = await call(`${service.url}/api/v1/jobs${query}`, { headers: reader });
      expect(res.status).toBe(200);
    });
    expect(statements.length).toBeGreaterThan(0);
    expect(writesOf(statements)).toEqual([]);
  }
});

test('GET /api/v1/jobs/{id} writes nothing', async () => {
  const list = await call(`${service.url}/api/v1/jobs?limit=1`, { headers: reader });
  const id = (list.body.data as Array<{ id: string }>)[0]!.id;
  const statements = await statementsOf(async () => {
    expect((await call(`${service.url}/api/v1/jobs/${id}`, { headers: reader })).status).toBe(200);
  });
  expect(statements.length).toBeGreaterThan(0);
  expect(writesOf(statements)).toEqual([]);
});

const body = JSON.stringify({
  title: 'Written once',
  department: 'QA',
  type: 'contract',
  description: 'A create.',
  requirements: [],
  responsibilities: [],
});

test('POST /api/v1/jobs inserts its job and nothing else', async () => {
  const statements = await statementsOf(async () => {
    const res = await call(`${service.url}/api/v1/jobs`, { method: 'POST', headers: { ...writer, ...json }, body });
    expect(res.status).toBe(201);
  });
  expect(writesOf(statements).map((sql) => sql.slice(0, 19))).toEqual(['insert into `jobs` ']);
});

test('POST /api/v1/jobs with an Idempotency-Key writes its job and its own key, and leaves expired keys to the periodic task', async () => {
  const statements = await statementsOf(async () => {
    const res = await call(`${service.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...writer, ...json, 'Idempotency-Key': 'no-unanswered-writes' },
      body,
    });
    expect(res.status).toBe(201);
  });
  const writes = writesOf(statements);
  expect(
    writes.map((sql) =>
      sql
        .match(/^(insert into|update) `(\w+)`/)
        ?.slice(1)
        .join(' '),
    ),
  ).toEqual(['insert into idempotency_keys', 'insert into jobs', 'update idempotency_keys']);
  expect(
    writes.filter((sql) => sql.includes('idempotency_keys')).every((sql) => sql.includes("'no-unanswered-writes'")),
  ).toBe(true);
  const [expired] = await service.database.query<Array<{ n: number }>>(
    "select count(*) as n from idempotency_keys where idempotency_key = 'expired'",
  );
  expect(Number(expired!.n)).toBe(1);
});
