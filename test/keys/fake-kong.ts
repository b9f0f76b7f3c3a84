/**
 * Kong's Admin API as nock sees it: every request to ADMIN is recorded (method, path, JSON body,
 * headers) and answered by `answer`, by default `behave`: a small model of Kong 3.9's consumers,
 * ACL groups and key-auth credentials, so that the reads every --apply ends with see what the
 * writes did. A test replaces `answer` to script Kong's 404s, 409s, 5xx, slow answers and dropped
 * connections. Nothing else may leave the machine (disableNetConnect).
 */
import { randomUUID } from 'node:crypto';
import nock from 'nock';
import { forEachTest } from '../helpers/hooked';
import type { Parsed } from '../helpers/parsed';

export const ADMIN = 'http://kong-admin.test:8001';

export interface KongCall {
  method: string;
  path: string;
  body: Parsed;
  headers: Record<string, string | string[] | undefined>;
}

export type Answer = { status: number; body?: unknown; delayMs?: number } | { error: string };

/** What Kong 3.9 answers on success: 201 for POST, 200 for GET/PUT, 204 for DELETE (kong/api/endpoints.lua). */
export function success(call: KongCall): Answer {
  if (call.method === 'POST') return { status: 201, body: call.body };
  if (call.method === 'DELETE') return { status: 204 };
  return { status: 200, body: call.body ?? {} };
}

interface Consumer {
  id: string;
  username: string;
  custom_id?: string;
  tags: string[];
  groups: Map<string, string[]>;
  credentials: Map<string, string>;
}

const NOT_FOUND: Answer = { status: 404, body: { message: 'Not found' } };
const conflict = (what: string): Answer => ({
  status: 409,
  body: { name: 'unique constraint violation', message: `UNIQUE violation detected on '${what}'` },
});

