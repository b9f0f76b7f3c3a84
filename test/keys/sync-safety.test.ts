// "A routine sync never blanks, changes or deletes a key", shown on the state files and on the
// Admin API requests the tool sends, with decK's two rules for select tags modelled as decK's
// source states them (Kong/go-database-reconciler):
//  - what a sync of a file can see, and so change or delete: only the entities of Kong carrying
//    ALL of the file's select tags (pkg/dump/dump.go: newOpt sets Tags and MatchAllTags = true,
//    used for consumers, ACL groups and key-auth credentials alike: GetAllKeyAuths(..., SelectorTags));
//  - what it wants them to be: the file's entities, each tagged with the file's select tags added
//    (pkg/file/builder.go: utils.MustMergeTags in consumers(), ingestACLGroups, ingestKeyAuths).
// What only a real decK against a real Kong could show: that those functions behave as read (and
// as the installed decK 1.4.0 cannot run a sync here), and that Kong's `?tags=` filter on
// /key-auths answers as documented. docs/partners.md ("Managing partners") says so.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { renderDeckTemplate } from '../../gateway/local/config/deck-template';
import { APPLY, fakeKongPerTest, isolateNetwork, type KongCall } from './fake-kong';
import { deckValidate, keys, printedKey, workspacePerTest } from './support';

isolateNetwork();

type Entity =
  | { kind: 'consumer'; id: string; username: string; custom_id: string | null; tags: string[] }
  | { kind: 'acl'; consumer: string; group: string; tags: string[] }
  | { kind: 'credential'; id: string; consumer: string; key: string; tags: string[] };

const norm = (e: Entity) => JSON.stringify({ ...e, tags: [...e.tags].sort() });

/** Kong's partner entities after the recorded Admin API requests (deleting a consumer cascades, as both daos declare). */
function kongAfter(calls: KongCall[]): Entity[] {
  let entities: Entity[] = [];
  for (const { method, path, body } of calls) {
    // Reads change nothing.
    if (method === 'GET') continue;
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const [, consumer, sub, item] = parts;
    if (method === 'POST' && parts.length === 1) {
      entities.push({
        kind: 'consumer',
        id: body.id,
        username: body.username,
        custom_id: body.custom_id ?? null,
        tags: body.tags,
      });
    } else if (method === 'DELETE' && parts.length === 2) {
      entities = entities.filter((e) => (e.kind === 'consumer' ? e.id !== consumer : e.consumer !== consumer));
    } else if (sub === 'acls' && method === 'PUT') {
      entities = entities.filter((e) => !(e.kind === 'acl' && e.consumer === consumer && e.group === item));
      entities.push({ kind: 'acl', consumer: consumer as string, group: body.group, tags: body.tags });
    } else if (sub === 'acls' && method === 'DELETE') {
      entities = entities.filter((e) => !(e.kind === 'acl' && e.consumer === consumer && e.group === item));
    } else if (sub === 'key-auth' && method === 'POST') {
      entities.push({ kind: 'credential', id: body.id, consumer: consumer as string, key: body.key, tags: body.tags });
    } else if (sub === 'key-auth' && method === 'DELETE') {
      entities = entities.filter((e) => !(e.kind === 'credential' && e.id === item));
    } else {
      throw new Error(`request not modelled: ${method} ${path}`);
    }
  }
  return entities;
}

/** What a sync of the file would see in Kong. */
function visibleTo(selectTags: string[], kong: Entity[]): Entity[] {
  return kong.filter((e) => selectTags.every((t) => e.tags.includes(t)));
}

/** What a sync of the file wants: its entities, tagged with its select tags (after decK renders its templates with `env`). */
function declaredBy(text: string, env: NodeJS.ProcessEnv): { selectTags: string[]; entities: Entity[] } {
  const state = parse(renderDeckTemplate(text, env));
  const selectTags: string[] = state._info.select_tags;
  const merge = (tags: string[] | undefined) => [...new Set([...(tags ?? []), ...selectTags])];
  const entities: Entity[] = [];
  for (const c of state.consumers ?? []) {
    entities.push({
      kind: 'consumer',
      id: c.id,
      username: c.username,
      custom_id: c.custom_id ?? null,
      tags: merge(c.tags),
    });
    for (const a of c.acls ?? []) entities.push({ kind: 'acl', consumer: c.id, group: a.group, tags: merge(a.tags) });
    for (const k of c.keyauth_credentials ?? [])
      entities.push({ kind: 'credential', id: k.id, consumer: c.id, key: k.key, tags: merge(k.tags) });
  }
  return { selectTags, entities };
}

/** The create/update/delete a sync of the file would do: the difference between what it wants and what it sees. */
function syncChanges(text: string, env: NodeJS.ProcessEnv, kong: Entity[]): { create: string[]; remove: string[] } {
  const { selectTags, entities } = declaredBy(text, env);
  const want = new Set(entities.map(norm));
  const have = new Set(visibleTo(selectTags, kong).map(norm));
  return { create: [...want].filter((e) => !have.has(e)), remove: [...have].filter((e) => !want.has(e)) };
}

