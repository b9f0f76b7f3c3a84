import { succeeded, type Step } from '../admin/apply';
import type { AdminClient } from '../admin/client';
import { createCredential, deleteCredential } from '../admin/requests';
import { adminClient, APPLY_HELP, APPLY_OPTIONS, FILE_HELP, FILE_OPTIONS, parse, storePaths } from '../cli/args';
import { Failure } from '../cli/errors';
import type { Io } from '../cli/io';
import { newId, newKey } from '../keygen';
import { keyVariable } from '../partner';
import { PartnerStore, type Partner } from '../state/store';
import type { Command } from './command';
import { applyToKong, notWritten, partnerName, printKey, saveFiles } from './shared';

const OPTIONS = { ...FILE_OPTIONS, ...APPLY_OPTIONS, 'revoke-old': { type: 'boolean' } } as const;

async function addKey(io: Io, client: AdminClient | null, store: PartnerStore, partner: Partner): Promise<void> {
  const id = newId();
  const variable = keyVariable(partner.name, id);
  const key = newKey();
  const consumer = { id: partner.id, name: partner.name };
  const outcome = await applyToKong(io, client, [{ what: `create credential ${id} for ${partner.name}`, request: createCredential(partner.id, id, key), consumer }]);
  if (outcome && !outcome.ok) notWritten();
  store.addCredential(partner.name, { id, variable });
  try {
    saveFiles(io, store, outcome !== null);
  } catch (err) {
    if (outcome) printKey(io, variable, key, true);
    throw err;
  }
  io.err(
    `${partner.name} now has ${partner.credentials.length + 1} keys; the old ones keep working. Once the partner has switched to the new one: keys rotate ${partner.name} --revoke-old`,
  );
  printKey(io, variable, key, outcome !== null);
}

async function revokeOld(io: Io, client: AdminClient | null, store: PartnerStore, partner: Partner): Promise<void> {
  const old = partner.credentials.slice(0, -1);
  const newest = partner.credentials[partner.credentials.length - 1];
  if (!newest || old.length === 0) {
    io.err(`${partner.name} has ${partner.credentials.length} key${partner.credentials.length === 1 ? '' : 's'}: nothing to revoke`);
    return;
  }
  const consumer = { id: partner.id, name: partner.name };
  const steps: Step[] = old.map((c) => ({ what: `revoke credential ${c.id} of ${partner.name}`, request: deleteCredential(partner.id, c.id), consumer, absentIsDone: true }));
  const outcome = await applyToKong(io, client, steps);
  // The files record exactly the credentials Kong no longer has: on a partial failure, the revoked ones.
  old.forEach((c, i) => {
    if (!outcome || succeeded(outcome, steps[i] as Step)) store.removeCredential(partner.name, c.id);
  });
  saveFiles(io, store, outcome !== null);
  if (outcome && !outcome.ok) {
    throw new Failure(`not every old key was revoked; the files now list exactly the keys Kong still has. Re-run the same command to finish`);
  }
  io.err(`${partner.name} keeps one key: credential ${newest.id} (${newest.variable}); remove the revoked variables from the secret manager`);
}

export const rotate: Command = {
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
  async run(args, io) {
    const { values, positionals } = parse(args, OPTIONS, ['partner']);
    if (values.help) return io.out(this.help);
    const name = partnerName(positionals[0]);
    const client = adminClient(values, io);
    const store = PartnerStore.load(storePaths(values, io));
    const partner = store.get(name);
    await (values['revoke-old'] ? revokeOld(io, client, store, partner) : addKey(io, client, store, partner));
  },
};
