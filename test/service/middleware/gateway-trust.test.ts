/**
 * The identity the service takes from the gateway's headers (service/middleware/gateway-trust.ts): which
 * X-Consumer-ID values count as a caller (creating needs one, a draft is visible to its creator
 * only) and how the username reaches the request log; the gateway secrets it accepts (the current
 * and, during a rotation, the next), and what a refusal leaves for the operator: a warn line at most
 * once a minute per cause, and jobs_gateway_secret_rejections_total.
 */
import Koa from 'koa';
import { createApp } from '../../../service/app';
import { loadConfig } from '../../../service/config';
import { MESSAGES } from '../../../service/errors';
import { createLogger } from '../../../service/logger';
import { createMetrics, type ServiceMetrics } from '../../../service/metrics';
import { trustGateway } from '../../../service/middleware/gateway-trust';
import { requestOutcome } from '../../../service/middleware/request-outcome';
import { json } from '../../helpers/consumers';
import { call, expectJsonError, serve, type Served } from '../../helpers/http';
import { memoryLog, sharedTestService } from '../../helpers/service';

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
    const other = await call(`${service.url}/api/v1/jobs/${res.body.data.id}`, {
      headers: { 'X-Consumer-ID': `${id.slice(0, 63)}2` },
    });
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
      const line = service.logs
        .slice(from)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((e) => e.msg === 'request');
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('no request line');
  }

  test('as sent', async () => {
    expect(await loggedConsumer({ 'X-Consumer-ID': 'p-1', 'X-Consumer-Username': 'acme-careers' })).toMatchObject({
      consumer: 'acme-careers',
    });
  });

  test('blank: no consumer field', async () => {
    expect(await loggedConsumer({ 'X-Consumer-ID': 'p-1', 'X-Consumer-Username': '  ' })).not.toHaveProperty(
      'consumer',
    );
  });

  test('a username without a valid id is not logged: the caller is unknown', async () => {
    expect(
      await loggedConsumer({ 'X-Consumer-ID': 'bad id', 'X-Consumer-Username': 'acme-careers' }),
    ).not.toHaveProperty('consumer');
  });
});

const CURRENT = 'current-gateway-secret-0123456789';
const NEXT = 'next-gateway-secret-9876543210abc';

describe('the gateway secrets accepted: GATEWAY_SECRET, and GATEWAY_SECRET_NEXT during a rotation', () => {
  let served: Served[] = [];
  /** The real app on this file's database, configured from these variables as the service reads them. */
  async function appWith(env: NodeJS.ProcessEnv): Promise<string> {
    const config = loadConfig(env);
    const app = createApp({ db: service.database.db, config, logger: createLogger('silent') });
    const one = await serve(app.callback());
    served.push(one);
    return one.url;
  }
  afterAll(async () => {
    await Promise.all(served.map((s) => s.close()));
    served = [];
  });
  const read = (url: string, secret?: string) =>
    call(`${url}/api/v1/jobs?limit=1`, {
      headers: { 'X-Consumer-ID': 'rotation-check', ...(secret === undefined ? {} : { 'X-Gateway-Secret': secret }) },
    });

  test('both set: a request with either is served; any other, or none, is the 401', async () => {
    const url = await appWith({ GATEWAY_SECRET: CURRENT, GATEWAY_SECRET_NEXT: NEXT });
    expect((await read(url, CURRENT)).status).toBe(200);
    expect((await read(url, NEXT)).status).toBe(200);
    expectJsonError(await read(url, 'neither-of-the-two-secrets'), 401, MESSAGES.notThroughGateway);
    expectJsonError(await read(url, `${CURRENT}${NEXT}`), 401, MESSAGES.notThroughGateway);
    expectJsonError(await read(url), 401, MESSAGES.notThroughGateway);
  });

  test('the rotation done (GATEWAY_SECRET is the new one, no next): the old secret is refused', async () => {
    const url = await appWith({ GATEWAY_SECRET: NEXT });
    expect((await read(url, NEXT)).status).toBe(200);
    expectJsonError(await read(url, CURRENT), 401, MESSAGES.notThroughGateway);
  });
});

describe('a refused secret: a warn line at most once a minute per cause, never the value, and a metric', () => {
  let served: Served;
  let logs: string[];
  let metrics: ServiceMetrics;
  let clock: number;
  beforeEach(async () => {
    logs = [];
    metrics = createMetrics();
    clock = 1_000_000;
    const logger = createLogger('info', memoryLog(logs));
    const app = new Koa();
    app.use(requestOutcome(logger, metrics));
    app.use(trustGateway({ gatewaySecret: CURRENT, gatewaySecretNext: NEXT }, { logger, metrics, now: () => clock }));
    app.use((ctx) => {
      ctx.status = 204;
    });
    served = await serve(app.callback());
  });
  afterEach(() => served.close());

  const send = (secret?: string) =>
    call(`${served.url}/api/v1/jobs`, { headers: secret === undefined ? {} : { 'X-Gateway-Secret': secret } });
  const warnings = () =>
    logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 40);
  async function rejections(): Promise<Record<string, number>> {
    const text = await metrics.registry.metrics();
    const counts: Record<string, number> = {};
    for (const m of text.matchAll(/^jobs_gateway_secret_rejections_total\{reason="(\w+)"\} (\d+)$/gm))
      counts[m[1]!] = Number(m[2]);
    return counts;
  }

  test('before any refusal both causes read 0 on /metrics, so an alert sees the first one', async () => {
    expect(await rejections()).toEqual({ missing: 0, mismatch: 0 });
    expect(await metrics.registry.metrics()).toMatch(/^# TYPE jobs_gateway_secret_rejections_total counter$/m);
  });

  test('each cause logs once within a minute, says which cause, never the value; every refusal counts', async () => {
    for (let i = 0; i < 3; i++) expectJsonError(await send(), 401, MESSAGES.notThroughGateway);
    for (const sent of ['wrong-secret-value-aaaa', 'wrong-secret-value-bbbb'])
      expectJsonError(await send(sent), 401, MESSAGES.notThroughGateway);
    for (const secret of [CURRENT, NEXT])
      expect((await fetch(`${served.url}/api/v1/jobs`, { headers: { 'X-Gateway-Secret': secret } })).status).toBe(204);

    expect(await rejections()).toEqual({ missing: 3, mismatch: 2 });
    const lines = warnings();
    expect(lines.map((line) => line.reason)).toEqual(['missing', 'mismatch']);
    expect(lines[0]).toMatchObject({ path: '/api/v1/jobs', msg: expect.stringMatching(/no X-Gateway-Secret/) });
    expect(lines[1]).toMatchObject({
      path: '/api/v1/jobs',
      msg: expect.stringMatching(/matches no configured secret/),
    });
    expect(logs.join('\n')).not.toMatch(/wrong-secret-value|current-gateway-secret|next-gateway-secret/);
  });

  test("a minute after a cause's line, its next refusal logs again with how many went unlogged meanwhile", async () => {
    await send('wrong-secret-value-aaaa');
    clock += 30_000;
    await send('wrong-secret-value-bbbb');
    await send();
    clock += 29_999;
    await send('wrong-secret-value-cccc');
    expect(warnings().map((line) => line.reason)).toEqual(['mismatch', 'missing']);
    clock += 1;
    await send('wrong-secret-value-dddd');
    expect(warnings().map((line) => [line.reason, line.refusedSinceLastLine])).toEqual([
      ['mismatch', 0],
      ['missing', 0],
      ['mismatch', 2],
    ]);
    expect(await rejections()).toEqual({ missing: 1, mismatch: 4 });
  });
});
