import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { UsageError } from '../cli/errors';
import { partnerCommand } from './partner-command';

/** Changes nothing in the files: the reconcile every --apply ends with, on its own. */
export const reconcile = partnerCommand({
  name: 'reconcile',
  summary: "make Kong's copy of a partner equal to the files (what every --apply ends with)",
  help: `Usage: keys reconcile <partner> --apply --admin-url URL

Reads the partner from Kong (consumer, ACL groups, key-auth credentials) and makes it equal to the
files, which are the truth: a credential Kong has and partner-keys.yaml does not is deleted (also
one added in Kong by hand), groups are added or removed (disabled included), a missing consumer
is created, and a partner in neither file is deleted from Kong with its keys. A credential of
partner-keys.yaml that Kong lacks is created only if its DECK_PARTNER_ variable is in the
environment (the key is nowhere else); otherwise the command says so and exits 1.
Every other command run with --apply does this for its partner after its own change;
"keys status" shows what it would do for every partner.

Options:
${APPLY_HELP}
${FILE_HELP}`,
  run({ client }) {
    if (!client)
      throw new UsageError(
        'reconcile changes only Kong: it needs --apply (see what differs with: keys status --admin-url URL)',
      );
  },
});
