/**
 * The processes under test, each from built code in a process of its own so /proc shows its own
 * CPU time: the service and the webhook dispatcher as the Dockerfile and compose run them, the
 * raw baseline, and the service's own migrate command.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { freePort, ROOT } from '../harness/real-kong';

export { ROOT };

export interface Server {
  name: string;
  url: string;
  pid: number;
  /** Every process whose CPU time is this server's (one for node; Kong's nginx has workers). */
  pids(): number[];
  stop(): Promise<void>;
}

/** The node flags of the Dockerfile's CMD (`node <flags> dist/service/server.js`): the service as deployed. */
export function serviceNodeFlags(dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')): string[] {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile);
  const argv = cmd ? (JSON.parse(cmd[1]!) as string[]) : [];
  if (argv[0] !== 'node' || argv.at(-1) !== 'dist/service/server.js')
    throw new Error('Dockerfile: CMD is not ["node", ..., "dist/service/server.js"]');
  return argv.slice(1, -1);
}

/** How compose runs the webhook dispatcher: what runs node (chrt), node's flags and the script. */
export function dispatcherCommand(compose = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) {
  const argv =
    (parse(compose) as { services?: Record<string, { command?: string[] }> }).services?.['webhook-dispatcher']
      ?.command ?? [];
  const node = argv.indexOf('node');
  const script = argv.at(-1) ?? '';
  if (node < 0 || !/^dist\/.*\.js$/.test(script))
    throw new Error('docker-compose.yml: webhook-dispatcher command is not [..., "node", ..., "dist/....js"]');
  return { launcher: argv.slice(0, node), nodeFlags: argv.slice(node + 1, -1), script };
}

interface NodeProcess {
  name: string;
  /** The script and node's flags; `launcher` runs node (its pid is node's: chrt execs). */
  argv: string[];
  launcher?: string[];
  env: NodeJS.ProcessEnv;
  port: number;
  /** The path that answers 200 once it is ready. */
  probe: string;
  node?: string;
  root?: string;
}

/** Starts a node process and waits until its probe answers 200 (start-up migrations included). */
async function startNode(p: NodeProcess): Promise<Server> {
  const argv = [...(p.launcher ?? []), p.node ?? process.execPath, ...p.argv];
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: p.root ?? ROOT,
    env: { ...process.env, ...p.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + String(chunk)).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${p.port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${p.name} exited with ${child.exitCode}: ${stderr.trim()}`);
    const status = await fetch(`${url}${p.probe}`).then(
      async (response) => (await response.arrayBuffer(), response.status),
      () => 0,
    );
    if (status === 200) return { name: p.name, url, pid: child.pid!, pids: () => [child.pid!], stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${p.name} did not answer ${p.probe} within 180 s: ${stderr.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export interface ServiceOptions {
  poolSize: number;
  gatewaySecret: string;
  name?: string;
  env?: NodeJS.ProcessEnv;
  /** Added to the Dockerfile's. */
  nodeFlags?: string[];
  node?: string;
  /** Another checkout (--before): its own dist and its own Dockerfile's flags. */
  root?: string;
}

export async function startService(databaseUrl: string, o: ServiceOptions): Promise<Server> {
  const root = o.root ?? ROOT;
  const port = await freePort();
  const flags = serviceNodeFlags(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
  return startNode({
    name: o.name ?? 'service',
    argv: [...flags, ...(o.nodeFlags ?? []), 'dist/service/server.js'],
    env: {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      DB_POOL_SIZE: String(o.poolSize),
      GATEWAY_SECRET: o.gatewaySecret,
      LOG_LEVEL: 'info',
      SEED_DEMO_DATA: 'false',
      ...o.env,
    },
    port,
    probe: '/healthz',
    node: o.node,
    root,
  });
}

export async function startBaseline(
  databaseUrl: string,
  o: { poolSize: number; nodeFlags?: string[]; node?: string },
): Promise<Server> {
  const port = await freePort();
  return startNode({
    name: 'baseline',
    // The service's runtime settings: the comparison is of the code, not of V8's flags.
    argv: [...serviceNodeFlags(), ...(o.nodeFlags ?? []), 'dist/bench/baseline.js'],
    env: { BASELINE_DATABASE_URL: databaseUrl, PORT: String(port), DB_POOL_SIZE: String(o.poolSize) },
    port,
    probe: '/healthz',
    node: o.node,
  });
}

/** One webhook dispatcher on the service's database, as compose runs it, ready once its metrics answer. */
export async function startDispatcher(databaseUrl: string, env: NodeJS.ProcessEnv): Promise<Server> {
  const port = await freePort();
  const { launcher, nodeFlags, script } = dispatcherCommand();
  return startNode({
    name: 'dispatcher',
    argv: [...nodeFlags, script],
    launcher,
    env: {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      WEBHOOK_METRICS_PORT: String(port),
      ...env,
    },
    port,
    probe: '/metrics',
  });
}

/** The database at `databaseUrl` created and migrated by the service's own command (db:migrate), of `root`'s checkout. */
export async function migrate(databaseUrl: string, root = ROOT): Promise<void> {
  await promisify(execFile)(process.execPath, ['dist/service/commands/migrate.js'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
}
