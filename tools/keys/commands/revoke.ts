import { deleteCredential } from '../admin/requests';
import { adminClient, APPLY_HELP, APPLY_OPTIONS, FILE_HELP, FILE_OPTIONS, parse, storePaths } from '../cli/args';
import { Failure, UsageError } from '../cli/errors';
import { PartnerStore } from '../state/store';
import type { Command } from './command';
import { applyToKong, notWritten, partnerName, saveFiles } from './shared';

const OPTIONS = { ...FILE_OPTIONS, ...APPLY_OPTIONS, credential: { type: 'string' } } as const;

export const revoke: Command = {
  name: 'revoke',
  summary: 'remove one credential of a partner',
  help: `Usage: keys revoke <partner> --credential ID [--apply --admin-url URL]

Removes one credential (its id is in "keys list") from partner-keys.yaml and, with --apply, from
Kong (DELETE /consumers/{id}/key-auth/{credential id}); the key stops working at once. To block a
partner entirely and reversibly, use disable. Safe to repeat on Kong: a credential Kong no longer
has counts as removed.

Options:
  --credential ID      required: the credential's id
${APPLY_HELP}
${FILE_HELP}`,
  async run(args, io) {
    const { values, positionals } = parse(args, OPTIONS, ['partner']);
    if (values.help) return io.out(this.help);
    const name = partnerName(positionals[0]);
    if (!values.credential) throw new UsageError('--credential ID is required (see: keys list)');
    const client = adminClient(values, io);
    const store = PartnerStore.load(storePaths(values, io));
    const partner = store.get(name);
    const credential = partner.credentials.find((c) => c.id === values.credential?.toLowerCase());
    if (!credential) {
      throw new Failure(
        `${name} has no credential ${values.credential} (${partner.credentials.length > 0 ? `its credentials: ${partner.credentials.map((c) => c.id).join(', ')}` : 'it has none'})`,
      );
    }
    const consumer = { id: partner.id, name };
    const outcome = await applyToKong(io, client, [
      { what: `revoke credential ${credential.id} of ${name}`, request: deleteCredential(partner.id, credential.id), consumer, absentIsDone: true },
    ]);
    if (outcome && !outcome.ok) notWritten();
    store.removeCredential(name, credential.id);
    saveFiles(io, store, outcome !== null);
    const left = partner.credentials.length - 1;
    io.err(`revoked credential ${credential.id} of ${name}; remove ${credential.variable} from the secret manager. ${name} has ${left === 0 ? 'no key left' : `${left} key${left === 1 ? '' : 's'} left`}`);
  },
};
