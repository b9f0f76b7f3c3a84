/**
 * The keys tool against a real Kong 3.9 with PostgreSQL (harness/real-kong.ts: a database of its
 * own, `kong migrations bootstrap`), as production runs it: decK syncs kong.yaml, then
 * partners.yaml, each on its own with the select tags the files define; then every --apply
 * command of the tool against the real Admin API, each checked by requests through Kong's proxy
 * to the real service, with a `deck diff` of each state file after each step.
 *
 * The installed decK is Debian's 1.4.0, older than the minimum (tools/keys/deck.ts): its diffs
 * show the hazard the minimum exists for (a sync of partners.yaml would delete every partner key),
 * `keys sync` refuses it, and the keys stay alive.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { keysOnKong, msUntil } from './keys-kong';
import type { Parsed } from '../helpers/parsed';

const on = keysOnKong('kong_keys_lifecycle', 'keys-lifecycle-secret-0123456789');
const { secrets, keys, apply, deck, get, post } = on;

/** The entities a `deck diff` of the file plans to create, update or delete (first line of each). */
function plan(file: string): string[] {
  const diff = deck(['diff', '-s', file]);
  expect([file, diff.code]).toEqual([file, 0]);
  return diff.text
    .split('\n')
    .filter((l) => /^(creating|updating|deleting) /.test(l))
    .map((l) => l.replace(/\s+\{$/, '').trim());
}

/** Every state file's planned changes: kong.yaml none; the others only what decK 1.4.0 gets wrong. */
function expectDiffsExplainedByOldDeck(partnerIds: string[]): void {
  const kongPlan = plan('kong.yaml');
  // 1.4.0 compares without Kong 3's field defaults, so it plans cosmetic updates; it creates and deletes nothing.
  expect(kongPlan.filter((l) => !/^updating (route|plugin|upstream) /.test(l))).toEqual([]);
  const live = Object.keys(secrets).length;
  // 1.4.0 lists credentials without the select-tag filter: it would delete every live partner key.
  const partnersPlan = plan('partners.yaml');
  expect(partnersPlan.every((l) => /^deleting key-auth \S+ for consumer /.test(l))).toBe(true);
  expect(partnersPlan.every((l) => partnerIds.some((id) => l.endsWith(id)))).toBe(true);
  expect(partnersPlan.length).toBe(live);
  // ...and, for partner-keys.yaml, renders no ${{ env }} template (1.7.0 too) and sees ACL groups it must not.
  const keysPlan = plan('partner-keys.yaml');
  expect(keysPlan.every((l) => /^(updating key-auth .* for consumer |deleting acl-group )/.test(l))).toBe(true);
}

test("decK syncs kong.yaml, then partners.yaml, each on its own; every entity carries its file's select tag", async () => {
  for (const file of ['kong.yaml', 'partners.yaml']) expect([file, deck(['sync', '-s', file]).code]).toEqual([file, 0]);
  const services = (await (await fetch(`${on.kong.adminUrl}/services`)).json()) as Parsed;
  expect(services.data.map((s: Parsed) => [s.name, s.tags]).sort()).toEqual([
    ['jobs-docs', ['jobs-api']],
    ['jobs-service', ['jobs-api']],
  ]);
  // The API reference's service carries only its route's per-IP limit: no key-auth, no auth-guard.
  const plugins = (await (await fetch(`${on.kong.adminUrl}/plugins?size=100`)).json()) as Parsed;
  const docsService = services.data.find((s: Parsed) => s.name === 'jobs-docs');
  const docsRoute = (await (await fetch(`${on.kong.adminUrl}/services/jobs-docs/routes`)).json()) as Parsed;
  expect(docsRoute.data.map((r: Parsed) => [r.name, r.tags]).sort()).toEqual([
    ['jobs-docs', ['jobs-api']],
    ['jobs-not-found', ['jobs-api']],
  ]);
  expect(plugins.data.filter((p: Parsed) => p.service?.id === docsService.id)).toEqual([]);
  const routePlugins = (name: string) =>
    plugins.data.filter((p: Parsed) => p.route?.id === docsRoute.data.find((r: Parsed) => r.name === name).id);
  expect(
    routePlugins('jobs-docs').map((p: Parsed) => [p.name, p.config.limit_by, p.config.minute, p.config.hour, p.tags]),
  ).toEqual([['job-rate-limits', 'ip', 60, 600, ['jobs-api']]]);
  // The catch-all answers the API's 404 itself: nothing else runs there.
  expect(
    routePlugins('jobs-not-found').map((p: Parsed) => [p.name, p.config.status_code, p.config.body, p.tags]),
  ).toEqual([['request-termination', 404, '{"error":"Not found"}', ['jobs-api']]]);
  const anonymous = (await (await fetch(`${on.kong.adminUrl}/consumers/anonymous`)).json()) as Parsed;
  expect(anonymous.tags).toEqual(['jobs-api']);
  // The router is rebuilt from the database a few seconds after a change (worker_state_update_frequency).
  await msUntil('the synced routes', 15_000, async () => (await get('none')).status === 401);
  // The reference page needs no key: through Kong it reaches the real service's page.
  const docs = await fetch(`${on.kong.proxyUrl}/docs`);
  expect([docs.status, docs.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^text\/html/)]);
  await docs.arrayBuffer();
}, 60_000);

