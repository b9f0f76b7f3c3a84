/** The processes under test from dist/: the service and dispatcher as deployed, the raw baseline, the migrate command. */
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

/** Starts `node` (after `launcher`, whose pid is node's: chrt execs) and waits until `probe` answers 200 on `port`. */
async function startNode(
  name: string,
  argv: string[],
  o: { env: NodeJS.ProcessEnv; port: number; probe: string; root?: string },
) {
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: o.root ?? ROOT,
    env: { ...process.env, ...o.env },
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
  const url = `http://127.0.0.1:${o.port}`;
  for (const deadline = Date.now() + 180_000; ; await new Promise((resolve) => setTimeout(resolve, 200))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${stderr.trim()}`);
    const status = await fetch(`${url}${o.probe}`).then(
      (r) => r.arrayBuffer().then(() => r.status),
      () => 0,
    );
    if (status === 200) return { name, url, pid: child.pid!, pids: () => [child.pid!], stop } satisfies Server;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not answer ${o.probe} within 180 s: ${stderr.trim()}`);
    }
  }
}

/** `nodeFlags` are added to the Dockerfile's; `root`: another checkout (--before), its own dist and Dockerfile. */
export type ServiceOptions = { poolSize: number; gatewaySecret: string; nodeFlags?: string[]; node?: string };

export async function startService(
  databaseUrl: string,
  o: ServiceOptions & { name?: string; env?: NodeJS.ProcessEnv; root?: string },
): Promise<Server> {
  const port = await freePort();
  const flags = serviceNodeFlags(readFileSync(path.join(o.root ?? ROOT, 'Dockerfile'), 'utf8'));
  const env = {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: String(port),
    DB_POOL_SIZE: String(o.poolSize),
    GATEWAY_SECRET: o.gatewaySecret,
    LOG_LEVEL: 'info',
    SEED_DEMO_DATA: 'false',
    ...o.env,
  };
  const argv = [o.node ?? process.execPath, ...flags, ...(o.nodeFlags ?? []), 'dist/service/server.js'];
  return startNode(o.name ?? 'service', argv, { env, port, probe: '/healthz', root: o.root });
}

/** The raw baseline, on the service's runtime settings: the comparison is of the code, not of V8's flags. */
export async function startBaseline(databaseUrl: string, o: ServiceOptions) {
  const port = await freePort();
  const env = { BASELINE_DATABASE_URL: databaseUrl, PORT: String(port), DB_POOL_SIZE: String(o.poolSize) };
  const argv = [o.node ?? process.execPath, ...serviceNodeFlags(), ...(o.nodeFlags ?? []), 'dist/bench/baseline.js'];
  return startNode('baseline', argv, { env, port, probe: '/healthz' });
}

/** One webhook dispatcher on the service's database, as compose runs it, ready once its metrics answer. */
export async function startDispatcher(databaseUrl: string, env: NodeJS.ProcessEnv): Promise<Server> {
  const port = await freePort();
  const { launcher, nodeFlags, script } = dispatcherCommand();
  const common = { NODE_ENV: 'production', DATABASE_URL: databaseUrl, HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  const argv = [...launcher, process.execPath, ...nodeFlags, script];
  return startNode('dispatcher', argv, {
    env: { ...common, WEBHOOK_METRICS_PORT: String(port), ...env },
    port,
    probe: '/metrics',
  });
}

/** The database at `databaseUrl` created and migrated by the service's own command (db:migrate), of `root`'s checkout. */
export async function migrate(databaseUrl: string, root = ROOT): Promise<void> {
  const env = { ...process.env, DATABASE_URL: databaseUrl };
  await promisify(execFile)(process.execPath, ['dist/service/commands/migrate.js'], { cwd: root, env });
}
