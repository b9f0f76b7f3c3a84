// The keys tool's edits of partners.yaml and partner-keys.yaml, on temporary copies of the
// committed files: each result re-read, checked and passed through `deck validate`; comments and
// layout kept; re-running harmless; a bad file refused before anything is written.
import { deckValidate, expectFilesKept, keys, printedKey, UUID, workspacePerTest } from './support';

const ws = workspacePerTest();

function commentLines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim().startsWith('#'));
}

function validateBoth(): void {
  deckValidate(ws.partners);
  deckValidate(ws.keys);
}

describe('the committed files', () => {
  test('pass deck validate and hold no partner yet', async () => {
    validateBoth();
    const r = await keys(ws, ['list', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual([]);
  });
});

describe('issue', () => {
  test('adds the consumer with fixed ids, its groups and one env-referenced credential; the key is printed once and written nowhere', async () => {
    const before = ws.read();
    const r = await keys(ws, ['issue', 'acme', '--scope', 'read']);
    expect(r.code).toBe(0);
    const { variable, key } = printedKey(r);
    expect(key).toMatch(/^jl_live_[A-Za-z0-9_-]{43}$/);

    const { partners, keys: keysState } = ws.state();
    const [consumer] = partners.consumers;
    expect(partners.consumers).toHaveLength(1);
    expect(consumer).toEqual({
      username: 'acme',
      id: expect.stringMatching(UUID),
      tags: ['jobs-partners', 'jobs-partner-keys'],
      acls: [{ group: 'jobs:read' }],
    });
    const [keyed] = keysState.consumers;
    expect(keyed.username).toBe('acme');
    expect(keyed.id).toBe(consumer.id);
    expect(keyed.tags).toEqual(consumer.tags);
    expect(keyed.keyauth_credentials).toEqual([{ id: expect.stringMatching(UUID), key: `\${{ env "${variable}" }}` }]);
    expect(keyed.keyauth_credentials[0].id).not.toBe(consumer.id);
    expect(variable).toBe(`DECK_PARTNER_ACME_KEY_${keyed.keyauth_credentials[0].id.slice(0, 8).toUpperCase()}`);

    const after = ws.read();
    expect(after.partners + after.keys + r.err).not.toContain(key);
    expect(r.out.split('\n')).toHaveLength(1);
    expect(commentLines(after.partners)).toEqual(commentLines(before.partners));
    expect(commentLines(after.keys)).toEqual(commentLines(before.keys));
    validateBoth();
  });

  test('write scope and --custom-id: both groups, custom_id in both files; every partner gets its own ids and key', async () => {
    const a = await keys(ws, ['issue', 'acme', '--scope', 'read']);
    const b = await keys(ws, ['issue', 'globex-jobs', '--scope', 'write', '--custom-id', 'GLOBEX-42']);
    expect(b.code).toBe(0);
    expect(printedKey(b).key).not.toBe(printedKey(a).key);
    const { partners, keys: keysState } = ws.state();
    const globex = partners.consumers[1];
    expect(globex).toMatchObject({
      username: 'globex-jobs',
      custom_id: 'GLOBEX-42',
      acls: [{ group: 'jobs:read' }, { group: 'jobs:write' }],
    });
    expect(keysState.consumers[1]).toMatchObject({ username: 'globex-jobs', id: globex.id, custom_id: 'GLOBEX-42' });
    expect(globex.id).not.toBe(partners.consumers[0].id);
    expect(printedKey(b).variable).toMatch(/^DECK_PARTNER_GLOBEX_JOBS_KEY_[0-9A-F]{8}$/);
    validateBoth();
  });

  test('a partner that exists, or a custom_id in use, is refused and nothing is written', async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'read', '--custom-id', 'ACME-1']);
    const again = await expectFilesKept(ws, ['issue', 'acme', '--scope', 'write'], 1, 'partner "acme" already exists');
    expect(again.out).toBe('');
    await expectFilesKept(
      ws,
      ['issue', 'initech', '--scope', 'read', '--custom-id', 'ACME-1'],
      1,
      'custom_id "ACME-1" already belongs to partner "acme"',
    );
  });

  test.each([
    ['Acme', 'lower-case'],
    ['a', '2-64'],
    ['9acme', 'starting with a letter'],
    ['acme-', 'single hyphens'],
    ['ac--me', 'single hyphens'],
    ['acme jobs', 'lower-case'],
    ['acme/jobs', 'lower-case'],
    ['a'.repeat(65), '2-64'],
    ['anonymous', "kong.yaml's keyless consumer"],
    ['demo-acme', 'reserved for demo.yaml'],
    ['deadbeef-0000-4000-8000-000000000000', 'must not look like a UUID'],
  ])('partner name %j is refused (exit 2): %s', async (name, reason) => {
    const r = await expectFilesKept(ws, ['issue', name, '--scope', 'read'], 2, reason);
    expect(r.out).toBe('');
  });
});

