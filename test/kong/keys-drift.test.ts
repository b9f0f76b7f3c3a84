/**
 * Kong and the state files never disagree silently, on a real Kong 3.9 with PostgreSQL: every path
 * that used to leave a key live (the --revoke-old hint followed without --apply, a credential added
 * in Kong by hand, a file edited by hand, a consumer in neither file) is reported by `keys status`
 * (exit 3) and ends with Kong equal to the files after the next --apply; a revoked key gets 401
 * through Kong within 1 s of the command. No output of the tool ever holds a key.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fingerprint } from '../../tools/keys/fingerprint';
import { keysOnKong, msUntil } from './keys-kong';

const on = keysOnKong('kong_keys_drift', 'keys-drift-secret-0123456789abcdef');
const { secrets, get } = on;
/** Every key that ever existed here, by hand too, and everything the tool printed. */
const handKeys: string[] = [];
const printed: string[] = [];

async function keys(args: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  const r = await on.keys(args, env);
  // The one line a key may be on: issue's and rotate's VARIABLE=key, on stdout.
  printed.push(
    r.out
      .split('\n')
      .filter((l) => !/^DECK_[A-Z0-9_]+=jl_live_/.test(l))
      .join('\n'),
    r.err,
  );
  return r;
}

const status = () => keys(['status', '--admin-url', on.kong.adminUrl]);
const apply = () => on.apply();

/** Polls until the key gets `status` through Kong, failing unless that is within 1 s of `since`. */
async function within1s(key: string, code: number, since: number): Promise<void> {
  await msUntil(
    `status ${code}`,
    Math.max(0, 1_000 - (Date.now() - since)),
    async () => (await get(key)).status === code,
  );
}

function credentialOf(key: string, creds: Array<{ id: string; key: string }>): string {
  return creds.find((c) => c.key === key)!.id;
}

const file = (name: string) => path.join(on.dir, name);
const edit = (name: string, change: (text: string) => string) =>
  writeFileSync(file(name), change(readFileSync(file(name), 'utf8')));

beforeAll(async () => {
  expect(on.deck(['sync', '-s', 'kong.yaml']).code).toBe(0);
  await msUntil('the synced routes', 15_000, async () => (await get('none')).status === 401);
}, 30_000);

afterAll(() => {
  // No output of any command of this file holds a key, not even a hand-made one.
  const all = printed.join('\n');
  for (const key of [...Object.values(secrets), ...handKeys]) expect(all).not.toContain(key);
});

test('the --revoke-old hint followed without --apply: NOT in effect, status shows the live key, the next --apply kills it within 1 s', async () => {
  expect((await keys(['issue', 'acme', '--scope', 'read', ...apply()])).code).toBe(0);
  const [key1] = Object.values(secrets) as [string];
  const acme = (await on.admin('/consumers/acme')).id as string;
  const id1 = credentialOf(key1, (await on.admin(`/consumers/${acme}/key-auth`)).data);
  expect((await status()).code).toBe(0);

  const rotated = await keys(['rotate', 'acme', ...apply()]);
  // The hint carries the operator's flags.
  expect(rotated.err).toContain(
    `Once the partner has switched to the new one: keys rotate acme --revoke-old --apply --admin-url ${on.kong.adminUrl}`,
  );
  const key2 = Object.values(secrets)[1]!;
  await msUntil('the rotated key', 5_000, async () => (await get(key2)).status === 200);

  // Followed without --apply: the files change, and the tool says in one line that Kong does not have it.
  const fileOnly = await keys(['rotate', 'acme', '--revoke-old']);
  expect(fileOnly.code).toBe(0);
  expect(fileOnly.err.split('\n').filter((l) => l.includes('NOT in effect'))).toEqual([
    'NOT in effect: Kong does not have this change; keys reconcile acme --apply --admin-url URL makes it so now (or the next sync of partner-keys.yaml).',
  ]);
  expect((await get(key1)).status).toBe(200);

  const drift = await status();
  expect(drift.code).toBe(3);
  expect(drift.out).toContain('acme: Kong DIFFERS from the files');
  expect(drift.out).toContain(
    `live: credential ${id1} (${fingerprint(key1)}) of acme gets through Kong; partner-keys.yaml does not have it`,
  );
  expect(drift.out).toContain(
    `run:  keys reconcile acme --apply --admin-url ${on.kong.adminUrl}   (delete credential ${id1} (${fingerprint(key1)}) of acme)`,
  );
  expect(drift.err).toContain('Kong differs from the files for 1 partner');

  // Then with --apply, as the hint said: the files have nothing left to revoke, Kong follows them.
  const since = Date.now();
  const applied = await keys(['rotate', 'acme', '--revoke-old', ...apply()]);
  expect(applied.code).toBe(0);
  expect(applied.err).toContain('nothing to revoke there');
  expect(applied.err).toContain(`Kong: delete credential ${id1} (${fingerprint(key1)}) of acme: done`);
  await within1s(key1, 401, since);
  expect((await get(key2)).status).toBe(200);
  expect((await status()).code).toBe(0);
}, 60_000);

