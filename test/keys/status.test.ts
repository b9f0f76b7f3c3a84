// keys status and the hints the tool prints, against the model of Kong (nock): exit codes for cron
// and CI, the operator's own flags in every suggested command (never the token), and revoke --all
// without --apply. Every drift path on a real Kong: test/kong/keys-drift.test.ts.
import { ADMIN, APPLY, fakeKongPerTest, isolateNetwork } from './fake-kong';
import { keys, printedKey, workspacePerTest } from './support';
import type { Parsed } from '../helpers/parsed';

isolateNetwork();
const ws = workspacePerTest();
const kong = fakeKongPerTest();

test('status: 0 when Kong equals the files, 3 on a difference, 1 when Kong cannot be read, 2 without a URL; KONG_ADMIN_URL serves too', async () => {
  const { key } = printedKey(await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY]));
  const equal = await keys(ws, ['status', '--admin-url', ADMIN]);
  expect(equal.code).toBe(0);
  expect(equal.out).toMatch(
    /^acme: Kong matches the files \(read, active; keys [0-9a-f-]{36} \(sha256:[0-9a-f]{8}\)\)$/,
  );
  expect((await keys(ws, ['status'], { KONG_ADMIN_URL: ADMIN })).code).toBe(0);

  await keys(ws, ['disable', 'acme']);
  const drift = await keys(ws, ['status', '--admin-url', ADMIN]);
  expect(drift.code).toBe(3);
  expect(drift.out).toContain('live: acme is disabled in partners.yaml but NOT in Kong: its keys get through');
  expect(drift.out + drift.err).not.toContain(key);
  expect(kong.changes()).toEqual(['POST /consumers', expect.any(String), expect.any(String)]);

  kong.answer = () => ({ error: 'ECONNREFUSED' });
  expect((await keys(ws, ['status', '--admin-url', ADMIN])).code).toBe(1);
  expect((await keys(ws, ['status'])).code).toBe(2);
});

test("a credential Kong holds under the files' id but with another key: status names both by fingerprint, and reconcile puts the files' key back", async () => {
  const { variable, key } = printedKey(await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY]));
  // Kong keeps the credential's id, with a key nobody issued (seed: a made-up key for every id).
  kong.seed(ws.state());
  const env = { [variable]: key };
  // Without the key in the environment the tool cannot compare, and says nothing it cannot know.
  expect((await keys(ws, ['status', '--admin-url', ADMIN])).code).toBe(0);
  const drift = await keys(ws, ['status', '--admin-url', ADMIN], env);
  expect(drift.code).toBe(3);
  expect(drift.out).toMatch(
    new RegExp(
      `live: credential [0-9a-f-]{36} \\(sha256:[0-9a-f]{8}\\) of acme gets through Kong, but ${variable} holds another key \\(sha256:[0-9a-f]{8}\\): that one gets 401`,
    ),
  );
  expect(drift.out + drift.err).not.toContain(key);
  expect((await keys(ws, ['reconcile', 'acme', ...APPLY], env)).code).toBe(0);
  expect(kong.changes().slice(-2)).toEqual([
    expect.stringMatching(/^DELETE \/consumers\/.+\/key-auth\//),
    expect.stringMatching(/^POST \/consumers\/.+\/key-auth/),
  ]);
  expect((await keys(ws, ['status', '--admin-url', ADMIN], env)).code).toBe(0);
});

