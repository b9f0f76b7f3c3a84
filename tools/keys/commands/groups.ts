/** ACL group changes of one partner: the step scope, disable and enable send, and what disable and enable share. */
import type { Outcome, Step } from '../admin/apply';
import { addGroup, removeGroup } from '../admin/requests';
import { GROUP_DISABLED } from '../partner';
import type { Partner } from '../state/store';
import type { PartnerRun } from './partner-command';

/** PUT or DELETE /consumers/{id}/acls/{group}; both are safe to repeat (a group already gone counts as removed). */
export function groupStep(partner: Partner, group: string, member: boolean): Step {
  const consumer = { id: partner.id, name: partner.name };
  return member
    ? { what: `add group ${group} to ${partner.name}`, request: addGroup(partner.id, group), consumer }
    : {
        what: `remove group ${group} from ${partner.name}`,
        request: removeGroup(partner.id, group),
        consumer,
        absentIsDone: true,
      };
}

/** Puts the partner in the group "disabled" or takes it out, changing nothing else, in Kong (with --apply) and then in the files. */
export async function setDisabled(
  {
    name,
    store,
    partner: get,
    applyThenWrite,
  }: Pick<PartnerRun<unknown>, 'name' | 'store' | 'partner' | 'applyThenWrite'>,
  disabled: boolean,
): Promise<{ wasDisabled: boolean; outcome: Outcome | null }> {
  const partner = get();
  const others = partner.groups.filter((g) => g !== GROUP_DISABLED);
  const outcome = await applyThenWrite({
    steps: [groupStep(partner, GROUP_DISABLED, disabled)],
    record: () => store.setGroups(name, disabled ? [...others, GROUP_DISABLED] : others),
  });
  return { wasDisabled: partner.groups.includes(GROUP_DISABLED), outcome };
}
