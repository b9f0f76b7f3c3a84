/**
 * Every row of gateway/spec/auth-cases.json (the table Kong's auth-guard, key-auth and job-scopes
 * chain is specified by, also run by busted) against the local gateway serving the state files
 * the table names, in front of a stub upstream that records what reaches it. Each case comes from
 * its own client address (127.x.y.z), so auth-guard's per-IP counters start empty for it, as the
 * table assumes; `failedAttemptsBefore` first makes that many no-key requests from that address.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, gatewayEnv, logLineFor, send, startGateway, stateFileCopies, stubUpstream, type StubUpstream, type TestGateway } from './support';

interface AuthCase {
  name: string;
  route: string;
  request: {
    method: string;
    path: string;
    headers: Record<string, string | string[]>;
    query: Record<string, string | string[]>;
    rawQuery?: string;
  };
  failedAttemptsBefore?: number;
  consumer: string | null;
  expect: {
    status: number;
    body?: unknown;
    headers?: Record<string, string>;
    headerRanges?: Record<string, [number, number]>;
    upstream?: {
      headers: Record<string, string>;
      absentHeaders: string[];
      query: Record<string, string | string[]>;
      rawQuery?: string;
    };
  };
}

const spec = JSON.parse(readFileSync(path.join(ROOT, 'gateway/spec/auth-cases.json'), 'utf8')) as {
  gatewaySecret: string;
  stateFiles: string[];
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

function rawQueryOf(url: string): string | null {
  const q = url.indexOf('?');
  return q === -1 ? null : url.slice(q + 1);
}

/** One loopback address per case: 127.1.<i / 250>.<i % 250 + 1>. */
function clientAddress(i: number): string {
  return `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

/** auth-guard counts per clock minute: start a case with prior failures early enough to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 55) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

let upstream: StubUpstream;
let files: { paths: string[]; remove(): void };
let gateway: TestGateway;
beforeAll(async () => {
  upstream = await stubUpstream();
  files = stateFileCopies(upstream.port, spec.stateFiles);
  gateway = await startGateway(files.paths, gatewayEnv(spec.gatewaySecret));
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
  files.remove();
});

test('the table has cases for every outcome, auth-guard included', () => {
  const statuses = new Set(spec.cases.map((c) => c.expect.status));
  expect([...statuses].sort()).toEqual([200, 401, 403, 429]);
});

describe.each(spec.cases.map((c, i) => [c.name, c, i] as const))('%s', (_name, c, i) => {
  test(`${c.request.method} ${c.request.path} -> ${c.expect.status}`, async () => {
    const localAddress = clientAddress(i);
    if (c.failedAttemptsBefore) {
      await awayFromMinuteEnd();
      for (let n = 0; n < c.failedAttemptsBefore; n++) {
        const failed = await send(gateway.url, { path: '/api/v1/jobs', localAddress });
        expect(failed.status).toBe(401);
      }
    }
    const before = upstream.received.length;
    const res = await send(gateway.url, {
      method: c.request.method,
      path: c.request.path,
      ...(c.request.rawQuery !== undefined ? { rawQuery: c.request.rawQuery } : { query: c.request.query }),
      headers: c.request.headers,
      localAddress,
    });

    expect(res.status).toBe(c.expect.status);
    const line = await logLineFor(gateway, res.headers['x-kong-request-id'] as string);
    expect(line?.route).toBe(c.route);
    expect(line?.consumer).toBe(c.consumer);
    for (const [name, value] of Object.entries(c.expect.headers ?? {})) {
      expect([name, res.headers[name.toLowerCase()]]).toEqual([name, value]);
    }
    for (const [name, [min, max]] of Object.entries(c.expect.headerRanges ?? {})) {
      const value = Number(res.headers[name.toLowerCase()]);
      expect([name, Number.isInteger(value) && value >= min && value <= max]).toEqual([name, true]);
    }

    const arrived = upstream.received.slice(before);
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
    if (up.rawQuery !== undefined) expect(rawQueryOf(got.url)).toBe(up.rawQuery);
  });
});