/** Kong 3.9's answers for the requests the keys tool sends, on the consumers in `consumers`. */
function behaviour(consumers: Map<string, Consumer>) {
  const find = (idOrName: string) =>
    consumers.get(idOrName) ?? [...consumers.values()].find((c) => c.username === idOrName);
  const view = (c: Consumer) => ({ id: c.id, username: c.username, custom_id: c.custom_id ?? null, tags: c.tags });
  const list = (data: unknown[]) => ({ status: 200, body: { data, next: null } });
  return (call: KongCall): Answer => {
    const url = new URL(call.path, ADMIN);
    // A path prefix (Kong behind a proxy) is the proxy's, not Kong's.
    const [root, ref, sub, item] = url.pathname
      .replace(/^\/kong-admin\//, '/')
      .split('/')
      .filter(Boolean)
      .map(decodeURIComponent);
    if (root !== 'consumers') return NOT_FOUND;
    if (!ref) {
      if (call.method === 'GET')
        return list(
          [...consumers.values()].filter((c) => c.tags.includes(url.searchParams.get('tags') ?? '')).map(view),
        );
      if (find(call.body.id) || find(call.body.username)) return conflict(`{username="${call.body.username}"}`);
      consumers.set(call.body.id, {
        id: call.body.id,
        username: call.body.username,
        ...(call.body.custom_id ? { custom_id: call.body.custom_id } : {}),
        tags: call.body.tags,
        groups: new Map(),
        credentials: new Map(),
      });
      return { status: 201, body: call.body };
    }
    const c = find(ref);
    if (!sub) {
      if (call.method === 'GET') return c ? { status: 200, body: view(c) } : NOT_FOUND;
      if (call.method === 'DELETE') {
        if (c) consumers.delete(c.id);
        return { status: 204 };
      }
      if (call.method === 'PUT' && c)
        Object.assign(c, { username: call.body.username, custom_id: call.body.custom_id ?? undefined });
      return c ? { status: 200, body: view(c) } : NOT_FOUND;
    }
    if (!c) return NOT_FOUND;
    const table = sub === 'acls' ? c.groups : c.credentials;
    if (call.method === 'GET' && !item) {
      return list(
        sub === 'acls'
          ? [...c.groups.keys()].map((group) => ({ group }))
          : [...c.credentials].map(([id, key]) => ({ id, key })),
      );
    }
    if (call.method === 'PUT' && sub === 'acls' && item) {
      c.groups.set(item, call.body.tags);
      return { status: 200, body: call.body };
    }
    if (call.method === 'POST' && sub === 'key-auth') {
      const taken = [...consumers.values()].some(
        (x) => x.credentials.has(call.body.id) || [...x.credentials.values()].includes(call.body.key),
      );
      if (taken) return conflict(`{key="${call.body.key}"}`);
      c.credentials.set(call.body.id, call.body.key);
      return { status: 201, body: call.body };
    }
    if (call.method === 'DELETE' && item) return table.delete(item) ? { status: 204 } : NOT_FOUND;
    return NOT_FOUND;
  };
}

export interface FakeKong {
  calls: KongCall[];
  answer: (call: KongCall) => Answer;
  /** What the model of Kong answers (the default `answer`), keeping its state. */
  behave: (call: KongCall) => Answer;
  /** Makes the model's partners those of the state files (parsed), each credential with a made-up key: Kong equal to the files. */
  seed(files: { partners: Parsed; keys: Parsed }): void;
  /** method + path of every call, in order. */
  lines(): string[];
  /** method + path of every call that changes Kong (no GET), in order. */
  changes(): string[];
}

export function fakeKong(): FakeKong {
  const consumers = new Map<string, Consumer>();
  const behave = behaviour(consumers);
  const kong: FakeKong = {
    calls: [],
    answer: behave,
    behave,
    seed(files) {
      consumers.clear();
      for (const p of files.partners.consumers ?? []) {
        const k = (files.keys.consumers ?? []).find((x: Parsed) => x.username === p.username);
        consumers.set(p.id, {
          id: p.id,
          username: p.username,
          ...(p.custom_id ? { custom_id: p.custom_id } : {}),
          tags: p.tags,
          groups: new Map(p.acls.map((a: Parsed) => [a.group, ['jobs-partners']])),
          credentials: new Map(
            (k?.keyauth_credentials ?? []).map((c: Parsed) => [c.id, `jl_live_seeded_${randomUUID()}`]),
          ),
        });
      }
    },
    lines: () => kong.calls.map((c) => `${c.method} ${c.path}`),
    changes: () => kong.calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.path}`),
  };
  const scope = nock(ADMIN).persist();
  for (const method of ['get', 'post', 'put', 'delete'] as const) {
    // nock 15 hands the reply function the Fetch Request; a thrown error is the client's network error.
    scope[method](/.*/).reply(async (request: Request) => {
      const url = new URL(request.url);
      const body = await request.text();
      const call: KongCall = {
        method: method.toUpperCase(),
        path: url.pathname + url.search,
        body: body === '' ? undefined : JSON.parse(body),
        headers: Object.fromEntries(request.headers),
      };
      kong.calls.push(call);
      const answer = kong.answer(call);
      if ('error' in answer)
        throw Object.assign(new Error(`connect ${answer.error} 10.0.0.1:8001`), { code: answer.error });
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs).unref());
      return [
        answer.status,
        answer.body === undefined ? '' : JSON.stringify(answer.body),
        { 'Content-Type': 'application/json' },
      ] as const;
    });
  }
  return kong;
}

/** What sends a command's requests to the fake Kong. */
export const APPLY = ['--apply', '--admin-url', ADMIN];

/** A fresh fake Kong for each test of the file (isolateNetwork drops its interceptors after the test). */
export function fakeKongPerTest(): FakeKong {
  return forEachTest('the fake Kong', fakeKong);
}

export function isolateNetwork(): void {
  beforeAll(() => nock.disableNetConnect());
  afterEach(() => nock.cleanAll());
  // restore(): nock patches Node's http for the whole jest worker, so later files in it would get no keep-alive.
  afterAll(() => {
    nock.enableNetConnect();
    nock.restore();
  });
}
