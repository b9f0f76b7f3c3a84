import type { Step } from '../admin/apply';
import { addGroup, removeGroup } from '../admin/requests';
import { adminClient, APPLY_HELP, APPLY_OPTIONS, FILE_HELP, FILE_OPTIONS, parse, storePaths } from '../cli/args';
import { UsageError } from '../cli/errors';
import { GROUP_DISABLED, GROUP_WRITE, Scope, scopeGroups } from '../partner';
import { PartnerStore } from '../state/store';
import type { Command } from './command';
import { applyToKong, notWritten, partnerName, saveFiles } from './shared';

const OPTIONS = { ...FILE_OPTIONS, ...APPLY_OPTIONS } as const;

export const scope: Command = {
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
  async run(args, io) {
    const { values, positionals } = parse(args, OPTIONS, ['partner', 'read|write']);
    if (values.help) return io.out(this.help);
    const name = partnerName(positionals[0]);
    const target = Scope.safeParse(positionals[1]);
    if (!target.success) throw new UsageError(`scope: expected read or write, found "${positionals[1]}"`);
    const client = adminClient(values, io);
    const store = PartnerStore.load(storePaths(values, io));
    const partner = store.get(name);
    const current = partner.groups.includes(GROUP_WRITE) ? 'write' : 'read';
    const consumer = { id: partner.id, name };
    const step: Step =
      target.data === 'write'
        ? { what: `add group ${GROUP_WRITE} to ${name}`, request: addGroup(partner.id, GROUP_WRITE), consumer }
        : { what: `remove group ${GROUP_WRITE} from ${name}`, request: removeGroup(partner.id, GROUP_WRITE), consumer, absentIsDone: true };
    const outcome = await applyToKong(io, client, [step]);
    if (outcome && !outcome.ok) notWritten();
    store.setGroups(name, [...scopeGroups(target.data), ...(partner.groups.includes(GROUP_DISABLED) ? [GROUP_DISABLED] : [])]);
    saveFiles(io, store, outcome !== null);
    io.err(current === target.data ? `${name} already has scope ${current}` : `${name}: scope ${current} -> ${target.data}; its keys are unchanged`);
  },
};
