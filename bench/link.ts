/**
 * A partner's link for S: the sync client in a network namespace of its own, joined to this host by
 * a veth pair tbf shapes to one rate each way (on loopback a byte costs nothing). Needs root and iproute2.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import readline from 'node:readline';
import path from 'node:path';
import { ip, openVethNamespace, type VethNamespace } from '../harness/netns';
import type { compareSyncs, SyncComparison, SyncRun } from './sync';

/** `hostAddress`: this host's end of the link (what the client reaches); `compareSyncs` runs there. */
export type Link = ReturnType<typeof openLink>;

// Built (npm run bench) or, under jest, from source through the tests' TypeScript hook.
const SYNC_CLIENT = __filename.endsWith('.ts')
  ? ['-r', path.join(__dirname, '..', 'test', 'helpers', 'register-ts.js'), path.join(__dirname, 'sync.ts')]
  : [path.join(__dirname, 'sync.js')];

const tc = (...args: string[]) => execFileSync('tc', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** Why a link cannot be opened here, or undefined when it can be tried. */
export function linkUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'a network namespace needs root';
  try {
    execFileSync('tc', ['-V'], { stdio: 'ignore' });
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'ip and tc (iproute2) are not installed';
  }
  return undefined;
}

/** Namespaces a killed run left (a veth pair goes with its end in the namespace). */
function removeStaleLinks(): void {
  for (const name of execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).match(/^bench-link-\d+/gm) ?? []) {
    const pid = name.slice('bench-link-'.length);
    if (pid !== String(process.pid) && !existsSync(`/proc/${pid}`)) ip('netns', 'del', name);
  }
}

/**
 * Opens the link: namespace bench-link-<pid>, veth pair bl<pid>h (here) and bl<pid>c (there),
 * 10.231.<n>.1 and .2. tbf's burst is kept small (32 KB) so a page cannot pass as one burst at
 * memory speed: the rate holds from the first byte, as on a wire.
 */
export function openLink(rate: string) {
  removeStaleLinks();
  const id = process.pid;
  const namespace = `bench-link-${id}`;
  const [here, there] = [`bl${id}h`, `bl${id}c`];
  const subnet = `10.231.${(id % 250) + 1}`;
  const hostAddress = `${subnet}.1`;
  let link: VethNamespace | undefined;
  const close = () => link?.close();
  try {
    link = openVethNamespace(namespace, here, there, subnet);
    const shape = ['root', 'tbf', 'rate', rate, 'burst', '32kb', 'latency', '100ms'];
    tc('qdisc', 'add', 'dev', here, ...shape);
    ip('netns', 'exec', namespace, 'tc', 'qdisc', 'add', 'dev', there, ...shape);
  } catch (error) {
    close();
    const why = String((error as { stderr?: Buffer }).stderr ?? error).trim();
    throw new Error(`could not open a ${rate} link: ${why}`, { cause: error });
  }
  return {
    rate,
    hostAddress,
    close,
    compareSyncs(...[origin, headers, rounds, onRun = () => undefined]: Parameters<typeof compareSyncs>) {
      const argv = ['netns', 'exec', namespace, process.execPath, ...SYNC_CLIENT, origin, JSON.stringify(headers)];
      const client = spawn('ip', [...argv, String(rounds)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      client.stderr.on('data', (chunk) => (stderr = (stderr + String(chunk)).slice(-4000)));
      const result: SyncComparison = { warmup: [], plain: [], gzip: [] };
      readline.createInterface({ input: client.stdout }).on('line', (line) => {
        const { run, gzip, warmup } = JSON.parse(line) as { run: SyncRun; gzip: boolean; warmup: boolean };
        (warmup ? result.warmup : gzip ? result.gzip : result.plain).push(run);
        onRun(run, gzip, warmup);
      });
      return new Promise<SyncComparison>((resolve, reject) => {
        client.on('error', reject);
        client.on('close', (code) =>
          code === 0
            ? resolve(result)
            : reject(new Error(`the sync client across the link exited with ${code}: ${stderr.trim()}`)),
        );
      });
    },
  };
}
