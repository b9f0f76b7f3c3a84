import { gzipSync } from 'node:zlib';
import { call } from '../helpers/http';
import { DEMO, gatewayKinds, startStackOn, type Stack } from './support';

// Issue 11's repros as partners send them: through the gateway, with a key. The gateway forwards
// Content-Encoding and Idempotency-Key untouched (Kong 3.9.1: kong/templates/nginx_kong.lua only
// sets its own proxy headers; key-auth and job-scopes clear key and identity headers only).

describe.each(gatewayKinds())('through the %s', (kind) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'e2e_hostile', { seed: false });
  });
  afterAll(() => stack.close());

  const create = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
    call(`${stack.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json', ...headers },
      body,
    });

  const curlBody = '{"title":"a","department":"d","type":"contract","description":"x"}';

  async function jobCount(): Promise<number> {
    const [row] = await stack.service.database.query<Array<{ n: number }>>('select count(*) as n from jobs');
    return Number(row!.n);
  }

  test('repro: Content-Encoding br on a plain body is a JSON 415, not a 500', async () => {
    const res = await create(curlBody, { 'Content-Encoding': 'br' });
    expect(res.status).toBe(415);
    expect(res.body.error).toMatch(/^Unsupported Content-Encoding "br"/);
    expect(await jobCount()).toBe(0);
  });

  test('a gzip-compressed create works through the gateway', async () => {
    const res = await create(gzipSync(curlBody), { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ title: 'a', type: 'contract' });
  });

  test('repro: a retried create with an Idempotency-Key reaches the service and is not stored twice', async () => {
    const before = await jobCount();
    const headers = { 'Idempotency-Key': 'e2e-retry-0001' };
    const first = await create(curlBody, headers);
    const retry = await create(curlBody, headers);
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await jobCount()).toBe(before + 1);
    expect(
      stack.service.received.filter((request) => request.headers['idempotency-key'] === 'e2e-retry-0001'),
    ).toHaveLength(2);
  });
});
