/**
 * Every row of gateway/spec/auth-cases.json (the table the auth-guard -> key-auth -> job-scopes
 * chain is specified by) through each gateway in front of the real service: the answer, the
 * route and consumer the gateway settled on, and what reached the service. Each case comes from
 * its own client address (127.x.y.z), so auth-guard's per-IP counters start empty for it, as the
 * table assumes; `failedAttemptsBefore` first makes that many no-key requests from that address.
 *
 * Route and consumer: the local gateway's request log line names them; Kong's access log format
 * does not, so the real Kong also runs Kong's file-log plugin (log phase only, nothing else
 * changes) and the case reads its line for the request id.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, logLineFor, send } from '../local-gateway/support';
import { gatewayKinds, startStackOn, type LocalStack, type Stack } from './support';

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

/** The query the service received, with repeated names as lists (as the table writes them). */
function receivedQuery(url: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URL(url, 'http://upstream').searchParams) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

const rawQueryOf = (url: string) => (url.includes('?') ? url.slice(url.indexOf('?') + 1) : null);

/** One loopback address per case: 127.1.<i / 250>.<i % 250 + 1>. */
const clientAddress = (i: number) => `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;

/** auth-guard counts per clock minute: start a case with prior failures early enough to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 55) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

test('the table has cases for every outcome, auth-guard included, and names the state files every gateway serves', () => {
  expect([...new Set(spec.cases.map((c) => c.expect.status))].sort()).toEqual([200, 401, 403, 429]);
  expect(spec.stateFiles).toEqual(['kong.yaml', 'demo.yaml']);
});

describe.each(gatewayKinds())('through the %s', (kind) => {
  const fileLog = path.join(os.tmpdir(), `auth-cases-${process.pid}-${kind.replace(/\W/g, '')}.log`);
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'e2e_auth_cases', {
      seed: false,
      secret: spec.gatewaySecret,
      edit: (state) => {
        if (kind === 'real Kong') state.plugins.push({ name: 'file-log', config: { path: fileLog } });
      },
    });
  });
  afterAll(async () => {
    await stack.close();
    rmSync(fileLog, { force: true });
  });

  /** [route, consumer] the gateway logged for the response with this request id. */
  async function settledOn(requestId: string): Promise<[string | null | undefined, string | null | undefined]> {
    if (stack.kind === 'local gateway') {
      const line = await logLineFor((stack as LocalStack).gateway, requestId);
      return [line?.route, line?.consumer];
    }
    for (let i = 0; i < 100; i++) {
      // Complete lines only: Kong may be halfway through writing the last one.
      const lines = existsSync(fileLog)
        ? readFileSync(fileLog, 'utf8')
            .split('\n')
            .slice(0, -1)
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [];
      const line = lines.find((l) => l.request?.id === requestId);
      if (line) return [line.route?.name ?? null, line.consumer?.username ?? null];
      await new Promise((r) => setTimeout(r, 20));
    }
    return [undefined, undefined];
  }

  test.each(spec.cases.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const localAddress = clientAddress(i);
    if (c.failedAttemptsBefore) {
      await awayFromMinuteEnd();
      for (let n = 0; n < c.failedAttemptsBefore; n++) {
        expect((await send(stack.url, { path: '/api/v1/jobs', localAddress })).status).toBe(401);
      }
    }
    const before = stack.service.received.length;
    const res = await send(stack.url, {
      method: c.request.method,
      path: c.request.path,
      ...(c.request.rawQuery !== undefined ? { rawQuery: c.request.rawQuery } : { query: c.request.query }),
      headers: c.request.headers,
      localAddress,
    });

    expect(await settledOn(res.headers['x-kong-request-id'] as string)).toEqual([c.route, c.consumer]);
    const arrived = stack.service.received.slice(before);
    // The gateway's own headers (rate limits, Retry-After), whoever answered.
    for (const [name, value] of Object.entries(c.expect.headers ?? {})) {
      expect([name, res.headers[name.toLowerCase()]]).toEqual([name, value]);
    }
    for (const [name, [min, max]] of Object.entries(c.expect.headerRanges ?? {})) {
      const value = Number(res.headers[name.toLowerCase()]);
      expect([name, Number.isInteger(value) && value >= min && value <= max]).toEqual([name, true]);
    }
    if (c.expect.status !== 200) {
      expect(res.status).toBe(c.expect.status);
      expect(arrived).toHaveLength(0);
      if (c.expect.body !== undefined) expect(res.json).toEqual(c.expect.body);
      return;
    }

    // Forwarded: the real service answers as it will (200, 404 for an unknown id, 405, 400).
    expect(arrived).toHaveLength(1);
    const got = arrived[0]!;
    expect(got.method).toBe(c.request.method);
    expect(new URL(got.url, 'http://upstream').pathname).toBe(c.request.path);
    const up = c.expect.upstream;
    if (!up) return;
    for (const [name, value] of Object.entries(up.headers))
      expect([name, got.headers[name.toLowerCase()]]).toEqual([name, value]);
    for (const name of up.absentHeaders) expect([name, got.headers[name.toLowerCase()]]).toEqual([name, undefined]);
    expect(receivedQuery(got.url)).toEqual(up.query);
    if (up.rawQuery !== undefined) expect(rawQueryOf(got.url)).toBe(up.rawQuery);
  });
});
