/**
 * Partners' receivers in network namespaces of their own (as bench/link.ts puts its sync client):
 * each namespace is joined to this host by a veth pair, 10.233.<n>.1 here and .2 there, so a
 * delivery crosses a real link to an address the SSRF guard refuses unless the test allows it.
 * Needs root and iproute2; receiverUnavailable() says why not.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { Webhook } from 'standardwebhooks';
import { ip, openVethNamespace, type VethNamespace } from '../../../harness/netns';

const REGISTER_TS = path.join(__dirname, '..', '..', 'helpers', 'register-ts.js');

export function receiverUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'a network namespace needs root';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'ip (iproute2) is not installed';
  }
  return undefined;
}

export interface Delivery {
  headers: Record<string, string>;
  body: string;
  status: number;
  concurrent: number;
  /** The request's path: one receiver may serve several subscriptions. */
  path: string;
  at: number;
}

export interface Receiver {
  /** The receiver's address in its namespace, and its URL. */
  address: string;
  url: string;
  /** Every request it received, in arrival order. */
  deliveries: Delivery[];
  /** Resolves when `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** Takes the link down (the receiver unreachable) or up again. */
  setReachable(reachable: boolean): void;
  close(): void;
}

let opened = 0;

/** Removes namespaces left by a test process that died before closing them. */
function removeStale(): void {
  const names = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).match(/^wh-\d+-\d+/gm) ?? [];
  for (const name of names) {
    const pid = Number(name.split('-')[1]);
    try {
      process.kill(pid, 0);
      continue;
    } catch {
      // its process is gone
    }
    try {
      ip('netns', 'del', name);
    } catch {
      // already gone
    }
  }
}

/** Starts a receiver (mode: see receiver-process.ts) in a new namespace. */
export async function startReceiver(mode = 'ok', port = 8080): Promise<Receiver> {
  if (opened === 0) removeStale();
  // A subnet no other link on this host uses (another test process may have receivers open too).
  const inUse = execFileSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' });
  const start = (process.pid * 7 + opened++) % 250;
  const n =
    Array.from({ length: 250 }, (_, i) => (start + i) % 250).find((k) => !inUse.includes(` 10.233.${k + 1}.`)) ?? start;
  const namespace = `wh-${process.pid}-${opened}`;
  const [here, there] = [`wh${process.pid % 100000}h${opened}`, `wh${process.pid % 100000}c${opened}`];
  const subnet = `10.233.${n + 1}`;
  const address = `${subnet}.2`;
  let link: VethNamespace | undefined;
  const close = (child?: ChildProcess) => {
    child?.kill('SIGKILL');
    link?.close();
  };
  try {
    link = openVethNamespace(namespace, here, there, subnet);
  } catch (error) {
    close();
    throw new Error(`could not open a namespace: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`, {
      cause: error,
    });
  }
  const child = spawn(
    'ip',
    [
      'netns',
      'exec',
      namespace,
      process.execPath,
      '-r',
      REGISTER_TS,
      path.join(__dirname, 'receiver-process.ts'),
      String(port),
      mode,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const deliveries: Delivery[] = [];
  const waiters: Array<() => void> = [];
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const parsed = JSON.parse(line) as Delivery & { listening?: boolean };
      if (parsed.listening) return resolve();
      deliveries.push({ ...parsed, at: Date.now() });
      for (const wake of waiters.splice(0)) wake();
    });
  });
  return {
    address,
    url: `http://${address}:${port}/hooks`,
    deliveries,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (deliveries.length < count) {
        if (Date.now() > deadline)
          throw new Error(`waited ${timeoutMs} ms for ${count} deliveries, got ${deliveries.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 200);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    setReachable(reachable) {
      ip('link', 'set', here, reachable ? 'up' : 'down');
    },
    close: () => close(child),
  };
}

/** The delivery's event, verified with the reference library against any of `secrets`; throws when none verifies. */
export function verified(
  delivery: Pick<Delivery, 'headers' | 'body'>,
  secret: string,
): {
  id: string;
  type: string;
  timestamp: string;
  position: string;
  history: string;
  sequence: number;
  data: Record<string, unknown>;
} {
  return new Webhook(secret).verify(delivery.body, delivery.headers) as ReturnType<typeof verified>;
}
