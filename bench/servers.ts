/**
 * The processes under test, each started from the built code in a process of its own so /proc
 * shows its own CPU time and memory: the service (node dist/service/server.js, production
 * logging), the raw baseline, and the local gateway in front of the service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';

// The checkout's root from dist/bench/ (npm run bench) and from bench/ (the bench's tests).
export const ROOT = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');

export interface Server {
  name: string;
  url: string;
  pid: number;
  /** Every process whose CPU time is this server's (one for node; Kong's nginx has workers). */
  pids(): number[];
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The node flags the service image runs with: the Dockerfile's CMD (`node <flags> dist/...`), so
 * the benchmark measures the service as it is deployed.
 */
export function serviceNodeFlags(dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')): string[] {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile);
  const argv = cmd ? (JSON.parse(cmd[1]!) as string[]) : [];
  if (argv[0] !== 'node' || argv.at(-1) !== 'dist/service/server.js')
    throw new Error('Dockerfile: CMD is not ["node", ..., "dist/service/server.js"]');
  return argv.slice(1, -1);
}

/**
 * How compose runs the webhook dispatcher (its `command`): what runs node (`chrt --idle 0`, or
 * nothing) and node's flags, so the benchmark prices the deployed process.
 */
export function dispatcherCommand(compose = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')): {
  launcher: string[];
  nodeFlags: string[];
} {
  const argv =
    (parse(compose) as { services?: Record<string, { command?: string[] }> }).services?.['webhook-dispatcher']
      ?.command ?? [];
  const node = argv.indexOf('node');
  if (node < 0 || argv.at(-1) !== 'dist/dispatcher/main.js')
    throw new Error(
      'docker-compose.yml: webhook-dispatcher command is not [..., "node", ..., "dist/dispatcher/main.js"]',
    );
  return { launcher: argv.slice(0, node), nodeFlags: argv.slice(node + 1, -1) };
}