test('a credential added in Kong by hand: status names it by id and fingerprint; any --apply on the partner deletes it within 1 s', async () => {
  const acme = (await on.admin('/consumers/acme')).id as string;
  const hand = `jl_live_by_hand_${Date.now()}`;
  handKeys.push(hand);
  const created = await fetch(`${on.kong.adminUrl}/consumers/${acme}/key-auth`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ key: hand }),
  });
  const { id } = (await created.json()) as { id: string };
  await msUntil('the hand-made key', 5_000, async () => (await get(hand)).status === 200);

  const drift = await status();
  expect(drift.code).toBe(3);
  expect(drift.out).toContain(`credential ${id} (${fingerprint(hand)}) of acme gets through Kong`);

  const since = Date.now();
  const scoped = await keys(['scope', 'acme', 'write', ...apply()]);
  expect(scoped.code).toBe(0);
  expect(scoped.err).toContain('Kong differed from the files for acme');
  await within1s(hand, 401, since);
  expect((await status()).code).toBe(0);
}, 60_000);

test('files edited by hand: a disabled partner Kong lets in, then a credential taken out of partner-keys.yaml; the next --apply makes Kong follow', async () => {
  const key2 = Object.values(secrets)[1]!;
  edit('partners.yaml', (t) =>
    t.replace('      - group: jobs:write\n', '      - group: jobs:write\n      - group: disabled\n'),
  );
  const disabled = await status();
  expect(disabled.code).toBe(3);
  expect(disabled.out).toContain('acme is disabled in partners.yaml but NOT in Kong: its keys get through');
  const since = Date.now();
  expect((await keys(['reconcile', 'acme', ...apply()])).code).toBe(0);
  await within1s(key2, 403, since);
  expect((await status()).code).toBe(0);

  // The hand edit undone, and the last key's credential deleted from the keys file by hand.
  edit('partners.yaml', (t) => t.replace('      - group: disabled\n', ''));
  const acme = (await on.admin('/consumers/acme')).id as string;
  const id2 = credentialOf(key2, (await on.admin(`/consumers/${acme}/key-auth`)).data);
  edit('partner-keys.yaml', (t) => t.replace(new RegExp(` {6}- id: ${id2}\\n {8}key: .*\\n`), ''));
  const drift = await status();
  expect(drift.code).toBe(3);
  expect(drift.out).toContain('acme is disabled in Kong (its keys get 403); partners.yaml has it enabled');
  expect(drift.out).toContain(
    `credential ${id2} (${fingerprint(key2)}) of acme gets through Kong; partner-keys.yaml does not have it`,
  );

  const rotated = await keys(['rotate', 'acme', ...apply()]);
  expect(rotated.code).toBe(0);
  const key3 = Object.values(secrets)[2]!;
  await msUntil('the new key', 5_000, async () => (await get(key3)).status === 200);
  expect((await get(key2)).status).toBe(401);
  expect((await status()).code).toBe(0);
}, 60_000);

