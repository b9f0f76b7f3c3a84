import type { Step } from '../admin/apply';
import { readLive } from '../admin/live';
import { deleteCredential } from '../admin/requests';
import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { Failure, UsageError } from '../cli/errors';
import { fingerprint } from '../fingerprint';
import { partnerCommand, type PartnerRun } from './partner-command';
import { whenEffective } from './shared';

type Run = PartnerRun<{ credential?: string }>;

/** `--all`: every key Kong holds for the partner is deleted now, whatever the files say; then the files drop every credential. */
async function revokeAll({ io, name, client, store, hints, applyThenWrite }: Run): Promise<void> {
  const partner = store.find(name);
  const live = client ? await readLive(client, { ...(partner ? { id: partner.id } : {}), name }) : null;
  if (!partner && !live)
    throw new Failure(
      client
        ? `neither the files nor Kong at ${client.base} have a partner "${name}"`
        : `unknown partner "${name}" in the files (with --apply, Kong is asked too)`,
    );
  const consumer = { id: live?.id ?? partner!.id, name };
  const steps: Step[] = (live?.credentials ?? []).map((c) => ({
    what: `delete credential ${c.id} (${fingerprint(c.key)}) of ${name}`,
    request: deleteCredential(consumer.id, c.id),
    consumer,
    absentIsDone: true,
  }));
  // The files drop every key even if Kong refused one: they are the truth the next --apply restores.
  const outcome = await applyThenWrite({
    steps,
    partial: true,
    record: () => partner?.credentials.forEach((c) => store.removeCredential(name, c.id)),
  });
  if (outcome && !outcome.ok)
    throw new Failure(
      `Kong may still have some of ${name}'s keys (see above); the files have none. Re-run: ${hints.command(['revoke', name, '--all'])}`,
    );
  const variables = partner?.credentials.map((c) => c.variable) ?? [];
  io.err(
    `revoked every key of ${name}: ${client ? `${steps.length} in Kong` : 'Kong not asked'}, ${variables.length} in partner-keys.yaml.` +
      (variables.length > 0 ? ` Remove ${variables.join(', ')} from the secret manager.` : '') +
      (partner ? ` A new key: ${hints.command(['rotate', name])}` : ''),
  );
  whenEffective({ io, hints, name }, ['partner-keys.yaml']);
}

export const revoke = partnerCommand({
  name: 'revoke',
  summary: 'remove one credential of a partner, or --all of them (emergency)',
  help: `Usage: keys revoke <partner> --credential ID [--apply --admin-url URL]
       keys revoke <partner> --all [--apply --admin-url URL]

Removes one credential (its id is in "keys list" and "keys status") from partner-keys.yaml and,
with --apply, from Kong (DELETE /consumers/{id}/key-auth/{credential id}): with --apply the key
stops working at once, without it only when Kong follows the files. With --apply a credential the
files no longer have is still deleted from Kong. To block a partner entirely and reversibly, use
disable. Safe to repeat on Kong: a credential Kong no longer has counts as removed.

--all is the emergency: with --apply every key Kong holds for the partner is deleted now, read from
Kong itself (whatever the files say, even for a consumer in neither file), and the files then list
no key for it. A new key afterwards: keys rotate <partner> --apply.

Options:
  --credential ID      the credential's id
  --all                every credential of the partner
${APPLY_HELP}
${FILE_HELP}`,
  options: { credential: { type: 'string' }, all: { type: 'boolean' } },
  async run(ctx) {
    const { io, name, values, client, store, hints, applyThenWrite } = ctx;
    if (values.all && values.credential) throw new UsageError('--credential and --all exclude each other');
    if (values.all) return revokeAll(ctx);
    if (!values.credential) throw new UsageError('--credential ID (see: keys list) or --all is required');
    const id = values.credential.toLowerCase();
    const partner = store.find(name);
    const credential = partner?.credentials.find((c) => c.id === id);
    if (!partner || !credential) {
      const live = client ? await readLive(client, { ...(partner ? { id: partner.id } : {}), name }) : null;
      const inKong = live?.credentials.find((c) => c.id === id);
      if (!live || !inKong) {
        const known = partner
          ? partner.credentials.length > 0
            ? `its credentials: ${partner.credentials.map((c) => c.id).join(', ')}`
            : 'it has none'
          : 'no such partner';
        throw new Failure(
          `partner-keys.yaml has no credential ${values.credential} of ${name} (${known})` +
            (client
              ? `, and neither has Kong`
              : `; if Kong still has it, ${hints.command(['revoke', name, '--credential', id], 'apply')} deletes it there`),
        );
      }
      const consumer = { id: live.id, name };
      await applyThenWrite({
        steps: [
          {
            what: `revoke credential ${id} (${fingerprint(inKong.key)}) of ${name}, which the files no longer have`,
            request: deleteCredential(live.id, id),
            consumer,
            absentIsDone: true,
          },
        ],
        record: () => undefined,
      });
      io.err(`revoked credential ${id} of ${name} in Kong; partner-keys.yaml already did not have it`);
      return whenEffective({ io, hints, name }, ['partner-keys.yaml']);
    }
    await applyThenWrite({
      steps: [
        {
          what: `revoke credential ${credential.id} of ${name}`,
          request: deleteCredential(partner.id, credential.id),
          consumer: { id: partner.id, name },
          absentIsDone: true,
        },
      ],
      record: () => store.removeCredential(name, credential.id),
    });
    const left = partner.credentials.length - 1;
    io.err(
      `revoked credential ${credential.id} of ${name}; ${name} has ${left === 0 ? 'no key left' : `${left} key${left === 1 ? '' : 's'} left`}. Remove ${credential.variable} from the secret manager: partner-keys.yaml no longer references it`,
    );
    whenEffective({ io, hints, name }, ['partner-keys.yaml']);
  },
});
