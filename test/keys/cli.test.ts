// The command line itself: help for the tool and for every command, exit codes 0/1/2, and the
// keys and ids it generates.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COMMANDS } from '../../tools/keys/commands';
import { newId, newKey } from '../../tools/keys/keygen';
import { keyVariable } from '../../tools/keys/partner';
import { run } from '../../tools/keys/run';
import { UUID } from './support';

/** Runs in an empty directory: help must not need the state files. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keys-cli-'));
  const out: string[] = [];
  const err: string[] = [];
  try {
    const code = await run(args, { out: (t) => out.push(t), err: (t) => err.push(t), env: {}, cwd: dir });
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('help and exit codes', () => {
  test('--help lists every command and the one-line recipe for a compromised key (exit 0, stdout)', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['issue', 'scope', 'disable', 'enable', 'rotate', 'revoke', 'list', 'status', 'reconcile', 'sync'])
      expect(r.out).toMatch(new RegExp(`^  ${c} `, 'm'));
    expect(r.out).toContain('A compromised key:  keys disable <partner> --apply --admin-url URL');
    expect((await cli(['help'])).out).toBe(r.out);
  });

  test.each(COMMANDS.map((c) => c.name))(
    '%s --help describes the command and its options without reading any file',
    async (name) => {
      const r = await cli([name, '--help']);
      expect(r).toMatchObject({ code: 0, err: '' });
      expect(r.out).toMatch(new RegExp(`^Usage: keys ${name} `));
      // sync takes the state files as arguments and always talks to Kong; the others edit the two files.
      if (name === 'sync' || name === 'status') expect(r.out).toContain('--admin-url URL');
      else expect(r.out).toContain('--file PATH');
      if (!['list', 'sync', 'status'].includes(name)) expect(r.out).toContain('--apply');
      expect((await cli([name, '-h'])).out).toBe(r.out);
    },
  );

  test('no command, an unknown command, an unknown option or a missing argument: exit 2 with the reason on stderr', async () => {
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.err).toContain('Usage:');
    const unknown = await cli(['delete', 'acme']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown command "delete"');
    const option = await cli(['disable', 'acme', '--now']);
    expect(option.code).toBe(2);
    expect(option.err).toContain("Unknown option '--now'");
    expect(option.err).toContain('see: keys disable --help');
    expect(await cli(['disable'])).toMatchObject({ code: 2, err: expect.stringContaining('missing <partner>') });
    expect(await cli(['scope', 'acme'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('missing <read|write>'),
    });
    expect((await cli(['list', 'extra'])).code).toBe(2);
    for (const r of [none, unknown, option]) expect(r.out).toBe('');
  });

  test('a command that fails on a well-formed command line exits 1 (here: no state files)', async () => {
    const r = await cli(['list']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/partners\.yaml: no such file/);
  });
});

describe('generated keys and ids', () => {
  test('keys: jl_live_ + 32 CSPRNG bytes in base64url (43 characters, no padding), never repeated', () => {
    const keys = Array.from({ length: 2000 }, newKey);
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of keys) {
      expect(key).toMatch(/^jl_live_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(key.slice('jl_live_'.length), 'base64url')).toHaveLength(32);
    }
    // Every base64url character shows up: the bytes are not drawn from a narrow alphabet.
    expect(new Set(keys.join('').replace(/jl_live_/g, '')).size).toBe(64);
  });

  test('ids are UUID v4, and a credential variable names its partner and credential', () => {
    const ids = Array.from({ length: 500 }, newId);
    expect(new Set(ids).size).toBe(500);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(keyVariable('acme-jobs-2', '9b7a2c44-1111-4111-8111-111111111111')).toBe(
      'DECK_PARTNER_ACME_JOBS_2_KEY_9B7A2C44',
    );
  });
});