describe('scope', () => {
  test('read -> write -> read changes the ACL groups only: the credential and its key reference stay byte for byte', async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'read']);
    const keysBefore = ws.read().keys;
    const up = await keys(ws, ['scope', 'acme', 'write']);
    expect(up.code).toBe(0);
    expect(up.err).toContain('acme: scope read -> write');
    expect(ws.state().partners.consumers[0].acls).toEqual([{ group: 'jobs:read' }, { group: 'jobs:write' }]);
    expect(ws.read().keys).toBe(keysBefore);
    validateBoth();

    const down = await keys(ws, ['scope', 'acme', 'read']);
    expect(down.code).toBe(0);
    expect(ws.state().partners.consumers[0].acls).toEqual([{ group: 'jobs:read' }]);
    expect(ws.read().keys).toBe(keysBefore);
    validateBoth();
  });

  test('re-running is harmless: same files, exit 0', async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'write']);
    await expectFilesKept(ws, ['scope', 'acme', 'write'], 0, 'acme already has scope write', 'nothing written');
  });

  test('a disabled partner stays disabled when its scope changes', async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'read']);
    await keys(ws, ['disable', 'acme']);
    await keys(ws, ['scope', 'acme', 'write']);
    expect(ws.state().partners.consumers[0].acls.map((a: { group: string }) => a.group)).toEqual([
      'jobs:read',
      'disabled',
      'jobs:write',
    ]);
    await keys(ws, ['scope', 'acme', 'read']);
    expect(ws.state().partners.consumers[0].acls.map((a: { group: string }) => a.group)).toEqual([
      'jobs:read',
      'disabled',
    ]);
  });

  test('an unknown partner is named, with the partners there are; a bad scope is a usage error', async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'read']);
    await expectFilesKept(ws, ['scope', 'initech', 'write'], 1, 'unknown partner "initech" (partners: acme)');
    await expectFilesKept(ws, ['scope', 'acme', 'admin'], 2, 'expected read or write, found "admin"');
  });
});

describe('disable and enable', () => {
  test('disable adds exactly one line (group disabled) and enable removes it; each is harmless to repeat', async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'write']);
    const before = ws.read();
    expect((await keys(ws, ['disable', 'acme'])).code).toBe(0);
    const disabled = ws.read();
    expect(disabled.keys).toBe(before.keys);
    expect(disabled.partners).toBe(
      before.partners.replace('      - group: jobs:write\n', '      - group: jobs:write\n      - group: disabled\n'),
    );
    validateBoth();

    await expectFilesKept(ws, ['disable', 'acme'], 0, 'acme was already disabled');

    expect((await keys(ws, ['enable', 'acme'])).code).toBe(0);
    expect(ws.read()).toEqual(before);
    await expectFilesKept(ws, ['enable', 'acme'], 0, 'acme was not disabled');
  });
});

