import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { createDatabase } from '../../../../db/client';
import { createApp } from '../../../../service/app';
import { createLogger } from '../../../../service/logger';
import { call, expectJsonError, serve } from '../../../helpers/http';
import { writer2, json, writer } from '../../../helpers/consumers';
import { sharedTestService } from '../../../helpers/service';
import { canonicalJson } from '../../../../service/jobs/contract/idempotency-key';
import { MINIMAL_JOB } from '../../../helpers/job-bodies';

const service = sharedTestService({ name: 'idempotency' });

const valid = MINIMAL_JOB;

const post = (key: string | undefined, body: unknown = valid, consumer = writer, url = service.url) =>
  call(`${url}/api/v1/jobs`, {
    method: 'POST',
    headers: { ...consumer, ...json, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

let keys = 0;
/** A key no other test uses. */
const newKey = () => `test-key-${Date.now()}-${++keys}`;

async function jobsTitled(title: string): Promise<number> {
  const [row] = await service.database.query<Array<{ n: number }>>('select count(*) as n from jobs where title = ?', [
    title,
  ]);
  return Number(row!.n);
}

describe('Idempotency-Key on POST /api/v1/jobs', () => {
  test('without a key every create is a new job (unchanged behaviour)', async () => {
    const body = { ...valid, title: 'No key' };
    const first = await post(undefined, body);
    const second = await post(undefined, body);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(first.body.data.id).not.toBe(second.body.data.id);
    expect(await jobsTitled('No key')).toBe(2);
  });

  test('a retry with the same key and body replays the first response and stores no second job', async () => {
    const key = newKey();
    const body = { ...valid, title: 'Retried create' };
    const first = await post(key, body);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const retry = await post(key, body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(retry.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(await jobsTitled('Retried create')).toBe(1);
  });

  test('the same body with other key order, whitespace or gzip is the same request', async () => {
    const key = newKey();
    const first = await post(key, { ...valid, title: 'Reordered' });
    const reordered = `{ "description": "${valid.description}", "type": "${valid.type}",\n "department": "${valid.department}", "title": "Reordered" }`;
    const retry = await post(key, reordered);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    const gzipped = await call(`${service.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...writer, ...json, 'Idempotency-Key': key, 'Content-Encoding': 'gzip' },
      body: gzipSync(reordered),
    });
    expect(gzipped.status).toBe(201);
    expect(gzipped.text).toBe(first.text);
    expect(await jobsTitled('Reordered')).toBe(1);
  });

  test('the same key with a different body is a 422 naming the conflict, and stores nothing', async () => {
    const key = newKey();
    await post(key, { ...valid, title: 'Original body' });
    const other = await post(key, { ...valid, title: 'Changed body' });
    expect(other.status).toBe(422);
    expect(other.body).toEqual({
      error:
        'This Idempotency-Key was already used with a different request body: resend the original body to get its response, or use a new key for a new job',
    });
    expect(await jobsTitled('Changed body')).toBe(0);
    expect(await jobsTitled('Original body')).toBe(1);
  });

  test('keys belong to one consumer: another consumer with the same key gets its own job', async () => {
    const key = newKey();
    const body = { ...valid, title: 'Two consumers, one key' };
    const mine = await post(key, body, writer);
    const theirs = await post(key, body, writer2);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await jobsTitled('Two consumers, one key')).toBe(2);
  });

  test('repro: 20 concurrent creates with one key store exactly one job, and all 20 get its 201', async () => {
    const key = newKey();
    const body = { ...valid, title: 'Twenty at once' };
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(key, body)));
    expect(responses.map((res) => res.status)).toEqual(Array(20).fill(201));
    expect(new Set(responses.map((res) => res.headers.get('location'))).size).toBe(1);
    expect(responses.filter((res) => res.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(await jobsTitled('Twenty at once')).toBe(1);
    const [row] = await service.database.query<Array<{ n: number }>>(
      'select count(*) as n from idempotency_keys where idempotency_key = ?',
      [key],
    );
    expect(Number(row!.n)).toBe(1);
  });

  test('a create refused by validation stores nothing: the key can be used again with a fixed body', async () => {
    const key = newKey();
    const broken = await post(key, { ...valid, title: '' });
    expect(broken.status).toBe(400);
    const fixed = await post(key, { ...valid, title: 'Fixed after a 400' });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
    expect(await jobsTitled('Fixed after a 400')).toBe(1);
  });

  test('what is kept is the response the client already had, for at least 24 hours', async () => {
    const key = newKey();
    const first = await post(key, { ...valid, title: 'Stored response' });
    const [row] = await service.database.query<Array<Record<string, unknown>>>(
      'select *, timestampdiff(second, created_at, expires_at) as kept from idempotency_keys where idempotency_key = ?',
      [key],
    );
    expect(Object.keys(row!).sort()).toEqual([
      'consumer_id',
      'created_at',
      'expires_at',
      'idempotency_key',
      'kept',
      'request_hash',
      'response_body',
      'response_location',
      'response_status',
    ]);
    expect(row).toMatchObject({
      response_status: 201,
      response_location: first.headers.get('location'),
      response_body: first.text,
    });
    expect(row!.request_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Number(row!.kept)).toBe(24 * 3600);
  });

  test('after its 24 hours a key is forgotten: it creates again', async () => {
    const key = newKey();
    const body = { ...valid, title: 'Expired key' };
    await post(key, body);
    // Age this key past its retention (the periodic task deletes such keys: test/service/housekeeping.test.ts).
    await service.database.query(
      'update idempotency_keys set expires_at = utc_timestamp(3) - interval 1 second where idempotency_key = ?',
      [key],
    );
    const again = await post(key, body);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await jobsTitled('Expired key')).toBe(2);
  });

  test.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'my key'],
    ['a non-ASCII character', 'cl\u00e9'],
  ])('a key that is %s is a 400, and nothing is stored', async (_label, key) => {
    const body = { ...valid, title: `Bad key ${_label}` };
    const res = await post(key, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Idempotency-Key must be 1 to 255 visible ASCII characters/);
    expect(await jobsTitled(body.title)).toBe(0);
  });

  test('255 characters is the longest key', async () => {
    expect((await post('k'.repeat(255), { ...valid, title: 'Longest key' })).status).toBe(201);
  });

  test('two Idempotency-Key headers are a 400', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(`${service.url}/api/v1/jobs`, {
        method: 'POST',
        headers: { ...writer, ...json, 'Idempotency-Key': [newKey(), newKey()] },
      });
      request.on('response', (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end(JSON.stringify({ ...valid, title: 'Two keys' }));
    });
    expect(status).toBe(400);
    expect(await jobsTitled('Two keys')).toBe(0);
  });
});

describe('a request that waits too long for the same key in flight', () => {
  test('is a 409 with Retry-After once the database lock wait limit passes, and stores nothing', async () => {
    // A pool whose sessions give up on a row lock after 1 s (in production DB_QUERY_TIMEOUT_MS sets it).
    const handle = createDatabase(service.database.url);
    handle.pool.on('connection', (connection) => {
      void connection.query('SET SESSION innodb_lock_wait_timeout = 1');
    });
    const app = createApp({ db: handle.db, config: {}, logger: createLogger('silent') }).callback();
    const served = await serve((req, res) => void app(req, res));
    // Another request's transaction holds the key, as the first of two concurrent creates does.
    const holder = await service.database.pool.getConnection();
    const key = newKey();
    try {
      await holder.beginTransaction();
      await holder.query(
        `insert into idempotency_keys (consumer_id, idempotency_key, request_hash, created_at, expires_at)
         values (?, ?, repeat('0', 64), utc_timestamp(3), utc_timestamp(3) + interval 1 day)`,
        [writer['X-Consumer-ID'], key],
      );
      const res = await post(key, { ...valid, title: 'Waited too long' }, writer, served.url);
      expect(res.status).toBe(409);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.body).toEqual({
        error: 'A request with this Idempotency-Key is still being processed; retry in a moment',
      });
    } finally {
      await holder.rollback();
      holder.release();
      await served.close();
      await handle.close();
    }
    expect(await jobsTitled('Waited too long')).toBe(0);
  });
});

describe('a key the database refuses to record for another reason', () => {
  test('is that failure (a 500), not a 409 "still being processed" that no retry would clear', async () => {
    // Any error but a duplicate key or a lock wait: here a trigger that refuses every claim.
    await service.database.query(
      `create trigger refuse_claims before insert on idempotency_keys for each row
       signal sqlstate '45000' set message_text = 'claims refused'`,
    );
    try {
      const res = await post(newKey(), { ...valid, title: 'Claim refused' });
      expectJsonError(res, 500, 'Internal server error');
      // Each refusal gives its connection back: more refusals than the pool holds (10, db/client.ts) all answer.
      for (let i = 0; i < 11; i++)
        expect((await post(newKey(), { ...valid, title: 'Claim refused' })).status).toBe(500);
    } finally {
      await service.database.query('drop trigger refuse_claims');
    }
    expect(await jobsTitled('Claim refused')).toBe(0);
    expect((await post(newKey(), { ...valid, title: 'Claimed after refusals' })).status).toBe(201);
  });
});

/**
 * Idempotency-Key at the edges that had no test (issue 12): the exact 400s a partner reads for a
 * repeated or malformed key, and the first and last visible ASCII characters as keys.
 */
describe('key rules and their messages', () => {
  const service = sharedTestService({ name: 'idempotency_edges' });

  const valid = { title: 'Key Edges', department: 'QA', type: 'contract', description: 'Checks the key rules.' };
  const post = (key: string, body: object = valid) =>
    call(`${service.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...writer, ...json, 'Idempotency-Key': key },
      body: JSON.stringify(body),
    });

  test('two Idempotency-Key headers: a 400 that says to send one', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`${service.url}/api/v1/jobs`, {
        method: 'POST',
        headers: { ...writer, ...json, 'Idempotency-Key': [`edge-a-${Date.now()}`, `edge-b-${Date.now()}`] },
      });
      request.on('response', (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.end(JSON.stringify(valid));
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ error: 'Send one Idempotency-Key header, not several' });
  });

  test('a malformed key: the whole message, with its hint', async () => {
    const res = await post('two words');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Idempotency-Key must be 1 to 255 visible ASCII characters, without spaces (a UUID is a good choice)',
    });
  });

  test.each([
    ['"!" (the first visible ASCII character)', '!'],
    ['"~" (the last)', '~'],
    [
      'every visible ASCII character',
      Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join(''),
    ],
  ])('a key of %s is a key: created once, then replayed', async (_label, key) => {
    const body = { ...valid, title: `Key edge ${key.length}` };
    const first = await post(key, body);
    expect(first.status).toBe(201);
    const again = await post(key, body);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

/**
 * canonicalJson (service/jobs/contract/idempotency-key.ts), what makes two Idempotency-Key retries "the same
 * request": JSON.stringify's text with keys sorted at every level, arrays kept in order.
 */
describe('canonicalJson', () => {
  test.each([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [
      { title: 'x', salary: { max: 2, min: 1, currency: 'USD' }, requirements: ['SQL', 'Go'] },
      '{"requirements":["SQL","Go"],"salary":{"currency":"USD","max":2,"min":1},"title":"x"}',
    ],
    [[3, [2, 1], { z: null, y: [] }], '[3,[2,1],{"y":[],"z":null}]'],
    [{}, '{}'],
    [[], '[]'],
    [{ é: 1, Z: 2, a: 3, '"q"': 4 }, '{"\\"q\\"":4,"Z":2,"a":3,"é":1}'],
    ['text "quoted"', '"text \\"quoted\\""'],
    [1.5, '1.5'],
  ])('%j is %s', (value, text) => {
    expect(canonicalJson(value)).toBe(text);
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });

  test('key order and nesting do not change the text', () => {
    expect(canonicalJson({ a: [{ y: 1, x: 2 }], b: { d: 1, c: 2 } })).toBe(
      canonicalJson({ b: { c: 2, d: 1 }, a: [{ x: 2, y: 1 }] }),
    );
  });

  test('arrays nested 50,000 deep (a 100 KB body) do not overflow the stack', () => {
    const deep = JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
    expect(canonicalJson(deep)).toBe(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
  });
});
