/**
 * Hostile input through the gateway, as partners send it (with a key): the gateway passes
 * Content-Encoding and Idempotency-Key on untouched, so the client gets the service's answer.
 * What each input gets from the service itself is service.test.ts; slow and broken clients on
 * the wire are slow-and-broken-clients.test.ts.
 */
import { gzipSync } from 'node:zlib';
import { call, expectJsonError } from '../helpers/http';
import { jobRowCount } from '../helpers/database';
import { DEMO, gatewayKinds, startStackOn, type Stack } from '../e2e/support';

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

  test('repro: Content-Encoding br on a plain body is the service JSON 415, not a 500, and stores nothing', async () => {
    const before = await jobRowCount(stack.service.database);
    const res = await create(curlBody, { 'Content-Encoding': 'br' });
    expectJsonError(res, 415, 'Unsupported Content-Encoding "br": send the body uncompressed or gzip-compressed');
    expect(await jobRowCount(stack.service.database)).toBe(before);
  });

  test('a gzip-compressed create is stored', async () => {
    const res = await create(gzipSync(curlBody), { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ title: 'a', type: 'contract' });
  });

  test('repro: a retried create with an Idempotency-Key reaches the service and is not stored twice', async () => {
    const before = await jobRowCount(stack.service.database);
    const headers = { 'Idempotency-Key': 'e2e-retry-0001' };
    const first = await create(curlBody, headers);
    const retry = await create(curlBody, headers);
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await jobRowCount(stack.service.database)).toBe(before + 1);
    expect(
      stack.service.received.filter((request) => request.headers['idempotency-key'] === 'e2e-retry-0001'),
    ).toHaveLength(2);
  });
});
