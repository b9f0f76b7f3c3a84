import { succeeded, type Step } from '../admin/apply';
import { createCredential, deleteCredential } from '../admin/requests';
import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { Failure } from '../cli/errors';
import { newId, newKey } from '../keygen';
import { keyVariable } from '../partner';
import type { Partner } from '../state/store';
import { partnerCommand, type PartnerRun } from './partner-command';
import { printKey, whenEffective } from './shared';

type Run = Pick<PartnerRun<unknown>, 'io' | 'name' | 'store' | 'hints' | 'applyThenWrite'>;

async function addKey(run: Run, partner: Partner): Promise<void> {
  const { io, store, hints, applyThenWrite } = run;
  const id = newId();
  const variable = keyVariable(partner.name, id);
  const key = newKey();
  const consumer = { id: partner.id, name: partner.name };
  await applyThenWrite({
    steps: [
      { what: `create credential ${id} for ${partner.name}`, request: createCredential(partner.id, id, key), consumer },
    ],
    record: () => store.addCredential(partner.name, { id, variable }),
    key: { variable, key },
  });
  io.err(
    `${partner.name} now has ${partner.credentials.length + 1} keys; the old ones keep working. Once the partner has switched to the new one: ${hints.command(['rotate', partner.name, '--revoke-old'])}`,
  );
  printKey(io, variable, key);
  whenEffective(run, ['partner-keys.yaml'], [variable]);
}

async function revokeOld(run: Run, partner: Partner): Promise<void> {
  const { io, store, hints, applyThenWrite } = run;
  const old = partner.credentials.slice(0, -1);
  const newest = partner.credentials[partner.credentials.length - 1];
  if (!newest || old.length === 0) {
    const count = `${partner.name} has ${partner.credentials.length} key${partner.credentials.length === 1 ? '' : 's'} in partner-keys.yaml: nothing to revoke there`;
    // Kong may still hold keys an earlier run took out of the files only: --apply removes them next; without it, status shows them.
    io.err(
      hints.applied
        ? `${count}; Kong follows the files next.`
        : `${count}. Kong may still have keys the files no longer list: ${hints.command(['status'], 'read')} shows them.`,
    );
    return;
  }
  const consumer = { id: partner.id, name: partner.name };
  const steps: Step[] = old.map((c) => ({
    what: `revoke credential ${c.id} of ${partner.name}`,
    request: deleteCredential(partner.id, c.id),
    consumer,
    absentIsDone: true,
  }));
  const outcome = await applyThenWrite({
    steps,
    // The files record exactly the credentials Kong no longer has: on a partial failure, the revoked ones.
    partial: true,
    record: (done) =>
      old.forEach((c, i) => {
        if (!done || succeeded(done, steps[i] as Step)) store.removeCredential(partner.name, c.id);
      }),
  });
  if (outcome && !outcome.ok) {
    throw new Failure(
      `not every old key was revoked; the files now list exactly the keys Kong still has. Re-run the same command to finish`,
    );
  }
  const gone = old.map((c) => c.variable);
  io.err(
    `${partner.name} keeps one key: credential ${newest.id} (${newest.variable}). Remove ${gone.join(', ')} from the secret manager: partner-keys.yaml no longer references ${gone.length === 1 ? 'it' : 'them'}`,
  );
  whenEffective(run, ['partner-keys.yaml']);
}

export const rotate = partnerCommand({
  name: 'rotate',
  summary: 'give a partner a second key; --revoke-old later removes the previous ones',
  help: `Usage: keys rotate <partner> [--apply --admin-url URL]
       keys rotate <partner> --revoke-old [--apply --admin-url URL]

Rotation in two steps, so that the partner is never without a working key:
1. "rotate <partner>" adds a credential with a new key (printed once, like issue); the partner now
   has two working keys. With --apply: POST /consumers/{id}/key-auth.
2. Once the partner has switched, "rotate <partner> --revoke-old" removes every credential but the
   newest (creates nothing). With --apply: DELETE /consumers/{id}/key-auth/{credential id} each.

Options:
  --revoke-old         step 2: remove all but the newest credential
${APPLY_HELP}
${FILE_HELP}`,
  options: { 'revoke-old': { type: 'boolean' } },
  async run(ctx) {
    const partner = ctx.partner();
    await (ctx.values['revoke-old'] ? revokeOld(ctx, partner) : addKey(ctx, partner));
  },
});
