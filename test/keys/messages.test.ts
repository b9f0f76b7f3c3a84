// One voice for the commands that change what Kong lets in: each says when the change is Kong's
// (with --apply: now; without: one line saying it is NOT in effect and the command that makes it
// so, with the variables that command needs) and what the operator does next, naming the variables.
import { APPLY, fakeKongPerTest, isolateNetwork } from './fake-kong';
import { keys, printedKey, workspacePerTest, type RunResult } from './support';

isolateNetwork();
const ws = workspacePerTest();
const kong = fakeKongPerTest();

const NOW = 'In effect now: Kong took the change (--apply)';
const later = (files: string) => `makes it so now (or the next sync of ${files}).`;
const NOT = 'NOT in effect: Kong does not have this change; keys reconcile acme --apply --admin-url URL';

/** Runs the command; one with --apply meets a Kong equal to the files. */
async function ok(args: string[]): Promise<RunResult> {
  if (args.includes('--apply')) kong.seed(ws.state());
  const r = await keys(ws, args);
  expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
  return r;
}

/** Says exactly one of the two, the right one; without --apply in one line, naming the keys the reconcile needs. */
function expectSays(r: RunResult, applied: boolean, files: string, variables: string[] = []): void {
  if (applied) {
    expect(r.err).toContain(NOW);
    expect(r.err).not.toMatch(/NOT in effect/i);
  } else {
    const env = variables.length > 0 ? ` with ${variables.join(', ')} in its environment` : '';
    expect(r.err.split('\n').filter((l) => l.startsWith('NOT in effect'))).toEqual([`${NOT}${env} ${later(files)}`]);
    expect(r.err).not.toContain(NOW);
  }
}

const groupCommands: Array<[string, string[]]> = [
  ['scope write', ['scope', 'acme', 'write']],
  ['disable', ['disable', 'acme']],
  ['enable', ['enable', 'acme']],
];

describe.each([
  ['without --apply', false],
  ['with --apply', true],
])('%s', (_label, applied) => {
  const apply = applied ? APPLY : [];

  test('issue: the key goes to the secret manager under its variable; both files carry it to Kong', async () => {
    const r = await ok(['issue', 'acme', '--scope', 'read', ...apply]);
    const { variable } = printedKey(r);
    expect(r.err).toContain(`put it in the secret manager as ${variable}`);
    expectSays(r, applied, 'partners.yaml and partner-keys.yaml', [variable]);
  });

  test.each(groupCommands)('%s: partners.yaml carries it', async (_name, args) => {
    await ok(['issue', 'acme', '--scope', 'read']);
    if (args[0] === 'enable') await ok(['disable', 'acme']);
    expectSays(await ok([...args, ...apply]), applied, 'partners.yaml');
  });

  test('rotate, then rotate --revoke-old: partner-keys.yaml carries both; the revoked variables are named', async () => {
    const first = printedKey(await ok(['issue', 'acme', '--scope', 'read'])).variable;
    const second = await ok(['rotate', 'acme', ...apply]);
    expectSays(second, applied, 'partner-keys.yaml', [printedKey(second).variable]);
    // The next step's hint carries the flags this run used.
    expect(second.err).toContain(
      `Once the partner has switched to the new one: keys rotate acme --revoke-old${applied ? ` ${APPLY.join(' ')}` : ''}\n`,
    );
    const third = printedKey(await ok(['rotate', 'acme'])).variable;
    const revoked = await ok(['rotate', 'acme', '--revoke-old', ...apply]);
    expect(revoked.err).toContain(
      `Remove ${first}, ${printedKey(second).variable} from the secret manager: partner-keys.yaml no longer references them`,
    );
    expect(revoked.err).toContain(`(${third})`);
    expectSays(revoked, applied, 'partner-keys.yaml');
  });

  test('revoke: names the variable to remove', async () => {
    const { variable } = printedKey(await ok(['issue', 'acme', '--scope', 'read']));
    const credential = ws.state().keys.consumers[0].keyauth_credentials[0].id as string;
    const r = await ok(['revoke', 'acme', '--credential', credential, ...apply]);
    expect(r.err).toContain(`Remove ${variable} from the secret manager: partner-keys.yaml no longer references it`);
    expectSays(r, applied, 'partner-keys.yaml');
  });
});

test('the commands that only read say nothing of the kind', async () => {
  await ok(['issue', 'acme', '--scope', 'read']);
  const list = await ok(['list']);
  expect(list.err + list.out).not.toMatch(/in effect/i);
});
