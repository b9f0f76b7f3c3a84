import { addGroup } from '../admin/requests';
import { adminClient, APPLY_HELP, APPLY_OPTIONS, FILE_HELP, FILE_OPTIONS, parse, storePaths } from '../cli/args';
import { GROUP_DISABLED } from '../partner';
import { PartnerStore } from '../state/store';
import type { Command } from './command';
import { applyToKong, notWritten, partnerName, saveFiles } from './shared';

const OPTIONS = { ...FILE_OPTIONS, ...APPLY_OPTIONS } as const;

export const disable: Command = {
  name: 'disable',
  summary: "block all of a partner's keys at once (403 API key disabled)",
  help: `Usage: keys disable <partner> [--apply --admin-url URL]

Adds the partner to the ACL group "disabled" and changes nothing else: every key of the partner
is then answered 403 {"error":"API key disabled"}; enable undoes it. The keys themselves are not
changed, so nothing needs to be re-issued if the alarm was false.

For a compromised key this is the fastest path: with --apply it is ONE request,
PUT /consumers/{id}/acls/disabled, and Kong refuses the key within seconds: the ACL change
invalidates the consumer's cached groups (Kong 3.9 kong/plugins/acl/acls.lua), on other nodes
within db_update_frequency (5 s by default). Then partners.yaml is written so that no later sync
re-enables it.
Safe to repeat.

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
    const outcome = await applyToKong(io, client, [{ what: `add group ${GROUP_DISABLED} to ${name}`, request: addGroup(partner.id, GROUP_DISABLED), consumer }]);
    if (outcome && !outcome.ok) notWritten();
    store.setGroups(name, [...partner.groups.filter((g) => g !== GROUP_DISABLED), GROUP_DISABLED]);
    saveFiles(io, store, outcome !== null);
    io.err(
      partner.groups.includes(GROUP_DISABLED)
        ? `${name} was already disabled`
        : `${name} is disabled${outcome ? '' : ' in the files; Kong still lets its keys in until partners.yaml is synced (use --apply for at once)'}`,
    );
  },
};
