// The keys tool against Kong's Admin API where a real Kong cannot be made to answer as needed
// (nock; nothing leaves the machine): the token header, repeated requests, a path prefix, and what
// the operator is told, and what the files say, when Kong answers 404, 409, 5xx, 401, too slowly,
// or cannot be reached. Every command's success path runs against a real Kong with PostgreSQL
// (test/kong/keys-lifecycle.test.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import { ADMIN, APPLY, fakeKongPerTest, isolateNetwork, success } from './fake-kong';
import { keys, workspacePerTest } from './support';

isolateNetwork();

const ws = workspacePerTest();
const kong = fakeKongPerTest();

/** A partner issued without --apply (no request), then given to the model of Kong as the files have it. */
async function partner(name = 'acme', scope = 'read'): Promise<{ id: string; credentials: string[] }> {
  const r = await keys(ws, ['issue', name, '--scope', scope]);
  expect(r.code).toBe(0);
  expect(kong.calls).toEqual([]);
  kong.seed(ws.state());
  const c = ws.state().keys.consumers.find((x: { username: string }) => x.username === name);
  return { id: c.id, credentials: c.keyauth_credentials.map((k: { id: string }) => k.id) };
}

describe('the requests of each command', () => {
  test('disable --apply is one request first, PUT /consumers/{id}/acls/disabled, then only reads when Kong equals the files; enable is one DELETE; the token can come from KONG_ADMIN_TOKEN', async () => {
    const { id } = await partner();
    const env = { KONG_ADMIN_TOKEN: 'from-env' };
    expect((await keys(ws, ['disable', 'acme', ...APPLY], env)).code).toBe(0);
    const read = [
      `GET /consumers/${id}`,
      `GET /consumers/${id}/acls?size=1000`,
      `GET /consumers/${id}/key-auth?size=1000`,
    ];
    expect(kong.calls[0]).toMatchObject({
      method: 'PUT',
      path: `/consumers/${id}/acls/disabled`,
      body: { group: 'disabled', tags: ['jobs-partners'] },
    });
    expect(kong.lines()).toEqual([`PUT /consumers/${id}/acls/disabled`, ...read]);
    expect(kong.calls.map((c) => c.headers['kong-admin-token'])).toEqual([
      'from-env',
      'from-env',
      'from-env',
      'from-env',
    ]);
    kong.calls = [];
    expect((await keys(ws, ['enable', 'acme', ...APPLY])).code).toBe(0);
    expect(kong.lines()).toEqual([`DELETE /consumers/${id}/acls/disabled`, ...read]);
    expect(kong.calls[0]?.headers['kong-admin-token']).toBeUndefined();
  });

  test('repeating disable --apply still asks Kong (a file that says "disabled" must not stop the request that makes it so)', async () => {
    const { id } = await partner();
    await keys(ws, ['disable', 'acme']);
    const r = await keys(ws, ['disable', 'acme', ...APPLY]);
    expect(r.code).toBe(0);
    expect(kong.changes()).toEqual([`PUT /consumers/${id}/acls/disabled`]);
  });

  test('without --apply nothing is sent; list never talks to Kong', async () => {
    await partner();
    for (const args of [['scope', 'acme', 'write'], ['disable', 'acme'], ['rotate', 'acme'], ['list']])
      expect((await keys(ws, args)).code).toBe(0);
    expect(kong.calls).toEqual([]);
  });

  test('a path prefix in --admin-url is kept (Kong behind a proxy)', async () => {
    const { id } = await partner();
    expect((await keys(ws, ['disable', 'acme', '--apply', '--admin-url', `${ADMIN}/kong-admin/`])).code).toBe(0);
    expect(kong.lines()[0]).toBe(`PUT /kong-admin/consumers/${id}/acls/disabled`);
    expect(kong.lines().every((l) => l.includes(' /kong-admin/consumers/'))).toBe(true);
  });
});

