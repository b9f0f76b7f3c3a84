/**
 * Every row of gateway/spec/auth-cases.json (the table Kong's job-scopes plugin is specified by)
 * against the local gateway, in front of a stub upstream that records what reaches it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, gatewayOverStub, logLineFor, send } from './support';

interface AuthCase {
  name: string;
  route: string;
  request: { method: string; path: string; headers: Record<string, string | string[]>; query: Record<string, string | string[]> };
  consumer: string;
  expect: {
    status: number;
    body?: unknown;
    headers?: Record<string, string>;
    upstream?: { headers: Record<string, string>; absentHeaders: string[]; query: Record<string, string | string[]> };
  };
}

const spec = JSON.parse(readFileSync(path.join(ROOT, 'gateway/spec/auth-cases.json'), 'utf8')) as {
  gatewaySecret: string;
  cases: AuthCase[];
};

/** The query the upstream received, with repeated names as lists (as the table writes them). */
function receivedQuery(url: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URL(url, 'http://upstream').searchParams) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

const stack = gatewayOverStub({ secret: spec.gatewaySecret });

test('the table has cases for every outcome', () => {
  const statuses = new Set(spec.cases.map((c) => c.expect.status));
  expect([...statuses].sort()).toEqual([200, 401, 403]);
});

describe.each(spec.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
  test(`${c.request.method} ${c.request.path} -> ${c.expect.status}`, async () => {
    const before = stack.upstream.received.length;
    const res = await send(stack.gateway.url, {
      method: c.request.method,
      path: c.request.path,
      query: c.request.query,
      headers: c.request.headers,
    });

    expect(res.status).toBe(c.expect.status);
    const line = await logLineFor(stack.gateway, res.headers['x-kong-request-id'] as string);
    expect(line?.route).toBe(c.route);
    expect(line?.consumer).toBe(c.consumer);
    for (const [name, value] of Object.entries(c.expect.headers ?? {})) {
      expect(res.headers[name.toLowerCase()]).toBe(value);
    }

    const arrived = stack.upstream.received.slice(before);
    if (c.expect.status !== 200) {
      expect(arrived).toHaveLength(0);
      if (c.expect.body !== undefined) expect(res.json).toEqual(c.expect.body);
      return;
    }

    expect(arrived).toHaveLength(1);
    const got = arrived[0]!;
    expect(got.method).toBe(c.request.method);
    expect(new URL(got.url, 'http://upstream').pathname).toBe(c.request.path);
    const up = c.expect.upstream;
    if (!up) return;
    for (const [name, value] of Object.entries(up.headers)) {
      expect([name, got.headers[name.toLowerCase()]]).toEqual([name, value]);
    }
    for (const name of up.absentHeaders) {
      expect([name, got.headers[name.toLowerCase()]]).toEqual([name, undefined]);
    }
    expect(receivedQuery(got.url)).toEqual(up.query);
  });
});
