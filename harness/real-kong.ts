/**
 * A real Kong Gateway 3.9, started the way the image starts it (gateway/Dockerfile): our
 * gateway/kong/kong.conf with its nginx include and error template, our plugins on Kong's Lua
 * path, and nginx run by gateway/kong/entrypoint.sh so every log line passes the key redaction
 * filter. Only what a test machine must change is changed, through KONG_* variables the way
 * docker-compose.yml changes it: loopback listeners on free ports, a prefix of its own under
 * os.tmpdir(), the /etc/kong paths pointed at gateway/kong/. docs/kong-tier.md says how Kong is
 * found and what each start costs.
 *
 * DB-less (the default): the state files are rendered the way decK hands them to Kong (each file
 * rendered as a decK template, merged, every entity tagged with the select tags, `_info` dropped)
 * and given as declarative_config; configure() loads new ones through the Admin API's POST
 * /config. With `postgres`, a fresh database is bootstrapped and Kong starts empty, for decK or the
 * Admin API to fill.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { mergeStates, readStateFile } from '../gateway/local/config/load';

/** The repository root, from test/helpers/ (ts-jest) or dist/test/helpers/ (compiled with the bench). */
export const ROOT = (() => {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'gateway', 'kong', 'kong.conf')) && existsSync(path.join(dir, 'kong.yaml')))
      return dir;
  }
  throw new Error(`no repository root above ${__dirname}`);
})();

const KONG_CONF = path.join(ROOT, 'gateway', 'kong', 'kong.conf');
const ENTRYPOINT = path.join(ROOT, 'gateway', 'kong', 'entrypoint.sh');
const REDACT_FILTER = path.join(ROOT, 'gateway', 'kong', 'redact-keys.lua');
const PLUGINS = path.join(ROOT, 'gateway', 'plugins');
const SHARED_SETUP = path.resolve(ROOT, '..', 'shared', 'kong', 'setup.sh');
/**
 * docs/operations.md's commands for Kong without Docker ("Production without Docker"), which
 * `recipe` nodes run word for word, /etc/kong/ being gateway/kong/ here and kong the one found.
 */
export const KONG_RECIPE = {
  /** In the foreground, under the operator's service manager: Kong's logs are its stdout and stderr. */
  start: 'KONG_REDACT_NEXT=kong /etc/kong/entrypoint.sh start -c /etc/kong/kong.conf',
  reload: 'kong reload -c /etc/kong/kong.conf',
  /** A restart is this, then the start again. */
  quit: 'kong quit',
} as const;

