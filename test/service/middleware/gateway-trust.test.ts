/**
 * The identity the service takes from the gateway's headers (service/middleware/gateway-trust.ts): which
 * X-Consumer-ID values count as a caller (creating needs one, a draft is visible to its creator
 * only) and how the username reaches the request log.
 */
import { json } from '../../helpers/consumers';
import { call, expectJsonError } from '../../helpers/http';
import { sharedTestService } from '../../helpers/service';

const service = sharedTestService({ name: 'identity' });

const job = { title: 'Identity check', department: 'QA', type: 'contract', description: 'Who are you?' };

const create = (headers: Record<string, string>) =>
  call(`${service.url}/api/v1/jobs`, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(job) });

async function rowCount(): Promise<number> {
  const [row] = await service.database.query<Array<{ n: number }>>('select count(*) as n from jobs');
  return Number(row!.n);
}

describe('X-Consumer-ID', () => {
  test.each([
    ['a Kong consumer UUID', '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a09'],
    ['every allowed character class', 'Local.dev_user:42-x'],
    ['64 characters', 'c'.repeat(64)],
    ['one character', 'z'],
  ])('%s is a caller: the create succeeds and the draft is theirs', async (_label, id) => {
    const res = await create({ 'X-Consumer-ID': id });
    expect(res.status).toBe(201);
    const own = await call(`${service.url}/api/v1/jobs/${res.body.data.id}`, { headers: { 'X-Consumer-ID': id } });
    expect(own.status).toBe(200);
    const other = await call(`${service.url}/api/v1/jobs/${res.body.data.id}`, { headers: { 'X-Consumer-ID': `${id.slice(0, 63)}2` } });
    expectJsonError(other, 404, 'Job not found');
  });

  test.each([
    ['65 characters', 'c'.repeat(65)],
    ['a space inside', 'partner 7'],
    ['a quote', "partner'7"],
    ['a slash', 'partner/7'],
    ['a non-ASCII letter', 'partnér'],
    ['a bad first character', '!partner'],
    ['a bad last character', 'partner!'],
    ['two ids joined (the header sent twice)', 'partner-1, partner-2'],
    ['only spaces', '   '],
    ['empty', ''],
  ])('%s is no caller: 401 and nothing stored', async (_label, id) => {
    const before = await rowCount();
    const res = await create({ 'X-Consumer-ID': id });
    expectJsonError(res, 401, 'Missing consumer identity: requests must come through the API gateway');
    expect(await rowCount()).toBe(before);
  });
});

// Spaces around a header value never reach the app: Node's HTTP parser drops them.
describe('X-Consumer-Username in the request log', () => {
  async function loggedConsumer(headers: Record<string, string>): Promise<Record<string, unknown>> {
    const from = service.logs.length;
    await call(`${service.url}/api/v1/jobs?limit=1`, { headers });
    for (let i = 0; i < 50; i++) {
      const line = service.logs.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.msg === 'request');
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('no request line');
  }

  test('as sent', async () => {
    expect(await loggedConsumer({ 'X-Consumer-ID': 'p-1', 'X-Consumer-Username': 'acme-careers' })).toMatchObject({ consumer: 'acme-careers' });
  });

  test('blank: no consumer field', async () => {
    expect(await loggedConsumer({ 'X-Consumer-ID': 'p-1', 'X-Consumer-Username': '  ' })).not.toHaveProperty('consumer');
  });

  test('a username without a valid id is not logged: the caller is unknown', async () => {
    expect(await loggedConsumer({ 'X-Consumer-ID': 'bad id', 'X-Consumer-Username': 'acme-careers' })).not.toHaveProperty('consumer');
  });
});
