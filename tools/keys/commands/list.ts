import { FILE_HELP, FILE_OPTIONS, parse, storePaths } from '../cli/args';
import { GROUP_DISABLED, GROUP_WRITE } from '../partner';
import { PartnerStore } from '../state/store';
import type { Command } from './command';

const OPTIONS = { ...FILE_OPTIONS, json: { type: 'boolean' } } as const;

export const list: Command = {
  name: 'list',
  summary: 'partners, scopes, disabled or not, credential ids (never a key)',
  help: `Usage: keys list [--json]

Reads partners.yaml and partner-keys.yaml (not Kong: keys status compares with Kong) and prints every partner: scope, whether it
is disabled, and its credentials (ids and the variable that holds each key). Keys are never shown:
no file holds them.

Options:
  --json               one JSON array instead of the table
${FILE_HELP}`,
  run(args, io) {
    const { values } = parse(args, OPTIONS, []);
    if (values.help) return io.out(this.help);
    const partners = PartnerStore.load(storePaths(values, io))
      .partners()
      .map((p) => ({
        partner: p.name,
        id: p.id,
        customId: p.customId ?? null,
        scope: p.groups.includes(GROUP_WRITE) ? 'write' : 'read',
        disabled: p.groups.includes(GROUP_DISABLED),
        credentials: p.credentials.map((c) => ({ id: c.id, variable: c.variable })),
      }));
    if (values.json) return io.out(JSON.stringify(partners, null, 2));
    if (partners.length === 0) return io.out('no partners (add one with: keys issue <partner> --scope read|write)');
    const rows = [
      ['PARTNER', 'SCOPE', 'STATUS', 'KEYS', 'CREDENTIAL IDS'],
      ...partners.map((p) => [
        p.partner,
        p.scope,
        p.disabled ? 'disabled' : 'active',
        String(p.credentials.length),
        p.credentials.map((c) => c.id).join(' ') || '-',
      ]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    io.out(
      rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n'),
    );
  },
};
