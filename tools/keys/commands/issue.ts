import type { Step } from '../admin/apply';
import { addGroup, createConsumer, createCredential, deleteConsumer } from '../admin/requests';
import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { Failure, UsageError } from '../cli/errors';
import { newId, newKey } from '../keygen';
import { CustomId, keyVariable, Scope, scopeGroups } from '../partner';
import { partnerCommand } from './partner-command';
import { printKey, whenEffective } from './shared';

export const issue = partnerCommand({
  name: 'issue',
  summary: 'add a partner with a new key and a scope',
  help: `Usage: keys issue <partner> --scope read|write [--custom-id ID] [--apply --admin-url URL]

Adds the partner: a consumer with fixed generated ids, its ACL groups (read: jobs:read; write:
jobs:read and jobs:write) in partners.yaml, and one credential in partner-keys.yaml as a decK
environment reference. The key (jl_live_ + 32 random bytes, base64url) is printed once on stdout
as VARIABLE=key; no file or log ever holds it.

With --apply, Kong gets the consumer, its groups and then the key (POST /consumers, PUT
/consumers/{id}/acls/{group}, POST /consumers/{id}/key-auth); if a request fails, the consumer
created so far is deleted again and no file is written.

Options:
  --scope read|write   required
  --custom-id ID       Kong's custom_id for the consumer (forwarded as X-Consumer-Custom-ID)
${APPLY_HELP}
${FILE_HELP}`,
  options: { scope: { type: 'string' }, 'custom-id': { type: 'string' } },
  async run({ io, name, values, store, hints, applyThenWrite }) {
    const scope = Scope.safeParse(values.scope);
    if (!scope.success)
      throw new UsageError(
        values.scope === undefined
          ? '--scope read|write is required'
          : `--scope: expected read or write, found "${values.scope}"`,
      );
    let customId: string | undefined;
    if (values['custom-id'] !== undefined) {
      const parsed = CustomId.safeParse(values['custom-id']);
      if (!parsed.success) throw new UsageError(`--custom-id: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      customId = parsed.data;
    }
    if (store.find(name))
      throw new Failure(`partner "${name}" already exists (use rotate for another key, scope to change its access)`);
    const taken = customId !== undefined ? store.partners().find((p) => p.customId === customId) : undefined;
    if (taken) throw new Failure(`custom_id "${customId}" already belongs to partner "${taken.name}"`);

    const id = newId();
    const credential = { id: newId(), variable: '' };
    credential.variable = keyVariable(name, credential.id);
    const key = newKey();
    const groups = scopeGroups(scope.data);
    const consumer = { id, name };
    const create: Step = {
      what: `create consumer ${name}`,
      request: createConsumer({ id, name, ...(customId !== undefined ? { customId } : {}) }),
      consumer,
    };
    const steps: Step[] = [
      create,
      ...groups.map((group) => ({ what: `add group ${group} to ${name}`, request: addGroup(id, group), consumer })),
      {
        what: `create credential ${credential.id} for ${name}`,
        request: createCredential(id, credential.id, key),
        consumer,
      },
    ];
    await applyThenWrite({
      steps,
      rollback: (done) =>
        done.includes(create)
          ? {
              what: `delete the half-made consumer ${name} (its groups and key go with it)`,
              request: deleteConsumer(id),
              consumer,
            }
          : undefined,
      record: () => store.addPartner({ name, id, ...(customId !== undefined ? { customId } : {}), groups }, credential),
      key: { variable: credential.variable, key },
    });
    io.err(`partner ${name}: consumer ${id}, scope ${scope.data}, credential ${credential.id}`);
    printKey(io, credential.variable, key);
    whenEffective({ io, hints, name }, ['partners.yaml', 'partner-keys.yaml'], [credential.variable]);
  },
});