describe('rotate and revoke', () => {
  test('rotate adds a second credential with a new key; --revoke-old keeps only the newest; repeating it changes nothing', async () => {
    const first = printedKey(await keys(ws, ['issue', 'acme', '--scope', 'read']));
    const partnersBefore = ws.read().partners;
    const r = await keys(ws, ['rotate', 'acme']);
    expect(r.code).toBe(0);
    const second = printedKey(r);
    expect(second.key).not.toBe(first.key);
    expect(second.variable).not.toBe(first.variable);
    const creds = ws.state().keys.consumers[0].keyauth_credentials;
    expect(creds.map((c: { key: string }) => c.key)).toEqual([
      `\${{ env "${first.variable}" }}`,
      `\${{ env "${second.variable}" }}`,
    ]);
    expect(ws.read().partners).toBe(partnersBefore);
    expect(ws.read().keys).not.toContain(second.key);
    validateBoth();

    const revoke = await keys(ws, ['rotate', 'acme', '--revoke-old']);
    expect(revoke.code).toBe(0);
    expect(revoke.out).toBe('');
    expect(ws.state().keys.consumers[0].keyauth_credentials).toEqual([creds[1]]);
    validateBoth();

    await expectFilesKept(
      ws,
      ['rotate', 'acme', '--revoke-old'],
      0,
      'acme has 1 key in partner-keys.yaml: nothing to revoke there. Kong may still have keys the files no longer list: keys status --admin-url URL shows them.',
    );
  });

  test('revoke --credential removes that credential only; an unknown one is named with the ones there are', async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'read']);
    await keys(ws, ['rotate', 'acme']);
    const [oldCred, newCred] = ws.state().keys.consumers[0].keyauth_credentials;
    const r = await keys(ws, ['revoke', 'acme', '--credential', newCred.id]);
    expect(r.code).toBe(0);
    expect(ws.state().keys.consumers[0].keyauth_credentials).toEqual([oldCred]);
    validateBoth();

    await expectFilesKept(
      ws,
      ['revoke', 'acme', '--credential', newCred.id],
      1,
      `partner-keys.yaml has no credential ${newCred.id} of acme (its credentials: ${oldCred.id}); if Kong still has it, keys revoke acme --credential ${newCred.id} --apply --admin-url URL deletes it there`,
    );
    await expectFilesKept(ws, ['revoke', 'acme'], 2);
  });

  test('revoking the last credential leaves the consumer in both files, with no key', async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'read']);
    const [cred] = ws.state().keys.consumers[0].keyauth_credentials;
    const r = await keys(ws, ['revoke', 'acme', '--credential', cred.id]);
    expect(r.err).toContain('acme has no key left');
    const { partners, keys: keysState } = ws.state();
    expect(partners.consumers).toHaveLength(1);
    expect(keysState.consumers[0].keyauth_credentials).toEqual([]);
    validateBoth();
    expect((await keys(ws, ['list'])).code).toBe(0);
  });
});

