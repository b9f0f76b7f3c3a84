import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { setDisabled } from './groups';
import { partnerCommand } from './partner-command';
import { whenEffective } from './shared';

export const disable = partnerCommand({
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
re-enables it, and Kong's copy of the partner is made equal to the files (as every --apply ends).
Safe to repeat.

Options:
${APPLY_HELP}
${FILE_HELP}`,
  async run(ctx) {
    const { wasDisabled } = await setDisabled(ctx, true);
    const effect = ctx.hints.applied ? 'every key of it is answered 403' : 'in partners.yaml';
    ctx.io.err(wasDisabled ? `${ctx.name} was already disabled` : `${ctx.name} is disabled: ${effect}`);
    whenEffective(ctx, ['partners.yaml']);
  },
});