test("the keys tool's whole --apply lifecycle against the real Admin API", async () => {
  // issue: read scope
  const issued = await keys(['issue', 'acme', '--scope', 'read', ...apply()]);
  expect(issued.code).toBe(0);
  const key1 = secrets[Object.keys(secrets)[0]!]!;
  const acme = /consumer ([0-9a-f-]{36})/.exec(issued.err)![1]!;
  await msUntil('the issued key', 5_000, async () => (await get(key1)).status === 200);
  expect((await get(key1)).body.data).toHaveLength(1);
  expect(await post(key1)).toBe(403);
  expect(on.service.received.at(-1)?.headers['x-consumer-id']).toBe(acme);
  // Kong holds what the files say, each entity tagged so that only its own file's sync sees it.
  const files = () => ({
    keys: readFileSync(path.join(on.dir, 'partner-keys.yaml'), 'utf8'),
    partners: readFileSync(path.join(on.dir, 'partners.yaml'), 'utf8'),
  });
  const admin = async (p: string) => (await (await fetch(`${on.kong.adminUrl}${p}`)).json()) as Parsed;
  expect(await admin('/consumers/acme')).toMatchObject({
    id: acme,
    username: 'acme',
    tags: ['jobs-partners', 'jobs-partner-keys'],
  });
  expect((await admin(`/consumers/${acme}/acls`)).data.map((a: Parsed) => [a.group, a.tags])).toEqual([
    ['jobs:read', ['jobs-partners']],
  ]);
  const [credential] = (await admin(`/consumers/${acme}/key-auth`)).data;
  expect(credential.tags).toEqual(['jobs-partner-keys']);
  expect(files().keys).toContain(`id: ${credential.id}`);
  expect(files().partners).toContain(`id: ${acme}`);
  expect(JSON.stringify(files())).not.toContain(key1);
  expectDiffsExplainedByOldDeck([acme]);

  // scope: write, same key
  expect((await keys(['scope', 'acme', 'write', ...apply()])).code).toBe(0);
  await msUntil('the write scope', 5_000, async () => (await post(key1)) === 201);
  expectDiffsExplainedByOldDeck([acme]);

  // disable: 403 within 5 s, measured
  expect((await keys(['disable', 'acme', ...apply()])).code).toBe(0);
  const disabledAfter = await msUntil('disable', 5_000, async () => (await get(key1)).status === 403);
  expect(disabledAfter).toBeLessThan(5_000);
  expect((await get(key1)).body).toEqual({ error: 'API key disabled' });
  expectDiffsExplainedByOldDeck([acme]);

  // rotate: a second key; both work (once enabled)
  expect((await keys(['enable', 'acme', ...apply()])).code).toBe(0);
  await msUntil('enable', 5_000, async () => (await get(key1)).status === 200);
  expect((await keys(['rotate', 'acme', ...apply()])).code).toBe(0);
  const key2 = secrets[Object.keys(secrets)[1]!]!;
  await msUntil('the rotated key', 5_000, async () => (await get(key2)).status === 200);
  expect((await get(key1)).status).toBe(200);
  expectDiffsExplainedByOldDeck([acme]);

  // revoke-old: only the new key is left
  expect((await keys(['rotate', 'acme', '--revoke-old', ...apply()])).code).toBe(0);
  delete secrets[Object.keys(secrets)[0]!];
  await msUntil('the revoked key', 5_000, async () => (await get(key1)).status === 401);
  expect((await get(key1)).body).toEqual({ error: 'Invalid API key' });
  expect((await get(key2)).status).toBe(200);
  expectDiffsExplainedByOldDeck([acme]);

  // revoke one credential by id: that key stops, the other keeps working
  expect((await keys(['rotate', 'acme', ...apply()])).code).toBe(0);
  const key3 = secrets[Object.keys(secrets)[1]!]!;
  await msUntil('the third key', 5_000, async () => (await get(key3)).status === 200);
  const third = (await admin(`/consumers/${acme}/key-auth`)).data.find((c: Parsed) => c.key === key3);
  expect((await keys(['revoke', 'acme', '--credential', third.id, ...apply()])).code).toBe(0);
  delete secrets[Object.keys(secrets)[1]!];
  await msUntil('the revoked credential', 5_000, async () => (await get(key3)).status === 401);
  expect((await get(key2)).status).toBe(200);
  expectDiffsExplainedByOldDeck([acme]);

  // disable, then enable: the key and its write scope are back
  expect((await keys(['disable', 'acme', ...apply()])).code).toBe(0);
  await msUntil('disable again', 5_000, async () => (await get(key2)).status === 403);
  expect((await keys(['enable', 'acme', ...apply()])).code).toBe(0);
  await msUntil('enable again', 5_000, async () => (await get(key2)).status === 200);
  expect(await post(key2)).toBe(201);
  expectDiffsExplainedByOldDeck([acme]);
}, 120_000);

test('keys sync refuses decK 1.4.0 and `deck gateway sync` does not exist in it: every key stays alive; the raw 1.x sync the refusal prevents would have deleted them', async () => {
  const live = Object.values(secrets);
  expect(live).toHaveLength(1);
  const refused = await keys(['sync', 'kong.yaml', 'partners.yaml', '--admin-url', on.kong.adminUrl]);
  expect(refused.code).toBe(1);
  expect(refused.err).toMatch(/decK 1\.4\.0 is older than 1\.7\.0: .*would delete every partner's key/);
  // The sync the compose file and the state files' comments spell (decK 1.28+) does not exist in 1.4.0.
  const documented = deck(['gateway', 'sync', 'partners.yaml']);
  expect(documented.code).not.toBe(0);
  expect(documented.text).toContain('unknown command "gateway"');
  await new Promise((r) => setTimeout(r, 1_000));
  for (const key of live) expect((await get(key)).status).toBe(200);

  // What the refusal prevents, for real: decK 1.4.0's own sync of partners.yaml.
  expect(deck(['sync', '-s', 'partners.yaml']).code).toBe(0);
  await msUntil('the hazard', 5_000, async () => (await get(live[0]!)).status === 401);
  expect((await get(live[0]!)).body).toEqual({ error: 'Invalid API key' });
}, 60_000);