/** A recipe line as the environment it sets and the command it runs. */
function recipeCommand(line: string): { env: NodeJS.ProcessEnv; argv: string[] } {
  const words = line.replace(/\/etc\/kong\//g, `${path.join(ROOT, 'gateway', 'kong')}/`).split(' ');
  const env: NodeJS.ProcessEnv = {};
  while (/^[A-Z_]+=/.test(words[0]!)) {
    const [name, value] = words.shift()!.split('=');
    env[name!] = value;
  }
  return { env, argv: words };
}

/** The Kong minor this project's configuration is written for. */
const SUPPORTED = /^3\.9\./;

// ---------------------------------------------------------------------------------------------
// Finding Kong

export interface FoundKong {
  found: true;
  version: string;
  /** The `kong` command. */
  kong: string;
  /** The nginx (OpenResty) binary Kong runs. */
  nginx: string;
  /** The environment Kong's commands need (PATH, LUA_PATH, ... from $KONG_HOME/env.sh). */
  env: NodeJS.ProcessEnv;
  /** Which Kong, in words: "Kong 3.9.1 from KONG_HOME=/opt/kong-home". */
  description: string;
}

export interface NoKong {
  found: false;
  /** Why none was usable, one clause per place looked at. */
  reason: string;
}

/** The environment after `source <home>/env.sh`, without KONG_* settings of ours leaking in. */
function envOfHome(home: string): NodeJS.ProcessEnv | string {
  const envSh = path.join(home, 'env.sh');
  if (!existsSync(envSh)) return `${envSh} does not exist`;
  const out = spawnSync('bash', ['-c', 'source "$1" >/dev/null && env -0', 'env', envSh], { encoding: 'utf8' });
  if (out.status !== 0) return `sourcing ${envSh} failed: ${out.stderr.trim()}`;
  const env: NodeJS.ProcessEnv = {};
  for (const entry of out.stdout.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** `kong version` under `env`: the version, or why it did not answer. */
function kongVersion(env: NodeJS.ProcessEnv): { version: string; kong: string } | string {
  const which = spawnSync('bash', ['-c', 'command -v kong'], { env, encoding: 'utf8' });
  const kong = which.stdout.trim();
  if (which.status !== 0 || kong === '') return 'no kong command';
  const out = spawnSync(kong, ['version'], { env, encoding: 'utf8', cwd: os.tmpdir(), timeout: 60_000 });
  const version = /(\d+\.\d+\.\d+)/.exec(out.stdout)?.[1];
  if (out.status !== 0 || !version)
    return `\`${kong} version\` failed: ${(out.stderr || out.stdout).trim().split('\n').pop()}`;
  if (!SUPPORTED.test(version)) return `${kong} is Kong ${version}, not 3.9`;
  return { version, kong };
}

/** The nginx binary `kong start` would run (kong/cmd/utils/nginx_signals.lua, find_nginx_bin). */
function nginxOf(env: NodeJS.ProcessEnv): string | undefined {
  const home = env.KONG_HOME;
  const candidates = [
    ...(home ? [path.join(home, 'openresty', 'nginx', 'sbin', 'nginx')] : []),
    '/usr/local/openresty/nginx/sbin/nginx',
    '/opt/openresty/nginx/sbin/nginx',
  ];
  for (const c of candidates) if (existsSync(c)) return c;
  const which = spawnSync('bash', ['-c', 'command -v openresty || command -v nginx'], { env, encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() : undefined;
}

function foundAt(env: NodeJS.ProcessEnv, where: string): FoundKong | string {
  const v = kongVersion(env);
  if (typeof v === 'string') return v;
  const nginx = nginxOf(env);
  if (!nginx) return `no OpenResty nginx next to ${v.kong}`;
  return { found: true, version: v.version, kong: v.kong, nginx, env, description: `Kong ${v.version} from ${where}` };
}

let cached: FoundKong | NoKong | undefined;

/**
 * Which Kong 3.9 to run, looked for in this order: $KONG_HOME (its env.sh), `kong` on PATH, then
 * ../shared/kong/setup.sh next to the repository (which unpacks its Kong once). The answer is
 * kept for the life of the process.
 */
export function findKong(): FoundKong | NoKong {
  if (cached) return cached;
  const reasons: string[] = [];
  const home = process.env.KONG_HOME;
  if (home) {
    const env = envOfHome(home);
    const found = typeof env === 'string' ? env : foundAt(env, `KONG_HOME=${home}`);
    if (typeof found !== 'string') return (cached = found);
    reasons.push(`KONG_HOME=${home}: ${found}`);
  } else {
    reasons.push('KONG_HOME is not set');
  }
  const onPath = foundAt({ ...process.env }, 'PATH');
  if (typeof onPath !== 'string') return (cached = onPath);
  reasons.push(`PATH: ${onPath}`);
  if (existsSync(SHARED_SETUP)) {
    // setup.sh unpacks into $KONG_HOME when set: a KONG_HOME that failed above must not be its target.
    const { KONG_HOME: _unused, ...setupEnv } = process.env;
    const setup = spawnSync('bash', [SHARED_SETUP], { encoding: 'utf8', timeout: 600_000, env: setupEnv });
    const dir = setup.stdout.trim().split('\n').pop() ?? '';
    if (setup.status === 0 && dir) {
      const env = envOfHome(dir);
      const found = typeof env === 'string' ? env : foundAt(env, `${path.relative(ROOT, SHARED_SETUP)} (${dir})`);
      if (typeof found !== 'string') return (cached = found);
      reasons.push(`${SHARED_SETUP}: ${found}`);
    } else {
      reasons.push(`${SHARED_SETUP} failed: ${setup.stderr.trim().split('\n').pop() ?? setup.status}`);
    }
  } else {
    reasons.push(`${SHARED_SETUP} does not exist`);
  }
  return (cached = { found: false, reason: reasons.join('; ') });
}

/** findKong(), or an Error that says why there is none. */
export function requireKong(): FoundKong {
  const kong = findKong();
  if (!kong.found) throw new Error(`no Kong 3.9 found: ${kong.reason}`);
  return kong;
}

// ---------------------------------------------------------------------------------------------
// Ports, Redis, PostgreSQL

/** Process groups this process started (nginx under its entrypoint, redis-server): killed if it exits without stop(). */
const running = new Set<number>();
/** Prefixes not yet removed by stop(). */
const prefixes = new Set<string>();
process.once('exit', () => {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const prefix of prefixes) rmSync(prefix, { recursive: true, force: true });
});

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
  gaveUp?: () => string | undefined,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stop = gaveUp?.();
    if (stop) throw new Error(`${what}: ${stop}`);
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: no answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function portAnswers(port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(undefined));
  });
}

export interface RedisTarget {
  host: string;
  port: number;
  password?: string;
}

export interface OwnRedis extends RedisTarget {
  password: string;
  /** Stops redis-server (the counters go with it); idempotent. */
  stop(): Promise<void>;
}

/**
 * A redis-server of its own on a free loopback port, with a password as production's has
 * (docker-compose.yml), nothing persisted. Never the machine's Redis: a test may stop this one.
 */
export async function startRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const password = randomBytes(16).toString('hex');
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--requirepass', password, '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
      detached: true,
    },
  );
  running.add(child.pid!);
  let exited = false;
  const closed = new Promise<void>((resolve) =>
    child.once('exit', () => ((exited = true), running.delete(child.pid!), resolve())),
  );
  child.once('error', () => (exited = true));
  await until(
    `redis-server on ${port}`,
    10_000,
    () => portAnswers(port),
    () => (exited ? 'exited' : undefined),
  );
  return {
    host: '127.0.0.1',
    port,
    password,
    async stop() {
      if (!exited) child.kill('SIGKILL');
      await closed;
    },
  };
}

