import { execFileSync } from 'node:child_process';

/** `ip` with its error output kept, so a failure says why. */
export const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export interface VethNamespace {
  /** This host's end of the pair, `<subnet>.1`. */
  here: string;
  /** Removes the pair and the namespace; safe to call twice. */
  close(): void;
}

/** A network namespace joined to this host by a veth pair on `<subnet>.0/24` (host .1, namespace .2), loopback up inside. */
export function openVethNamespace(namespace: string, here: string, there: string, subnet: string): VethNamespace {
  const close = () => {
    for (const undo of [() => ip('link', 'del', here), () => ip('netns', 'del', namespace)]) {
      try {
        undo();
      } catch {
        // already gone
      }
    }
  };
  try {
    ip('netns', 'add', namespace);
    ip('link', 'add', here, 'type', 'veth', 'peer', 'name', there);
    ip('link', 'set', there, 'netns', namespace);
    ip('addr', 'add', `${subnet}.1/24`, 'dev', here);
    ip('link', 'set', here, 'up');
    ip('-n', namespace, 'addr', 'add', `${subnet}.2/24`, 'dev', there);
    ip('-n', namespace, 'link', 'set', there, 'up');
    ip('-n', namespace, 'link', 'set', 'lo', 'up');
  } catch (error) {
    close();
    throw error;
  }
  return { here, close };
}
