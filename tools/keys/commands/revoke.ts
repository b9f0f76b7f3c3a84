import { deleteCredential } from '../admin/requests';
import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { Failure, UsageError } from '../cli/errors';
import { partnerCommand } from './partner-command';
import { whenEffective } from './shared';

export const revoke = partnerCommand({
  name: 'revoke',
  summary: 'remove one credential of a partner',
  help: `Usage: keys revoke <partner> --credential ID [--apply --admin-url URL]

Removes one credential (its id is in "keys list") from partner-keys.yaml and, with --apply, from
Kong (DELETE /consumers/{id}/key-auth/{credential id}): with --apply the key stops working at once,
without it at the next sync of partner-keys.yaml. To block a
partner entirely and reversibly, use disable. Safe to repeat on Kong: a credential Kong no longer
has counts as removed.

Options:
  --credential ID      required: the credential's id
${APPLY_HELP}
${FILE_HELP}`,
  options: { credential: { type: 'string' } },
  async run({ io, name, values, store, partner: get, applyThenWrite }) {
    if (!values.credential) throw new UsageError('--credential ID is required (see: keys list)');
    const partner = get();
    const credential = partner.credentials.find((c) => c.id === values.credential?.toLowerCase());
    if (!credential) {
      throw new Failure(
        `${name} has no credential ${values.credential} (${partner.credentials.length > 0 ? `its credentials: ${partner.credentials.map((c) => c.id).join(', ')}` : 'it has none'})`,
      );
    }
    const consumer = { id: partner.id, name };
    const outcome = await applyThenWrite({
      steps: [{ what: `revoke credential ${credential.id} of ${name}`, request: deleteCredential(partner.id, credential.id), consumer, absentIsDone: true }],
      record: () => store.removeCredential(name, credential.id),
    });
    const left = partner.credentials.length - 1;
    io.err(
      `revoked credential ${credential.id} of ${name}; ${name} has ${left === 0 ? 'no key left' : `${left} key${left === 1 ? '' : 's'} left`}. Remove ${credential.variable} from the secret manager: partner-keys.yaml no longer references it`,
    );
    whenEffective(io, outcome !== null, ['partner-keys.yaml']);
  },
});