function psql(sql: string): void {
  const out = spawnSync(
    'psql',
    ['-h', '127.0.0.1', '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-qc', sql],
    { encoding: 'utf8' },
  );
  if (out.status !== 0) throw new Error(`psql ${sql}: ${out.stderr.trim()}`);
}

// ---------------------------------------------------------------------------------------------
// State files, rendered the way decK hands them to Kong

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a decK document, Kong's schema: suites edit it deep down as they would the YAML
export type DeclarativeConfig = Record<string, any>;
/** A list of entities in a state (plugins, services, routes, upstreams), or none. */
const entities = (list: unknown): DeclarativeConfig[] => (list ?? []) as DeclarativeConfig[];

export interface RenderOptions {
  /** decK state files, merged in this order (default kong.yaml + demo.yaml, what npm start serves). */
  stateFiles?: string[];
  /** Where every service's url points: the service under test (kong.yaml's upstream is then left out). */
  serviceUrl: string;
  /**
   * The service instances, as host:port: kong.yaml's upstream (its health checks and retries) is
   * kept with these as its targets, and serviceUrl is ignored.
   */
  upstreamTargets?: string[];
  /** Where every rate-limit plugin's redis block points. */
  redis?: RedisTarget;
  /** Variables `${{ env "DECK_..." }}` references read (default process.env). */
  deckEnv?: NodeJS.ProcessEnv;
  /** Changes the rendered configuration in place before Kong gets it. */
  edit?: (config: DeclarativeConfig) => void;
}

export const DEFAULT_STATE_FILES = [path.join(ROOT, 'kong.yaml'), path.join(ROOT, 'demo.yaml')];