test('a credential in partner-keys.yaml that Kong lacks: status says which variable recreates it; --apply with it in the environment does', async () => {
  const key3 = Object.values(secrets)[2]!;
  const acme = (await on.admin('/consumers/acme')).id as string;
  const id3 = credentialOf(key3, (await on.admin(`/consumers/${acme}/key-auth`)).data);
  expect((await fetch(`${on.kong.adminUrl}/consumers/${acme}/key-auth/${id3}`, { method: 'DELETE' })).status).toBe(204);
  await msUntil('the key deleted by hand', 5_000, async () => (await get(key3)).status === 401);
  const variable = Object.keys(secrets)[2]!;

  const drift = await status();
  expect(drift.code).toBe(3);
  expect(drift.out).toContain(
    `credential ${id3} of acme is in partner-keys.yaml but not in Kong: its key (${variable}) gets 401`,
  );
  expect(drift.out).toContain(
    `export ${variable} from the secret manager, then keys reconcile acme --apply --admin-url ${on.kong.adminUrl}`,
  );
  // Without the key, --apply cannot recreate it, and says so with a failure.
  const without = await keys(['reconcile', 'acme', ...apply()]);
  expect(without.code).toBe(1);
  expect(without.err).toContain(`${variable} is not in this environment`);
  const withKey = await keys(['reconcile', 'acme', ...apply()], { [variable]: key3 });
  expect(withKey.code).toBe(0);
  await msUntil('the recreated key', 5_000, async () => (await get(key3)).status === 200);
  expect((await status()).code).toBe(0);
}, 60_000);

test('revoke --all --apply: every live key of the partner gets 401 within 1 s, the hand-made one too; the files list none', async () => {
  expect((await keys(['rotate', 'acme', ...apply()])).code).toBe(0);
  const acme = (await on.admin('/consumers/acme')).id as string;
  const hand = `jl_live_by_hand_all_${Date.now()}`;
  handKeys.push(hand);
  await fetch(`${on.kong.adminUrl}/consumers/${acme}/key-auth`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ key: hand }),
  });
  const live = [Object.values(secrets)[2]!, Object.values(secrets)[3]!, hand];
  for (const key of live) await msUntil('every key live', 5_000, async () => (await get(key)).status === 200);

  const since = Date.now();
  const revoked = await keys(['revoke', 'acme', '--all', ...apply()]);
  expect(revoked.code).toBe(0);
  expect(revoked.err).toContain('revoked every key of acme: 3 in Kong, 2 in partner-keys.yaml.');
  for (const key of live) await within1s(key, 401, since);
  expect(readFileSync(file('partner-keys.yaml'), 'utf8')).not.toMatch(/keyauth_credentials:\n\s+- id/);
  expect((await status()).code).toBe(0);
}, 60_000);

test('a consumer in neither file: status reports it with its live key; revoke --all --apply kills the key at once, and Kong drops the consumer', async () => {
  const hand = `jl_live_ghost_${Date.now()}`;
  handKeys.push(hand);
  const made = await fetch(`${on.kong.adminUrl}/consumers`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'ghost', tags: ['jobs-partners', 'jobs-partner-keys'] }),
  });
  const ghost = (await made.json()) as { id: string };
  for (const group of ['jobs:read'])
    await fetch(`${on.kong.adminUrl}/consumers/${ghost.id}/acls`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ group }),
    });
  await fetch(`${on.kong.adminUrl}/consumers/${ghost.id}/key-auth`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ key: hand }),
  });
  await msUntil('the ghost key', 5_000, async () => (await get(hand)).status === 200);

  const drift = await status();
  expect(drift.code).toBe(3);
  expect(drift.out).toMatch(
    new RegExp(
      `consumer ghost \\(${ghost.id}\\) is in Kong but in neither file, with key credential \\S+ \\(${fingerprint(hand)}\\) that gets through`,
    ),
  );
  expect(drift.out).toContain(`run:  keys reconcile ghost --apply --admin-url ${on.kong.adminUrl}`);

  const since = Date.now();
  const revoked = await keys(['revoke', 'ghost', '--all', ...apply()]);
  expect(revoked.code).toBe(0);
  await within1s(hand, 401, since);
  expect((await fetch(`${on.kong.adminUrl}/consumers/ghost`)).status).toBe(404);
  expect((await status()).code).toBe(0);
}, 60_000);