describe("Kong's errors", () => {
  test('404 on disable: the consumer is looked up, the message says Kong has no such consumer, nothing is written', async () => {
    const { id } = await partner();
    const before = ws.read();
    kong.answer = (call) =>
      call.method === 'PUT' || call.method === 'GET' ? { status: 404, body: { message: 'Not found' } } : success(call);
    const r = await keys(ws, ['disable', 'acme', ...APPLY]);
    expect(r.code).toBe(1);
    expect(kong.lines()).toEqual([`PUT /consumers/${id}/acls/disabled`, `GET /consumers/${id}`]);
    expect(r.err).toContain(
      `Kong at ${ADMIN} has no consumer acme (${id}): is --admin-url the right Kong, and has partners.yaml been synced to it?`,
    );
    expect(r.err).toContain(`failed          PUT /consumers/${id}/acls/disabled  (add group disabled to acme)`);
    expect(r.err).toContain('nothing was written');
    expect(ws.read()).toEqual(before);
  });

  test('404 on enable or revoke while the consumer exists: the group or key is already gone, which is what was asked; the files follow', async () => {
    const {
      id,
      credentials: [first],
    } = await partner();
    await keys(ws, ['disable', 'acme']);
    // Kong lost the group and the key before the commands ran: the model drops them, and answers 404 to their DELETEs.
    kong.answer = (call) =>
      call.method === 'DELETE' ? { status: 404, body: { message: 'Not found' } } : kong.behave(call);
    const enable = await keys(ws, ['enable', 'acme', ...APPLY]);
    expect(enable.code).toBe(0);
    expect(enable.err).toContain('already so');
    expect(ws.state().partners.consumers[0].acls).toEqual([{ group: 'jobs:read' }]);
    kong.behave({ method: 'DELETE', path: `/consumers/${id}/key-auth/${first}`, body: undefined, headers: {} });
    const revoke = await keys(ws, ['revoke', 'acme', '--credential', first as string, ...APPLY]);
    expect(revoke.code).toBe(0);
    expect(ws.state().keys.consumers[0].keyauth_credentials).toEqual([]);
    expect(kong.changes()).toEqual([
      `DELETE /consumers/${id}/acls/disabled`,
      `DELETE /consumers/${id}/key-auth/${first}`,
    ]);
    expect(revoke.err).toContain('Kong matches the files for acme.');
  });

  test("409 on issue's consumer: Kong's message, no further request, nothing to undo, no key printed, nothing written", async () => {
    const before = ws.read();
    kong.answer = (call) =>
      call.path === '/consumers'
        ? {
            status: 409,
            body: {
              code: 5,
              name: 'unique constraint violation',
              message: 'UNIQUE violation detected on \'{username="acme"}\'',
            },
          }
        : success(call);
    const r = await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(kong.lines()).toEqual(['POST /consumers']);
    expect(r.err).toContain(
      'Kong answered 409 Conflict to POST /consumers on http://kong-admin.test:8001: UNIQUE violation detected on \'{username="acme"}\'',
    );
    expect(r.err).toMatch(/not attempted\s+PUT \/consumers\/.*\/acls\/jobs%3Aread/);
    expect(ws.read()).toEqual(before);
  });

  test('409 on the key: the half-made consumer is deleted again, the key Kong echoes is never shown, nothing is written', async () => {
    const before = ws.read();
    kong.answer = (call) =>
      call.path.endsWith('/key-auth')
        ? { status: 409, body: { message: `UNIQUE violation detected on '{key="${call.body.key}"}'` } }
        : success(call);
    const r = await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY]);
    expect(r.code).toBe(1);
    const key = kong.calls[2]?.body.key as string;
    expect(key).toMatch(/^jl_live_/);
    expect(r.out + r.err).not.toContain(key);
    expect(r.err).toContain(`UNIQUE violation detected on '{key="[key]"}'`);
    const id = kong.calls[0]?.body.id as string;
    expect(kong.lines()).toEqual([
      'POST /consumers',
      `PUT /consumers/${id}/acls/jobs%3Aread`,
      `POST /consumers/${id}/key-auth`,
      `DELETE /consumers/${id}`,
    ]);
    expect(r.err).toMatch(/done\s+POST \/consumers\s/);
    expect(r.err).toMatch(/failed\s+POST \/consumers\/.*\/key-auth/);
    expect(r.err).toMatch(/rolled back\s+DELETE \/consumers\//);
    expect(ws.read()).toEqual(before);
  });

  test('5xx half way through issue: the rest is not attempted and the consumer is deleted again; nothing is written', async () => {
    const before = ws.read();
    kong.answer = (call) =>
      call.method === 'PUT' ? { status: 503, body: { message: 'An unexpected error occurred' } } : success(call);
    const r = await keys(ws, ['issue', 'acme', '--scope', 'write', ...APPLY]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    const id = kong.calls[0]?.body.id as string;
    expect(kong.lines()).toEqual([
      'POST /consumers',
      `PUT /consumers/${id}/acls/jobs%3Aread`,
      `DELETE /consumers/${id}`,
    ]);
    expect(r.err).toContain(
      `Kong failed with 503 on PUT /consumers/${id}/acls/jobs%3Aread on ${ADMIN}: An unexpected error occurred; it may or may not have made the change`,
    );
    expect(r.err).toMatch(/not attempted\s+PUT \/consumers\/.*\/acls\/jobs%3Awrite/);
    expect(r.err).toMatch(/not attempted\s+POST \/consumers\/.*\/key-auth/);
    expect(r.err).toMatch(/rolled back\s+DELETE \/consumers\//);
    expect(ws.read()).toEqual(before);
  });

  test('an undo that fails too is reported as such, so the operator knows Kong still has the half-made consumer', async () => {
    const before = ws.read();
    kong.answer = (call) =>
      call.path === '/consumers' ? success(call) : { status: 500, body: { message: 'An unexpected error occurred' } };
    const r = await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY]);
    expect(r.code).toBe(1);
    const id = kong.calls[0]?.body.id as string;
    expect(kong.lines()).toEqual([
      'POST /consumers',
      `PUT /consumers/${id}/acls/jobs%3Aread`,
      `DELETE /consumers/${id}`,
    ]);
    expect(r.err).toMatch(new RegExp(`rollback failed\\s+DELETE /consumers/${id}`));
    expect(ws.read()).toEqual(before);
  });

  test('401 (an Admin API behind RBAC or a proxy): the message points at --admin-token', async () => {
    await partner();
    kong.answer = () => ({ status: 401, body: { message: 'Invalid credentials. Token or User credentials required' } });
    const r = await keys(ws, ['disable', 'acme', ...APPLY, '--admin-token', 'wrong']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('Kong refused PUT');
    expect(r.err).toContain('check --admin-token');
  });

  test('a slow Kong: --timeout (or KONG_ADMIN_TIMEOUT_MS) ends the wait with a clear message; nothing is written', async () => {
    const { id } = await partner();
    const before = ws.read();
    kong.answer = (call) => ({ ...success(call), delayMs: 3000 });
    const started = Date.now();
    const r = await keys(ws, ['disable', 'acme', ...APPLY, '--timeout', '150']);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `Kong did not answer PUT /consumers/${id}/acls/disabled on ${ADMIN} within 150 ms (--timeout); it may or may not have made the change`,
    );
    expect(ws.read()).toEqual(before);
    const fromEnv = await keys(ws, ['disable', 'acme', ...APPLY], { KONG_ADMIN_TIMEOUT_MS: '120' });
    expect(fromEnv.err).toContain('within 120 ms');
  });

  test('an unreachable Kong (connection refused) is named with --admin-url; nothing is written', async () => {
    await partner();
    const before = ws.read();
    kong.answer = () => ({ error: 'ECONNREFUSED' });
    const r = await keys(ws, ['scope', 'acme', 'write', ...APPLY]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `cannot reach Kong's Admin API at ${ADMIN} (ECONNREFUSED): check --admin-url and that Kong is running`,
    );
    expect(ws.read()).toEqual(before);
  });

  test('a real closed port on this machine gives the same message', async () => {
    await partner();
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    nock.enableNetConnect('127.0.0.1');
    try {
      const r = await keys(ws, ['disable', 'acme', '--apply', '--admin-url', `http://127.0.0.1:${port}`]);
      expect(r.code).toBe(1);
      expect(r.err).toContain(`cannot reach Kong's Admin API at http://127.0.0.1:${port} (ECONNREFUSED)`);
    } finally {
      nock.disableNetConnect();
    }
  });

  test('rotate --revoke-old failing half way: the files keep exactly the credentials Kong still has, and the command fails', async () => {
    const {
      id,
      credentials: [first],
    } = await partner();
    await keys(ws, ['rotate', 'acme']);
    await keys(ws, ['rotate', 'acme']);
    const [, second, third] = ws.state().keys.consumers[0].keyauth_credentials.map((c: { id: string }) => c.id);
    kong.answer = (call) =>
      call.path.endsWith(second) ? { status: 502, body: { message: 'Bad Gateway' } } : success(call);
    const r = await keys(ws, ['rotate', 'acme', '--revoke-old', ...APPLY]);
    expect(r.code).toBe(1);
    expect(kong.lines()).toEqual([
      `DELETE /consumers/${id}/key-auth/${first}`,
      `DELETE /consumers/${id}/key-auth/${second}`,
    ]);
    expect(ws.state().keys.consumers[0].keyauth_credentials.map((c: { id: string }) => c.id)).toEqual([second, third]);
    expect(r.err).toContain('the files now list exactly the keys Kong still has');
  });

  test('a bad file, or a bad command line, sends nothing to Kong', async () => {
    await partner();
    ws.write('partners', ws.read().partners.replace('group: jobs:read', 'group: root'));
    expect((await keys(ws, ['disable', 'acme', ...APPLY])).code).toBe(1);
    const usage: string[][] = [
      ['disable', 'acme', '--apply'],
      ['disable', 'acme', '--admin-url', ADMIN],
      ['disable', 'acme', ...APPLY, '--timeout', 'soon'],
      ['disable', 'acme', '--apply', '--admin-url', 'kong:8001'],
      ['disable', 'acme', ...APPLY, '--force'],
    ];
    for (const args of usage) expect((await keys(ws, args)).code).toBe(2);
    expect(kong.calls).toEqual([]);
  });
});
