import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { UsageError } from '../cli/errors';
import { GROUP_DISABLED, GROUP_WRITE, Scope, scopeGroups } from '../partner';
import { groupStep } from './groups';
import { partnerCommand } from './partner-command';
import { whenEffective } from './shared';

export const scope = partnerCommand({
  name: 'scope',
  summary: "change a partner's access level; the key stays the same",
  help: `Usage: keys scope <partner> read|write [--apply --admin-url URL]

Sets the partner's ACL groups for the scope (read: jobs:read; write: jobs:read and jobs:write) and
changes nothing else: the same key keeps working with the new rights. A disabled partner stays
disabled.

With --apply: write adds the group (PUT /consumers/{id}/acls/jobs:write), read removes it
(DELETE /consumers/{id}/acls/jobs:write); both are safe to repeat.

Options:
${APPLY_HELP}
${FILE_HELP}`,
  positionals: ['partner', 'read|write'],
  async run({ io, name, positionals, store, hints, partner: get, applyThenWrite }) {
    const target = Scope.safeParse(positionals[1]);
    if (!target.success) throw new UsageError(`scope: expected read or write, found "${positionals[1]}"`);
    const partner = get();
    const current = partner.groups.includes(GROUP_WRITE) ? 'write' : 'read';
    await applyThenWrite({
      steps: [groupStep(partner, GROUP_WRITE, target.data === 'write')],
      record: () =>
        store.setGroups(name, [
          ...scopeGroups(target.data),
          ...(partner.groups.includes(GROUP_DISABLED) ? [GROUP_DISABLED] : []),
        ]),
    });
    io.err(
      current === target.data
        ? `${name} already has scope ${current}`
        : `${name}: scope ${current} -> ${target.data}; its keys are unchanged`,
    );
    whenEffective({ io, hints, name }, ['partners.yaml']);
  },
});
