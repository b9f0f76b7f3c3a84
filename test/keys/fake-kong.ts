/**
 * Kong's Admin API as nock sees it: every request to ADMIN is recorded (method, path, JSON body,
 * headers) and answered by `answer`, which a test replaces to script Kong's 404s, 409s, 5xx,
 * slow answers and dropped connections. Nothing else may leave the machine (disableNetConnect).
 */
import nock from 'nock';
import { forEachTest } from '../helpers/hooked';

export const ADMIN = 'http://kong-admin.test:8001';

export interface KongCall {
  method: string;
  path: string;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

export type Answer =
  | { status: number; body?: unknown; delayMs?: number }
  | { error: string };

/** What Kong 3.9 answers on success: 201 for POST, 200 for GET/PUT, 204 for DELETE (kong/api/endpoints.lua). */
export function success(call: KongCall): Answer {
  if (call.method === 'POST') return { status: 201, body: call.body };
  if (call.method === 'DELETE') return { status: 204 };
  return { status: 200, body: call.body ?? {} };
}

export interface FakeKong {
  calls: KongCall[];
  answer: (call: KongCall) => Answer;
  /** method + path of every call, in order. */
  lines(): string[];
}

export function fakeKong(): FakeKong {
  const kong: FakeKong = {
    calls: [],
    answer: success,
    lines: () => kong.calls.map((c) => `${c.method} ${c.path}`),
  };
  const scope = nock(ADMIN).persist();
  for (const method of ['get', 'post', 'put', 'delete'] as const) {
    scope[method](/.*/).reply(function (this: { req: { headers: Record<string, string> } }, uri, body, callback) {
      const call: KongCall = {
        method: method.toUpperCase(),
        path: uri,
        body: body === '' || body === undefined ? undefined : typeof body === 'string' ? JSON.parse(body) : body,
        headers: { ...this.req.headers },
      };
      kong.calls.push(call);
      const answer = kong.answer(call);
      if ('error' in answer) {
        const err = Object.assign(new Error(`connect ${answer.error} 10.0.0.1:8001`), { code: answer.error });
        callback(err, [0, '']);
        return;
      }
      const respond = () => callback(null, [answer.status, answer.body === undefined ? '' : JSON.stringify(answer.body), { 'Content-Type': 'application/json' }]);
      if (answer.delayMs) setTimeout(respond, answer.delayMs).unref();
      else respond();
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