const ws = workspacePerTest();
const kong = fakeKongPerTest();

/** A year of partner management, all applied to Kong: the printed keys are what the secret manager holds. */
async function lifecycle(): Promise<NodeJS.ProcessEnv> {
  const secrets: NodeJS.ProcessEnv = {};
  const keep = (r: Awaited<ReturnType<typeof keys>>) => {
    expect(r.code).toBe(0);
    const { variable, key } = printedKey(r);
    secrets[variable] = key;
  };
  keep(await keys(ws, ['issue', 'acme', '--scope', 'read', ...APPLY]));
  keep(await keys(ws, ['issue', 'globex', '--scope', 'write', '--custom-id', 'GLOBEX-1', ...APPLY]));
  keep(await keys(ws, ['issue', 'initech', '--scope', 'read', ...APPLY]));
  for (const args of [
    ['scope', 'acme', 'write'],
    ['disable', 'globex'],
    ['scope', 'initech', 'write'],
    ['scope', 'initech', 'read'],
  ]) {
    expect((await keys(ws, [...args, ...APPLY])).code).toBe(0);
  }
  keep(await keys(ws, ['rotate', 'acme', ...APPLY]));
  expect((await keys(ws, ['rotate', 'acme', '--revoke-old', ...APPLY])).code).toBe(0);
  keep(await keys(ws, ['rotate', 'initech', ...APPLY]));
  return secrets;
}

test('a sync of partners.yaml needs no key, sees no credential, and has nothing to change after the tool applied every command', async () => {
  const secrets = await lifecycle();
  const partnersText = readFileSync(ws.partners, 'utf8');
  const state = kongAfter(kong.calls);
  expect(state.filter((e) => e.kind === 'credential')).toHaveLength(4);

  // Rendered with an EMPTY environment: not one variable is needed.
  expect(() => renderDeckTemplate(partnersText, {})).not.toThrow();
  expect(partnersText).not.toContain('DECK_');
  for (const key of Object.values(secrets)) expect(partnersText).not.toContain(key as string);

  // It sees consumers and ACL groups only: no credential carries its tag, so it can neither
  // create, change nor delete one, whatever the file says.
  const seen = visibleTo(['jobs-partners'], state);
  expect(seen.filter((e) => e.kind === 'credential')).toEqual([]);
  expect(seen.filter((e) => e.kind === 'consumer')).toHaveLength(3);
  expect(syncChanges(partnersText, {}, state)).toEqual({ create: [], remove: [] });
  deckValidate(ws.partners);
});

test('a routine sync of a hand-edited partners.yaml (a group removed) changes consumers and groups only, never a credential it cannot see', async () => {
  await lifecycle();
  const state = kongAfter(kong.calls);
  const edited = readFileSync(ws.partners, 'utf8').replace('      - group: disabled\n', '');
  const changes = syncChanges(edited, {}, state);
  expect(changes.create.map((e) => JSON.parse(e).kind)).toEqual([]);
  expect(changes.remove.map((e) => JSON.parse(e))).toEqual([
    expect.objectContaining({ kind: 'acl', group: 'disabled' }),
  ]);
  for (const e of [...changes.create, ...changes.remove]) expect(JSON.parse(e).kind).not.toBe('credential');
});

test('partner-keys.yaml, synced only to rebuild, holds exactly the credentials Kong has, sees no ACL group (so cannot re-enable a partner), and needs every key', async () => {
  const secrets = await lifecycle();
  const keysText = readFileSync(ws.keys, 'utf8');
  const state = kongAfter(kong.calls);

  expect(syncChanges(keysText, secrets, state)).toEqual({ create: [], remove: [] });
  expect(visibleTo(['jobs-partner-keys'], state).filter((e) => e.kind === 'acl')).toEqual([]);
  // Onto an empty Kong it creates the three consumers with the same ids and the four credentials
  // (partners.yaml then adds the groups), so a rebuilt Kong has the same X-Consumer-ID and keys.
  const rebuilt = syncChanges(keysText, secrets, []);
  expect(rebuilt.remove).toEqual([]);
  expect(rebuilt.create.map((e) => JSON.parse(e).kind).sort()).toEqual([
    'consumer',
    'consumer',
    'consumer',
    'credential',
    'credential',
    'credential',
    'credential',
  ]);

  const missing = Object.keys(secrets).find((v) => keysText.includes(v));
  const partial = { ...secrets };
  delete partial[missing as string];
  expect(() => renderDeckTemplate(keysText, partial)).toThrow(
    `environment variable '${missing}' present in state file but not set`,
  );
  deckValidate(ws.keys);
});

test("the consumers of both files are identical, so neither sync re-tags, changes or deletes the other file's consumers", async () => {
  await lifecycle();
  const consumers = (file: string) =>
    parse(readFileSync(file, 'utf8')).consumers.map(({ username, id, custom_id, tags }: Record<string, unknown>) => ({
      username,
      id,
      custom_id,
      tags,
    }));
  expect(consumers(ws.keys)).toEqual(consumers(ws.partners));
});
