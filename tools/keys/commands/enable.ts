import { APPLY_HELP, FILE_HELP } from '../cli/args';
import { setDisabled } from './groups';
import { partnerCommand } from './partner-command';
import { whenEffective } from './shared';

export const enable = partnerCommand({
  name: 'enable',
  summary: 'undo disable',
  help: `Usage: keys enable <partner> [--apply --admin-url URL]

Removes the partner from the ACL group "disabled" and changes nothing else: its keys work again
with the scope they had. With --apply: DELETE /consumers/{id}/acls/disabled. Safe to repeat.

Options:
${APPLY_HELP}
${FILE_HELP}`,
  async run(ctx) {
    const { wasDisabled } = await setDisabled(ctx, false);
    ctx.io.err(wasDisabled ? `${ctx.name} is enabled again` : `${ctx.name} was not disabled`);
    whenEffective(ctx, ['partners.yaml']);
  },
});