/** Starts `node <script>` and waits until `probe` answers 200 (start-up migrations included). */
async function startNode(
  name: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  url: string,
  probe: { path: string; headers?: Record<string, string> },
  nodeFlags: string[] = [],
  launcher: string[] = [],
  node: string = process.execPath,
  root: string = ROOT,
): Promise<Server> {
  // A launcher (chrt) execs node in its own process: the pid is node's either way.
  const argv = [...launcher, node, ...nodeFlags, path.resolve(root, script), ...args];
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), {
    cwd: root,
    env: { ...process.env, ...env },
    // The service logs to stdout as in production; nothing reads it here.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${stderr.trim()}`);
    try {
      const response = await fetch(`${url}${probe.path}`, { headers: probe.headers });
      await response.arrayBuffer();
      if (response.status === 200) return { name, url, pid: child.pid!, pids: () => [child.pid!], stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not answer ${probe.path} within 180 s: ${stderr.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function startService(
  databaseUrl: string,
  options: {
    poolSize: number;
    gatewaySecret: string;
    name?: string;
    env?: NodeJS.ProcessEnv;
    nodeFlags?: string[];
    nodeDefaults?: boolean;
    node?: string;
    root?: string;
  },
): Promise<Server> {
  // Another checkout (--before) runs its own dist with its own Dockerfile's flags.
  const root = options.root ?? ROOT;
  const port = await freePort();
  return startNode(
    options.name ?? 'service',
    'dist/service/server.js',
    [],
    {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      DB_POOL_SIZE: String(options.poolSize),
      GATEWAY_SECRET: options.gatewaySecret,
      LOG_LEVEL: 'info',
      SEED_DEMO_DATA: 'false',
      ...options.env,
    },
    `http://127.0.0.1:${port}`,
    { path: '/healthz' },
    // nodeDefaults: V8's own heap sizing, what the Dockerfile's flags are priced against (scenario N).
    [
      ...(options.nodeDefaults ? [] : serviceNodeFlags(readFileSync(path.join(root, 'Dockerfile'), 'utf8'))),
      ...(options.nodeFlags ?? []),
    ],
    [],
    options.node,
    root,
  );
}

export async function startBaseline(
  databaseUrl: string,
  options: { poolSize: number; nodeFlags?: string[]; node?: string },
): Promise<Server> {
  const port = await freePort();
  return startNode(
    'baseline',
    'dist/bench/baseline.js',
    [],
    { BASELINE_DATABASE_URL: databaseUrl, PORT: String(port), DB_POOL_SIZE: String(options.poolSize) },
    `http://127.0.0.1:${port}`,
    { path: '/healthz' },
    // The same runtime settings as the service: the comparison is of the code, not of V8 flags.
    [...serviceNodeFlags(), ...(options.nodeFlags ?? [])],
    [],
    options.node,
  );
}

/** One webhook dispatcher (dist/dispatcher/main.js) on the service's database, ready once its metrics answer. */
export async function startDispatcherProcess(
  databaseUrl: string,
  env: NodeJS.ProcessEnv,
  main = 'dist/dispatcher/main.js',
): Promise<Server> {
  const port = await freePort();
  const { launcher, nodeFlags } = dispatcherCommand();
  return startNode(
    'dispatcher',
    main,
    [],
    {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      WEBHOOK_METRICS_PORT: String(port),
      ...env,
    },
    `http://127.0.0.1:${port}`,
    { path: '/metrics' },
    nodeFlags,
    launcher,
  );
}

/** The bare proxy (bench/bare-proxy.ts) in front of the service, as the bench's reader. */
export async function startBareProxy(
  service: Server,
  identity: { gatewaySecret: string; consumerId: string; username: string; groups: string },
): Promise<Server> {
  const port = await freePort();
  return startNode(
    'proxy',
    'dist/bench/bare-proxy.js',
    [],
    {
      UPSTREAM_URL: service.url,
      PORT: String(port),
      BARE_GATEWAY_SECRET: identity.gatewaySecret,
      BARE_CONSUMER_ID: identity.consumerId,
      BARE_CONSUMER_USERNAME: identity.username,
      BARE_CONSUMER_GROUPS: identity.groups,
    },
    `http://127.0.0.1:${port}`,
    { path: '/healthz' },
  );
}

/** A state file of the repository as data (comments dropped: decK renders templates in them). */
function repoState(file: string): any {
  return parse(readFileSync(path.join(ROOT, file), 'utf8').replace(/^\s*#.*$/gm, ''), { merge: true });
}

/**
 * The local gateway on temp copies of kong.yaml and demo.yaml (what npm start serves), pointed
 * at the service, with every rate limit raised out of reach: the benchmark measures the plugins'
 * cost, not their 429s.
 */
export async function startGateway(
  service: Server,
  options: { gatewaySecret: string; apiKey: string; host?: string },
): Promise<Server> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-gateway-'));
  const kong = repoState('kong.yaml');
  const raise = (plugins: any[] | undefined) => {
    for (const plugin of plugins ?? []) {
      if (plugin.name !== 'job-rate-limits') continue;
      for (const window of ['second', 'minute', 'hour', 'day', 'month', 'year']) {
        if (plugin.config?.[window] != null) plugin.config[window] = 1_000_000_000;
      }
    }
  };
  raise(kong.plugins);
  for (const s of kong.services ?? []) {
    s.url = service.url;
    raise(s.plugins);
    for (const route of s.routes ?? []) raise(route.plugins);
  }
  for (const route of kong.routes ?? []) raise(route.plugins);
  const files = [path.join(dir, 'kong.yaml'), path.join(dir, 'demo.yaml')];
  writeFileSync(files[0]!, stringify(kong));
  writeFileSync(files[1]!, stringify(repoState('demo.yaml')));
  const port = await freePort();
  try {
    const gateway = await startNode(
      'gateway',
      'dist/gateway/local/main.js',
      files,
      {
        KONG_PROXY_LISTEN: `${options.host ?? '127.0.0.1'}:${port}`,
        JOBS_GATEWAY_SECRET: options.gatewaySecret,
        KONG_DNS_HOSTSFILE: path.join(ROOT, 'gateway/local/hosts'),
        KONG_ERROR_TEMPLATE_JSON: path.join(ROOT, 'gateway/kong/error-template.json'),
      },
      `http://127.0.0.1:${port}`,
      { path: '/api/v1/jobs?limit=1', headers: { 'X-API-Key': options.apiKey } },
    );
    return {
      ...gateway,
      async stop() {
        await gateway.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
