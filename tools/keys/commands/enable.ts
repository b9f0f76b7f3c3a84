import { removeGroup } from '../admin/requests';
import { adminClient, APPLY_HELP, APPLY_OPTIONS, FILE_HELP, FILE_OPTIONS, parse, storePaths } from '../cli/args';
import { GROUP_DISABLED } from '../partner';
import { PartnerStore } from '../state/store';
import type { Command } from './command';
import { applyToKong, notWritten, partnerName, saveFiles } from './shared';

const OPTIONS = { ...FILE_OPTIONS, ...APPLY_OPTIONS } as const;

export const enable: Command = {
  name: 'enable',
  summary: 'undo disable',
  help: `Usage: keys enable <partner> [--apply --admin-url URL]

Removes the partner from the ACL group "disabled" and changes nothing else: its keys work again
with the scope they had. With --apply: DELETE /consumers/{id}/acls/disabled. Safe to repeat.

Options:
${APPLY_HELP}
${FILE_HELP}`,
  async run(args, io) {
    const { values, positionals } = parse(args, OPTIONS, ['partner']);
    if (values.help) return io.out(this.help);
    const name = partnerName(positionals[0]);
    const client = adminClient(values, io);
    const store = PartnerStore.load(storePaths(values, io));
    const partner = store.get(name);
    const consumer = { id: partner.id, name };
    const outcome = await applyToKong(io, client, [
      { what: `remove group ${GROUP_DISABLED} from ${name}`, request: removeGroup(partner.id, GROUP_DISABLED), consumer, absentIsDone: true },
    ]);
    if (outcome && !outcome.ok) notWritten();
    store.setGroups(name, partner.groups.filter((g) => g !== GROUP_DISABLED));
    saveFiles(io, store, outcome !== null);
    io.err(partner.groups.includes(GROUP_DISABLED) ? `${name} is enabled again` : `${name} was not disabled`);
  },
};
