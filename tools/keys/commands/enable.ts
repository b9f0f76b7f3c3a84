import { removeGroup } from '../admin/requests';
import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { GROUP_DISABLED } from '../partner';
import { partnerCommand } from './partner-command';

export const enable = partnerCommand({
  name: 'enable',
  summary: 'undo disable',
  help: `Usage: keys enable <partner> [--apply --admin-url URL]

Removes the partner from the ACL group "disabled" and changes nothing else: its keys work again
with the scope they had. With --apply: DELETE /consumers/{id}/acls/disabled. Safe to repeat.

Options:
${APPLY_HELP}
${FILE_HELP}`,
  async run({ io, name, store, partner: get, applyThenWrite }) {
    const partner = get();
    const consumer = { id: partner.id, name };
    await applyThenWrite({
      steps: [{ what: `remove group ${GROUP_DISABLED} from ${name}`, request: removeGroup(partner.id, GROUP_DISABLED), consumer, absentIsDone: true }],
      record: () => store.setGroups(name, partner.groups.filter((g) => g !== GROUP_DISABLED)),
    });
    io.err(partner.groups.includes(GROUP_DISABLED) ? `${name} is enabled again` : `${name} was not disabled`);
  },
});