describe('list', () => {
  test('partners, scope, disabled, credential ids and variables, as a table and as JSON; never a key', async () => {
    const acme = printedKey(await keys(ws, ['issue', 'acme', '--scope', 'read']));
    const globex = printedKey(await keys(ws, ['issue', 'globex', '--scope', 'write', '--custom-id', 'G-1']));
    await keys(ws, ['disable', 'globex']);
    const rotated = printedKey(await keys(ws, ['rotate', 'acme']));
    const { partners, keys: keysState } = ws.state();

    const json = await keys(ws, ['list', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual([
      {
        partner: 'acme',
        id: partners.consumers[0].id,
        customId: null,
        scope: 'read',
        disabled: false,
        credentials: keysState.consumers[0].keyauth_credentials.map((c: { id: string }, i: number) => ({
          id: c.id,
          variable: [acme, rotated][i]?.variable,
        })),
      },
      {
        partner: 'globex',
        id: partners.consumers[1].id,
        customId: 'G-1',
        scope: 'write',
        disabled: true,
        credentials: [{ id: keysState.consumers[1].keyauth_credentials[0].id, variable: globex.variable }],
      },
    ]);
    const table = await keys(ws, ['list']);
    const lines = table.out.split('\n');
    expect(lines[0]).toMatch(/^PARTNER\s+SCOPE\s+STATUS\s+KEYS\s+CREDENTIAL IDS$/);
    expect(lines[1]).toMatch(
      new RegExp(`^acme\\s+read\\s+active\\s+2\\s+${keysState.consumers[0].keyauth_credentials[0].id} `),
    );
    expect(lines[2]).toMatch(/^globex\s+write\s+disabled\s+1\s+/);
    for (const k of [acme.key, globex.key, rotated.key]) expect(json.out + table.out).not.toContain(k);
  });
});

describe('comments and layout', () => {
  test("hand-written comments inside a partner's entry survive every edit, and lines not edited keep their bytes", async () => {
    await keys(ws, ['issue', 'acme', '--scope', 'read']);
    const annotated = ws
      .read()
      .partners.replace(
        '  - username: acme\n',
        '  # Acme Corp: contract 2026-114, contact in the CRM\n  - username: acme\n',
      )
      .replace('      - group: jobs:read\n', '      - group: jobs:read # every partner\n');
    ws.write('partners', annotated);
    ws.write(
      'keys',
      ws.read().keys.replace('    keyauth_credentials:\n', '    # rotated yearly\n    keyauth_credentials:\n'),
    );
    for (const args of [
      ['disable', 'acme'],
      ['scope', 'acme', 'write'],
      ['rotate', 'acme'],
      ['rotate', 'acme', '--revoke-old'],
      ['enable', 'acme'],
      ['scope', 'acme', 'read'],
    ]) {
      expect((await keys(ws, args)).code).toBe(0);
      const { partners, keys: keysText } = ws.read();
      expect(partners).toContain('  # Acme Corp: contract 2026-114, contact in the CRM\n  - username: acme\n');
      expect(partners).toContain('      - group: jobs:read # every partner\n');
      expect(keysText).toContain('    # rotated yearly\n    keyauth_credentials:\n');
    }
    expect(ws.read().partners).toBe(annotated);
    validateBoth();
  });
});

describe('a bad file is refused before anything is written', () => {
  async function withPartner(): Promise<void> {
    await keys(ws, ['issue', 'acme', '--scope', 'read']);
  }
  type Break = (t: { partners: string; keys: string }) => { partners?: string; keys?: string };
  const cases: Array<[string, Break, string]> = [
    ['partners.yaml is not YAML', (t) => ({ partners: `${t.partners}\n  - : [\n` }), 'partners.yaml: not valid YAML'],
    [
      'a key twice in a mapping',
      (t) => ({ partners: t.partners.replace('    tags:', '    username: acme\n    tags:') }),
      'not valid YAML',
    ],
    [
      'another select tag',
      (t) => ({ partners: t.partners.replace('    - jobs-partners\n', '    - jobs-api\n') }),
      '_info.select_tags: must be [jobs-partners]',
    ],
    [
      'a consumer id that is not a UUID',
      (t) => ({ partners: t.partners.replace(/( {2}- username: acme\n {4}id: )\S+/, '$1acme-1') }),
      'consumers[0].id: must be a UUID',
    ],
    [
      'an unknown group',
      (t) => ({ partners: t.partners.replace('group: jobs:read', 'group: admin') }),
      'consumers[0].acls[0].group: must be one of jobs:read, jobs:write, disabled',
    ],
    [
      'a partner without jobs:read',
      (t) => ({ partners: t.partners.replace('group: jobs:read', 'group: jobs:write') }),
      'must include jobs:read',
    ],
    [
      'a consumer tagged for one file only',
      (t) => ({ partners: t.partners.replace('tags: [jobs-partners, jobs-partner-keys]', 'tags: [jobs-partners]') }),
      'consumers[0].tags: must be [jobs-partners, jobs-partner-keys]',
    ],
    [
      'a credential in partners.yaml',
      (t) => ({
        partners: t.partners.replace(
          '    acls:',
          '    keyauth_credentials:\n      - key: \'${{ env "DECK_X" }}\'\n    acls:',
        ),
      }),
      'consumers[0]: Unrecognized key: "keyauth_credentials"',
    ],
    [
      'a literal key in partner-keys.yaml',
      (t) => ({ keys: t.keys.replace(/key: '.*'/, 'key: jl_live_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG') }),
      'never a literal key',
    ],
    [
      'a variable that does not match its credential',
      (t) => ({ keys: t.keys.replace(/_KEY_[0-9A-F]{8}/, '_KEY_00000000') }),
      'must read DECK_PARTNER_ACME_KEY_',
    ],
    [
      'a partner missing from partner-keys.yaml',
      (t) => ({ keys: t.keys.slice(0, t.keys.indexOf('consumers:')) + 'consumers: []\n' }),
      'consumer acme of',
    ],
    [
      'a different consumer id in partner-keys.yaml',
      (t) => ({
        keys: t.keys.replace(
          /( {2}- username: acme\n {4}id: )\S+/,
          (_m, head: string) => `${head}1f0e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b`,
        ),
      }),
      'has a different id or custom_id',
    ],
    [
      'the same partner twice',
      (t) => ({ partners: t.partners + t.partners.slice(t.partners.indexOf('  - username: acme')) }),
      'two consumers have username acme',
    ],
  ];
  test.each(cases)('%s', async (_name, breakIt, message) => {
    await withPartner();
    const broken = { ...ws.read(), ...breakIt(ws.read()) };
    ws.write('partners', broken.partners);
    ws.write('keys', broken.keys);
    for (const args of [['disable', 'acme'], ['issue', 'initech', '--scope', 'read'], ['rotate', 'acme'], ['list']]) {
      expect((await expectFilesKept(ws, args, 1, message)).out).toBe('');
    }
  });

  test('a missing file is named', async () => {
    ws.write('keys', '');
    const r = await keys(ws, ['list', '--keys-file', 'elsewhere.yaml']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${ws.dir}/elsewhere.yaml: no such file`);
  });
});