test("Kong's consumer under another id, another name, or with a group the files do not give: status names each, and reconcile makes Kong the files again", async () => {
  const { variable, key } = printedKey(await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY]));
  const env = { [variable]: key };
  const files = ws.state();
  const acme = files.partners.consumers[0];
  const drifted = (change: (consumer: Parsed) => void) => {
    const copy = structuredClone(files);
    change(copy.partners.consumers[0]);
    kong.seed(copy);
  };
  const repaired = async () => {
    expect((await keys(ws, ['reconcile', 'acme', ...APPLY], env)).code).toBe(0);
    expect((await keys(ws, ['status', '--admin-url', ADMIN], env)).code).toBe(0);
  };

  drifted((c) => c.acls.push({ group: 'jobs:write', tags: c.tags }));
  let drift = await keys(ws, ['status', '--admin-url', ADMIN]);
  expect(drift.code).toBe(3);
  expect(drift.out).toContain('live: acme has group jobs:write in Kong; partners.yaml does not give it');
  await repaired();

  drifted((c) => (c.username = 'acme-renamed'));
  drift = await keys(ws, ['status', '--admin-url', ADMIN]);
  expect(drift.code).toBe(3);
  expect(drift.out).toContain(
    `live: Kong's consumer ${acme.id} is acme-renamed (custom_id ${acme.custom_id ?? 'none'}), the files say acme`,
  );
  await repaired();

  const other = '00000000-0000-4000-8000-000000000001';
  drifted((c) => (c.id = other));
  drift = await keys(ws, ['status', '--admin-url', ADMIN]);
  expect(drift.code).toBe(3);
  expect(drift.out).toContain(`live: Kong's consumer acme has id ${other}, the files say ${acme.id}`);
  await repaired();
  expect(kong.changes()).toContain(`DELETE /consumers/${other}`);
});

test("every suggested command carries the operator's --admin-url, --timeout and files, and never the token", async () => {
  await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY]);
  await keys(ws, ['scope', 'acme', 'write']);
  const flags = [
    '--admin-url',
    ADMIN,
    '--timeout',
    '900',
    '--admin-token',
    'sekrit-token',
    '--file',
    ws.partners,
    '--keys-file',
    ws.keys,
  ];
  const drift = await keys(ws, ['status', ...flags]);
  expect(drift.code).toBe(3);
  expect(drift.out).toContain(
    `run:  keys reconcile acme --apply --admin-url ${ADMIN} --timeout 900 --file ${ws.partners} --keys-file ${ws.keys}   (add group jobs:write to acme)`,
  );
  const rotated = await keys(ws, ['rotate', 'acme', '--apply', ...flags]);
  expect(rotated.err).toContain(
    `keys rotate acme --revoke-old --apply --admin-url ${ADMIN} --timeout 900 --file ${ws.partners} --keys-file ${ws.keys}`,
  );
  expect(rotated.err).toContain('Kong differed from the files for acme');
  expect(drift.out + drift.err + rotated.err).not.toContain('sekrit-token');
  expect((await keys(ws, ['status', ...flags])).code).toBe(0);
});

test('revoke --all without --apply: the files drop every key, in one line NOT in effect, Kong untouched', async () => {
  const first = printedKey(await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY])).variable;
  const second = printedKey(await keys(ws, ['rotate', 'acme', ...APPLY])).variable;
  kong.calls = [];
  const r = await keys(ws, ['revoke', 'acme', '--all']);
  expect(r.code).toBe(0);
  expect(kong.calls).toEqual([]);
  expect(ws.state().keys.consumers[0].keyauth_credentials).toEqual([]);
  expect(r.err).toContain(
    `revoked every key of acme: Kong not asked, 2 in partner-keys.yaml. Remove ${first}, ${second} from the secret manager.`,
  );
  expect(r.err.split('\n').filter((l) => /NOT in effect/.test(l))).toEqual([
    'NOT in effect: Kong does not have this change; keys reconcile acme --apply --admin-url URL makes it so now (or the next sync of partner-keys.yaml).',
  ]);
  expect((await keys(ws, ['status', '--admin-url', ADMIN])).code).toBe(3);
  expect((await keys(ws, ['reconcile', 'acme', ...APPLY])).code).toBe(0);
  expect((await keys(ws, ['status', '--admin-url', ADMIN])).code).toBe(0);
  expect((await keys(ws, ['revoke', 'acme', '--all', '--credential', 'x'])).code).toBe(2);
  expect((await keys(ws, ['reconcile', 'acme'])).code).toBe(2);
});