/** Tags every entity with the select tags, as decK's file builder does (MustMergeTags). */
function tagAll(value: unknown, tags: string[]): void {
  if (Array.isArray(value)) {
    for (const v of value) tagAll(v, tags);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const entity = value as Record<string, unknown>;
  for (const [key, child] of Object.entries(entity)) {
    if (key === 'config') continue; // plugin configuration is not an entity
    if (Array.isArray(child) && child.every((c) => typeof c === 'object' && c !== null)) {
      for (const c of child as Record<string, unknown>[]) {
        c.tags = [...new Set([...((c.tags as string[] | undefined) ?? []), ...tags])];
      }
      tagAll(child, tags);
    }
  }
}

/**
 * The declarative configuration a DB-less Kong gets for these state files: each rendered as a
 * decK template and parsed, merged in order (gateway/local/config/load.ts follows decK there),
 * every entity tagged with the select tags, `_info` dropped (Kong refuses it), services pointed
 * at `serviceUrl` (or kong.yaml's upstream at `upstreamTargets`) and Redis at `redis`.
 */
export function renderState(opts: RenderOptions): DeclarativeConfig {
  const files = opts.stateFiles ?? DEFAULT_STATE_FILES;
  const env = opts.deckEnv ?? process.env;
  const merged: DeclarativeConfig = mergeStates(files.map((file) => readStateFile(file, env)));
  const tags = (merged._info as { select_tags?: string[] } | undefined)?.select_tags ?? [];
  delete merged._info;
  merged._format_version ??= '3.0';
  if (tags.length > 0) tagAll(merged, tags);
  const plugins = (m: DeclarativeConfig): DeclarativeConfig[] => [
    ...entities(m.plugins),
    ...entities(m.services).flatMap((s) => [
      ...entities(s.plugins),
      ...entities(s.routes).flatMap((r) => entities(r.plugins)),
    ]),
  ];
  if (opts.upstreamTargets) {
    for (const upstream of entities(merged.upstreams))
      upstream.targets = opts.upstreamTargets.map((target) => ({
        target,
        tags: upstream.tags as string[] | undefined,
      }));
  } else {
    delete merged.upstreams;
    for (const service of entities(merged.services)) service.url = opts.serviceUrl;
  }
  if (opts.redis) {
    for (const plugin of plugins(merged)) {
      const redis = (plugin.config as { redis?: DeclarativeConfig } | undefined)?.redis;
      if (!redis) continue;
      redis.host = opts.redis.host;
      redis.port = opts.redis.port;
      // No password: the reference is left unresolvable rather than sent to a Redis without one.
      if (!opts.redis.password) delete redis.password;
    }
  }
  opts.edit?.(merged);
  return merged;
}

// ---------------------------------------------------------------------------------------------
// Starting Kong

export interface RealKongOptions extends Partial<RenderOptions> {
  /** Resolves {vault://env/jobs-gateway-secret}. */
  gatewaySecret?: string;
  /**
   * The Redis the rate limits count in. Default: a redis-server of this Kong's own (started and
   * stopped with it), so parallel test files never share counters.
   */
  redis?: RedisTarget;
  /**
   * PostgreSQL instead of DB-less: a fresh database on 127.0.0.1:5432 (user postgres), bootstrapped
   * with `kong migrations bootstrap`, dropped by stop(). Kong starts with no entities.
   */
  postgres?: boolean;
  /**
   * With `postgres`: join this database (createKongDatabase()'s, bootstrapped and shared by several
   * nodes, as production's nodes share one) instead of a fresh one; stop() leaves it.
   */
  postgresDatabase?: string;
  /** nginx worker processes (the image: auto). Default 1: test machines are small. */
  workers?: number;
  /** The proxy's listen address (default 127.0.0.1; 0.0.0.0 for a client in another network namespace). */
  proxyHost?: string;
  /** More Kong settings (KONG_*) or variables for Kong's env vault. */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for /status/ready (ms). */
  readyTimeoutMs?: number;
  /**
   * Started by docs/operations.md's command ("Production without Docker"): `kong start` under
   * gateway/kong/entrypoint.sh, in the foreground (kong.conf's nginx_daemon), instead of the
   * image's `kong prepare` then nginx.
   */
  recipe?: boolean;
}

export interface KongLogs {
  /** What reached the container's stdout (access logs), after the redaction filter. */
  stdout: string;
  /** What reached its stderr (error logs), after the redaction filter. */
  stderr: string;
}

export interface RealKong {
  kong: FoundKong;
  proxyUrl: string;
  adminUrl: string;
  statusUrl: string;
  prefix: string;
  /** The Redis its rate limits count in. */
  redis: RedisTarget;
  /** The database name, with `postgres`. */
  database?: string;
  /** The declarative configuration it serves (DB-less). */
  config?: DeclarativeConfig;
  logs(): KongLogs;
  /** DB-less: renders the state files again (these options over the start's) and loads them (POST /config). */
  configure(opts?: Partial<RenderOptions>): Promise<void>;
  /** DB-less: loads this declarative configuration (POST /config); resolves once every worker serves it. */
  load(config: DeclarativeConfig): Promise<void>;
  /** `kong reload` on this node (kong prepare, then SIGHUP to nginx), run with the node's environment plus `env`. */
  reload(env?: NodeJS.ProcessEnv): Promise<void>;
  /**
   * `kong quit` (the requests in flight are answered first), then the node started again as it was,
   * with its environment plus `env`; resolves once /status/ready answers 200. Logs keep accumulating.
   */
  restart(env?: NodeJS.ProcessEnv): Promise<void>;
  /** Stops nginx (and the Redis and database it owns); idempotent. */
  stop(): Promise<void>;
}

/** Settings whose value names a file the Dockerfile copies to /etc/kong: pointed at gateway/kong/. */
function etcKongOverrides(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const line of readFileSync(KONG_CONF, 'utf8').split('\n')) {
    const m = /^\s*([a-z_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || !m[2]!.includes('/etc/kong/')) continue;
    env[`KONG_${m[1]!.toUpperCase()}`] = m[2]!.replace(/\/etc\/kong\//g, `${path.join(ROOT, 'gateway', 'kong')}/`);
  }
  return env;
}

/** kong.conf's listen line with its address and port replaced, flags kept (reuseport, backlog). */
function listenOverride(setting: string, port: number, host = '127.0.0.1'): string {
  const line = readFileSync(KONG_CONF, 'utf8')
    .split('\n')
    .find((l) => new RegExp(`^\\s*${setting}\\s*=`).test(l));
  const flags = line
    ? line
        .slice(line.indexOf('=') + 1)
        .trim()
        .split(/\s+/)
        .slice(1)
        .join(' ')
    : '';
  return `${host}:${port}${flags ? ` ${flags}` : ''}`;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, cwd: os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${what} exited with ${code}:\n${out.trim()}`)),
    );
  });
}

let generation = 0;

/**
 * POST /config, then waits until the workers serve it: Kong answers 201 once the configuration is
 * stored, and each worker rebuilds its router and plugins from it later, on an event
 * (kong/runloop/handler.lua, reconfigure_handler). The loaded copy carries one extra route whose
 * request-termination answers 200 only when both the new router and the new plugins are in use.
 */
async function postConfig(adminUrl: string, proxyUrl: string, config: DeclarativeConfig): Promise<void> {
  const probe = `/__real-kong-config/${process.pid}-${++generation}`;
  const marked = {
    ...config,
    routes: [
      ...((config.routes as unknown[] | undefined) ?? []),
      {
        name: `real-kong-config-${generation}`,
        paths: [probe],
        plugins: [{ name: 'request-termination', config: { status_code: 200, message: 'loaded' } }],
      },
    ],
  };
  const res = await fetch(`${adminUrl}/config`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ config: JSON.stringify(marked) }),
  });
  if (res.status !== 201) throw new Error(`POST /config answered ${res.status}: ${await res.text()}`);
  await until('the new configuration in every worker', 30_000, async () => {
    const answer = await fetch(`${proxyUrl}${probe}`);
    await answer.arrayBuffer();
    return answer.status === 200 ? true : undefined;
  });
}

const postgresEnv = (database: string): NodeJS.ProcessEnv => ({
  KONG_DATABASE: 'postgres',
  KONG_PG_HOST: '127.0.0.1',
  KONG_PG_PORT: '5432',
  KONG_PG_USER: 'postgres',
  KONG_PG_DATABASE: database,
});

export interface KongDatabase {
  name: string;
  /** Drops it (connections or not); idempotent. */
  drop(): void;
}

/** A fresh PostgreSQL database on 127.0.0.1:5432, bootstrapped by `kong migrations bootstrap`, for nodes to share. */
export async function createKongDatabase(): Promise<KongDatabase> {
  const kong = requireKong();
  const name = `kong_${randomBytes(6).toString('hex')}`;
  psql(`CREATE DATABASE ${name}`);
  const drop = () => psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  try {
    await run(
      kong.kong,
      ['migrations', 'bootstrap', '-c', KONG_CONF],
      { ...kong.env, ...etcKongOverrides(), ...postgresEnv(name) },
      'kong migrations bootstrap',
    );
  } catch (err) {
    drop();
    throw err;
  }
  return { name, drop };
}

/** Starts a real Kong as described at the top of this file, ready (/status/ready 200) when it resolves. */
export async function startRealKong(opts: RealKongOptions = {}): Promise<RealKong> {
  // A free port can be taken by another process between freePort() and nginx's bind: new ports then.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (attempt >= 3 || !/Address already in use/.test(String(err))) throw err;
    }
  }
}

async function startOnce(opts: RealKongOptions): Promise<RealKong> {
  const kong = requireKong();
  const prefix = mkdtempSync(path.join(os.tmpdir(), 'real-kong-'));
  prefixes.add(prefix);
  const cleanups: Array<() => Promise<void> | void> = [
    () => {
      rmSync(prefix, { recursive: true, force: true });
      prefixes.delete(prefix);
    },
  ];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  };
  try {
    let redis = opts.redis;
    if (!redis) {
      const own = await startRedis();
      cleanups.push(() => own.stop());
      redis = own;
    }
    const [proxyPort, adminPort, statusPort] = [await freePort(), await freePort(), await freePort()];

    // Kong loads plugin <name> as kong.plugins.<name>.handler: a tree of links to gateway/plugins.
    const lua = path.join(prefix, 'lua', 'kong', 'plugins');
    mkdirSync(lua, { recursive: true });
    for (const name of readdirSync(PLUGINS)) symlinkSync(path.join(PLUGINS, name), path.join(lua, name));

    const env: NodeJS.ProcessEnv = {
      ...kong.env,
      ...etcKongOverrides(),
      KONG_PREFIX: prefix,
      KONG_PROXY_LISTEN: listenOverride('proxy_listen', proxyPort, opts.proxyHost),
      KONG_ADMIN_LISTEN: listenOverride('admin_listen', adminPort),
      KONG_STATUS_LISTEN: listenOverride('status_listen', statusPort),
      KONG_NGINX_WORKER_PROCESSES: String(opts.workers ?? 1),
      // As the image's /docker-entrypoint.sh sets it: nginx stays in the foreground, under the filters.
      KONG_NGINX_DAEMON: 'off',
      KONG_LUA_PACKAGE_PATH: `${path.join(prefix, 'lua')}/?.lua;${path.join(prefix, 'lua')}/?/init.lua;;`,
      // As in the image: the container's Redis password and gateway secret through the env vault.
      ...(redis.password ? { JOBS_REDIS_PASSWORD: redis.password } : {}),
      ...(opts.gatewaySecret !== undefined ? { JOBS_GATEWAY_SECRET: opts.gatewaySecret } : {}),
      // entrypoint.sh runs this Kong's nginx and its LuaJIT (the image's defaults are /docker-entrypoint.sh and OpenResty's LuaJIT).
      KONG_REDACT_NEXT: kong.nginx,
      KONG_REDACT_LUA: 'luajit',
      KONG_REDACT_FILTER: REDACT_FILTER,
    };
    if (os.userInfo().uid === 0) env.KONG_NGINX_USER = 'root root'; // the image runs as user kong; here there is none

    let config: DeclarativeConfig | undefined;
    let database: string | undefined;
    const renderFrom = (o: Partial<RenderOptions>): DeclarativeConfig =>
      renderState({ serviceUrl: 'http://127.0.0.1:9', ...opts, ...o, redis });
    if (opts.postgres && opts.postgresDatabase) {
      database = opts.postgresDatabase;
      Object.assign(env, postgresEnv(database));
    } else if (opts.postgres) {
      const own = await createKongDatabase();
      cleanups.push(() => own.drop());
      database = own.name;
      Object.assign(env, postgresEnv(database));
    } else {
      config = renderFrom({});
      const file = path.join(prefix, 'declarative.json');
      writeFileSync(file, JSON.stringify(config));
      Object.assign(env, { KONG_DATABASE: 'off', KONG_DECLARATIVE_CONFIG: file });
    }
    Object.assign(env, opts.env ?? {});

    let stdout = '';
    let stderr = '';
    let child: ChildProcess | undefined;
    let exitCode: number | null | undefined;
    let exited: Promise<void> = Promise.resolve();
    const launch = async (launchEnv: NodeJS.ProcessEnv) => {
      // The recipe's start (kong start prepares the prefix itself), or what the image's docker-start
      // does: `kong prepare`, then nginx in the foreground, both under the filters.
      const recipe = recipeCommand(KONG_RECIPE.start);
      const [command, ...args] = opts.recipe ? recipe.argv : ['bash', ENTRYPOINT, '-p', prefix, '-c', 'nginx.conf'];
      if (!opts.recipe) await run(kong.kong, ['prepare', '-p', prefix, '-c', KONG_CONF], launchEnv, 'kong prepare');
      const started: ChildProcess = spawn(command!, args, {
        env: opts.recipe ? { ...launchEnv, ...recipe.env } : launchEnv,
        cwd: prefix,
        detached: true, // its own process group: stop() reaches the redaction filters too
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = started;
      exitCode = undefined;
      started.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      started.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      running.add(started.pid!);
      exited = new Promise<void>((resolve) =>
        started.once('close', (code) => ((exitCode = code), running.delete(started.pid!), resolve())),
      );
    };
    await launch(env);
    cleanups.push(async () => {
      if (child && exitCode === undefined) {
        const pid = child.pid!;
        try {
          process.kill(-pid, 'SIGTERM'); // what `docker stop` sends
        } catch {
          // already gone
        }
        const timer = setTimeout(() => {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }, 10_000);
        await exited;
        clearTimeout(timer);
      }
      // An nginx that somehow left the group (a daemon on) must not outlive its prefix.
      const pid = Number(readFileSync(path.join(prefix, 'pids', 'nginx.pid'), { encoding: 'utf8', flag: 'a+' }).trim());
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone, as it should be
        }
      }
    });

    const statusUrl = `http://127.0.0.1:${statusPort}`;
    const ready = () =>
      until(
        'Kong /status/ready',
        opts.readyTimeoutMs ?? 60_000,
        async () => ((await fetch(`${statusUrl}/status/ready`)).status === 200 ? true : undefined),
        () => (exitCode !== undefined ? `nginx exited with ${exitCode}:\n${stderr.slice(-4000)}` : undefined),
      );
    await ready();

    const adminUrl = `http://127.0.0.1:${adminPort}`;
    const handle: RealKong = {
      kong,
      proxyUrl: `http://127.0.0.1:${proxyPort}`,
      adminUrl,
      statusUrl,
      prefix,
      redis,
      database,
      config,
      logs: () => ({ stdout, stderr }),
      async configure(next = {}) {
        await handle.load(renderFrom(next));
      },
      async reload(extra = {}) {
        if (opts.recipe) {
          const [command, ...args] = recipeCommand(KONG_RECIPE.reload).argv;
          await run(command!, args, { ...env, ...extra }, KONG_RECIPE.reload);
        } else {
          await run(kong.kong, ['reload', '-p', prefix, '-c', KONG_CONF], { ...env, ...extra }, 'kong reload');
        }
      },
      async restart(extra = {}) {
        const [command, ...args] = opts.recipe
          ? recipeCommand(KONG_RECIPE.quit).argv
          : [kong.kong, 'quit', '-p', prefix];
        await run(command!, args, env, 'kong quit');
        await exited;
        await launch({ ...env, ...extra });
        await ready();
      },
      async load(next) {
        if (opts.postgres) throw new Error('a Kong with PostgreSQL takes its configuration from decK or the Admin API');
        await postConfig(adminUrl, handle.proxyUrl, next);
        handle.config = next;
      },
      stop: cleanup,
    };
    return handle;
  } catch (err) {
    await cleanup();
    throw err;
  }
}
