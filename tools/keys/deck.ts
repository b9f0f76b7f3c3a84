/** Which decK may sync this project's state files. */
import { spawnSync } from 'node:child_process';

export const MINIMUM_DECK = [1, 7, 0] as const;
export const MINIMUM_DECK_TEXT = MINIMUM_DECK.join('.');

/** The x.y.z of `deck version` ("decK 1.4.0 (unknown)", "decK v1.43.0 (abc123)"), or null. */
export function parseDeckVersion(output: string): [number, number, number] | null {
  const m = /decK v?(\d+)\.(\d+)\.(\d+)/.exec(output);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

export function isSafeDeck(version: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) {
    if ((version[i] ?? 0) !== MINIMUM_DECK[i]) return (version[i] ?? 0) > MINIMUM_DECK[i]!;
  }
  return true;
}

export interface Deck {
  bin: string;
  version: string;
  /** decK 1.28+ spells a sync `deck gateway sync FILE`; older ones `deck sync -s FILE`. */
  gatewayCommands: boolean;
}

/** Runs `deck version`: the decK to use, or why it must not be used. */
export function inspectDeck(bin: string, env: NodeJS.ProcessEnv): Deck | { refused: string } {
  const out = spawnSync(bin, ['version'], { encoding: 'utf8', env, timeout: 30_000 });
  if (out.error || out.status !== 0) {
    return { refused: `could not run "${bin} version": ${out.error?.message ?? (out.stderr || out.stdout).trim()}` };
  }
  const version = parseDeckVersion(out.stdout);
  if (!version) return { refused: `"${bin} version" printed no version: ${out.stdout.trim()}` };
  const text = version.join('.');
  if (!isSafeDeck(version)) {
    return {
      refused:
        `decK ${text} is older than ${MINIMUM_DECK_TEXT}: it lists key-auth credentials and ACL groups without filtering them ` +
        `by the file's select tags, so a sync of partners.yaml would delete every partner's key. Install decK ${MINIMUM_DECK_TEXT} ` +
        `or newer (https://github.com/Kong/deck/releases; Debian's "deck" package is 1.4.0); nothing was sent to Kong`,
    };
  }
  const gateway = spawnSync(bin, ['gateway', '--help'], { encoding: 'utf8', env, timeout: 30_000 });
  return { bin, version: text, gatewayCommands: gateway.status === 0 };
}

/** The argv of one file's sync (or diff) against the Admin API at `admin.url`. */
export function deckArgs(
  deck: Deck,
  action: 'sync' | 'diff',
  file: string,
  admin: { url: string; token?: string },
): string[] {
  const { url: adminUrl, token } = admin;
  const headers = token ? ['--headers', `Kong-Admin-Token:${token}`] : [];
  return deck.gatewayCommands
    ? ['gateway', action, file, '--kong-addr', adminUrl, ...headers]
    : [action, '-s', file, '--kong-addr', adminUrl, ...headers];
}
