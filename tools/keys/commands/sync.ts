import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { adminUrl, parse } from '../cli/args';
import { Failure, UsageError } from '../cli/errors';
import { deckArgs, inspectDeck, MINIMUM_DECK_TEXT } from '../deck';
import type { Command } from './command';

const OPTIONS = {
  'admin-url': { type: 'string' },
  'admin-token': { type: 'string' },
  deck: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const sync: Command = {
  name: 'sync',
  summary: `sync state files with decK (${MINIMUM_DECK_TEXT}+ only), each on its own`,
  help: `Usage: keys sync <state file>... --admin-url URL [--deck PATH]

Makes Kong match each state file with decK, one file at a time in the order given (never merged:
each file's select tags decide what its sync may change), e.g.
  keys sync kong.yaml partners.yaml --admin-url http://127.0.0.1:8001

First checks "deck version" and refuses, sending nothing, a decK older than ${MINIMUM_DECK_TEXT}: older
releases list key-auth credentials and ACL groups without filtering them by the file's select
tags, so a sync of partners.yaml deletes every partner's key (decK's CHANGELOG, v1.7.0: "--select-tag
tags are now applied to credentials"). Debian's "deck" package is 1.4.0: install decK from
https://github.com/Kong/deck/releases instead.

partner-keys.yaml needs every DECK_ variable it references (docs/partners.md, "Managing partners").

Options:
  --admin-url URL      Kong's Admin API (or KONG_ADMIN_URL)
  --admin-token TOKEN  sent as Kong-Admin-Token (or KONG_ADMIN_TOKEN)
  --deck PATH          the decK to run (or DECK_BIN; default: deck on PATH)
  -h, --help           this help`,
  run(args, io) {
    const { values, positionals } = parse(args, OPTIONS, null);
    if (values.help) return io.out(this.help);
    if (positionals.length === 0) throw new UsageError('name at least one state file, e.g. keys sync partners.yaml');
    const url = adminUrl(values['admin-url'], io);
    const token = values['admin-token'] ?? io.env.KONG_ADMIN_TOKEN;
    const deck = inspectDeck(values.deck ?? io.env.DECK_BIN ?? 'deck', io.env);
    if ('refused' in deck) throw new Failure(deck.refused);
    for (const file of positionals.map((f) => path.resolve(io.cwd, f))) {
      io.err(`decK ${deck.version}: syncing ${path.relative(io.cwd, file) || file}`);
      const out = spawnSync(deck.bin, deckArgs(deck, 'sync', file, { url, token }), {
        encoding: 'utf8',
        env: io.env,
        cwd: io.cwd,
      });
      const said = `${out.stdout ?? ''}${out.stderr ?? ''}`.trim();
      if (said) io.err(said);
      if (out.error || out.status !== 0)
        throw new Failure(
          `decK's sync of ${file} failed${out.error ? `: ${out.error.message}` : ''}; the files after it were not synced`,
        );
    }
  },
};
