/**
 * Real Kong in front of the bench's service, three ways, each a Kong of its own started by
 * harness/real-kong.ts as the image starts it (one nginx worker, so it compares with one node
 * process): no plugin at all (the proxy floor: the client sends the identity headers itself),
 * Kong's own key-auth + acl (the standard way: the client sends the gateway secret, which nothing
 * standard adds), and our configuration, kong.yaml + demo.yaml with rate limits in a Redis of its
 * own, raised out of reach so the row measures the plugins' cost, not their 429s. A Kong's CPU is
 * every process of its group (nginx, the log redaction filters) and, for ours, its Redis.
 *
 * `node dist/bench/kong.js` (after npm run build) breaks our configuration's cost down: variants of
 * it with one thing taken out or changed (VARIANTS), side by side, each driven as K drives D, CPU
 * per request by role (nginx worker, log filters, Redis). docs/performance.md, "Where Kong's time
 * goes", has its table.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import mysql from 'mysql2/promise';
import { connectionOptions } from '../db/client';
import { formatUuid } from '../domain/uuid';
import { findKong, startRealKong, type DeclarativeConfig, type RealKong } from '../harness/real-kong';
import { runLoad } from './generator';
import { cpuMicros } from './proc';
import { DEMO_READER_KEY, type Target } from './scenarios';
import { startService, type Server } from './servers';
import { prepareTable } from './tables';

export type KongTarget = Extract<Target, 'kong-bare' | 'kong-key-auth' | 'kong-ours'>;

const RAISED = 1_000_000_000;
const WINDOWS = ['second', 'minute', 'hour', 'day', 'month', 'year'];

type Plugin = { name: string; config?: Record<string, unknown> };
const servicesOf = (config: DeclarativeConfig): DeclarativeConfig[] => config.services ?? [];
const routesOf = (config: DeclarativeConfig): DeclarativeConfig[] => servicesOf(config).flatMap((s) => s.routes ?? []);

/** Every plugin removed: Kong routes and proxies, nothing else. */
export function withoutPlugins(config: DeclarativeConfig): void {
  delete config.plugins;
  for (const entity of [...servicesOf(config), ...routesOf(config)]) delete entity.plugins;
}

/** Kong's own key-auth (key hidden from the service) and acl (jobs:read), nothing of ours. */
export function withKeyAuthAcl(config: DeclarativeConfig): void {
  withoutPlugins(config);
  for (const service of servicesOf(config)) {
    service.plugins = [
      { name: 'key-auth', config: { key_names: ['X-API-Key'], hide_credentials: true } },
      { name: 'acl', config: { allow: ['jobs:read'] } },
    ];
  }
}

/** Our configuration as it is, with every rate limit out of reach (its Redis calls stay). */
export function withRaisedLimits(config: DeclarativeConfig): void {
  for (const plugin of allPlugins(config)) {
    if ((plugin.name !== 'job-rate-limits' && plugin.name !== 'rate-limiting') || !plugin.config) continue;
    for (const window of WINDOWS) if (plugin.config[window] != null) plugin.config[window] = RAISED;
  }
}

/** Every plugin entity of a configuration: global, per service and per route. */
function allPlugins(config: DeclarativeConfig): Plugin[] {
  return [...(config.plugins ?? []), ...[...servicesOf(config), ...routesOf(config)].flatMap((e) => e.plugins ?? [])];
}

/** Removes every plugin called `name`, wherever it is configured. */
function withoutPlugin(config: DeclarativeConfig, name: string): void {
  for (const entity of [config, ...servicesOf(config), ...routesOf(config)]) {
    if (entity.plugins) entity.plugins = (entity.plugins as Plugin[]).filter((p) => p.name !== name);
  }
}

const EDITS: Record<KongTarget, (config: DeclarativeConfig) => void> = {
  'kong-bare': withoutPlugins,
  'kong-key-auth': withKeyAuthAcl,
  'kong-ours': withRaisedLimits,
};

/** Process ids whose process group is `group`. */
function groupMembers(group: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === group) pids.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

/** The redis-server listening on `port` (its command line names the port). */
function redisPid(port: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (/redis-server/.test(cmdline) && (cmdline.includes(`:${port}`) || cmdline.includes(`--port ${port}`)))
        return Number(entry);
    } catch {
      // ended meanwhile
    }
  }
  return undefined;
}

/** A Kong's nginx master and every process of its group (master, workers, log filters). */
function kongProcesses(kong: RealKong): { master: number; members: number[] } {
  const master = Number(readFileSync(path.join(kong.prefix, 'pids', 'nginx.pid'), 'utf8').trim());
  const stat = readFileSync(`/proc/${master}/stat`, 'utf8');
  return { master, members: groupMembers(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])) };
}

/** What `describe` makes of a started Kong; when it throws, the Kong is stopped first. */
async function described<T>(kong: RealKong, describe: () => T): Promise<T> {
  try {
    return describe();
  } catch (error) {
    await kong.stop();
    throw error;
  }
}

function asServer(target: KongTarget, kong: RealKong): Server {
  const { master, members } = kongProcesses(kong);
  const redis = target === 'kong-ours' ? redisPid(kong.redis.port) : undefined;
  if (target === 'kong-ours' && redis === undefined)
    throw new Error(`kong-ours: no redis-server found on port ${kong.redis.port}`);
  const pids = [...members, ...(redis ? [redis] : [])];
  return { name: target, url: kong.proxyUrl, pid: master, pids: () => pids, stop: () => kong.stop() };
}

/** Why the Kong rows cannot run here, or undefined when a Kong 3.9 was found. */
export function kongUnavailable(): string | undefined {
  const found = findKong();
  return found.found ? undefined : `no Kong 3.9 found (${found.reason})`;
}

export async function startKong(
  target: KongTarget,
  serviceUrl: string,
  gatewaySecret: string,
  proxyHost?: string,
): Promise<Server> {
  const kong = await startRealKong({ serviceUrl, gatewaySecret, edit: EDITS[target], proxyHost });
  return described(kong, () => asServer(target, kong));
}

// ---------------------------------------------------------------------------------------------
// Where our configuration's time goes: our Kong with one thing taken out or changed at a time

/** Our configuration (limits raised) with one change, measured against it. */
export interface KongVariant {
  name: string;
  /** What differs from our configuration, in words. */
  change: string;
  edit?: (config: DeclarativeConfig) => void;
  /** Kong settings (KONG_*) over kong.conf's. */
  env?: NodeJS.ProcessEnv;
  /** Headers the client sends on top of the API key (what a removed plugin would have added). */
  headers?: (gatewaySecret: string) => Record<string, string>;
}

/** The gateway secret of `node dist/bench/kong.js`'s service, which request-transformer adds in key-auth-acl-rt. */
const BREAKDOWN_SECRET = 'bench-gateway-secret-0123456789abcdef';

const rateLimits = (config: DeclarativeConfig): Plugin[] =>
  allPlugins(config).filter((p) => p.name === 'job-rate-limits');

/** Kong's bundled rate-limiting in job-rate-limits' place, as kong.yaml had it: policy redis, fault tolerant, the same Redis. */
function withKongRateLimiting(config: DeclarativeConfig, extra: Record<string, unknown> = {}): void {
  for (const plugin of rateLimits(config)) {
    plugin.name = 'rate-limiting';
    Object.assign(plugin.config!, { policy: 'redis', fault_tolerant: true, ...extra });
  }
}
/** Kong's bundled prometheus, global, in job-metrics' place. */
function withBundledPrometheus(config: DeclarativeConfig, metrics: Record<string, boolean>): void {
  withoutPlugin(config, 'job-metrics');
  const off = {
    per_consumer: false,
    status_code_metrics: false,
    latency_metrics: false,
    bandwidth_metrics: false,
    upstream_health_metrics: false,
  };
  (config.plugins ??= []).push({ name: 'prometheus', config: { ...off, ...metrics } });
}

export const VARIANTS: KongVariant[] = [
  { name: 'ours', change: 'our configuration as it is' },
  {
    name: 'bare',
    change: 'no plugin at all (the proxy floor, as K; the client sends the identity headers)',
    edit: withoutPlugins,
    headers: (secret) => ({ 'X-Gateway-Secret': secret, 'X-Consumer-Groups': 'jobs:read' }),
  },
  {
    name: 'key-auth-acl',
    change: "Kong's key-auth + acl instead (as K; the client sends the gateway secret)",
    edit: withKeyAuthAcl,
    headers: (secret) => ({ 'X-Gateway-Secret': secret }),
  },
  {
    name: 'key-auth-acl-rt',
    change: "Kong's key-auth + acl + request-transformer adding the gateway secret (the floor of a keyed gateway)",
    edit: (c) => {
      withKeyAuthAcl(c);
      for (const service of servicesOf(c))
        (service.plugins as Plugin[]).push({
          name: 'request-transformer',
          config: { add: { headers: [`X-Gateway-Secret:${BREAKDOWN_SECRET}`] } },
        });
    },
  },
  {
    name: 'kong-bundled',
    change:
      "Kong's bundled plugins doing our job: key-auth + acl, rate-limiting in the same Redis (minute and hour), prometheus (the client sends the gateway secret)",
    edit: (c) => {
      const redis = rateLimits(c)[0]!.config!.redis;
      withKeyAuthAcl(c);
      for (const service of servicesOf(c)) {
        (service.plugins as Plugin[]).push({
          name: 'rate-limiting',
          config: { minute: RAISED, hour: RAISED, limit_by: 'consumer', policy: 'redis', fault_tolerant: true, redis },
        });
      }
      withBundledPrometheus(c, { status_code_metrics: true, latency_metrics: true });
    },
    headers: (secret) => ({ 'X-Gateway-Secret': secret }),
  },
  { name: 'no-rate-limits', change: 'no rate limit plugin', edit: (c) => withoutPlugin(c, 'job-rate-limits') },
  {
    name: 'rl-one-window',
    change: 'job-rate-limits counting the minute only (no hour window)',
    edit: (c) => rateLimits(c).forEach((p) => delete p.config!.hour),
  },
  {
    name: 'kong-rl',
    change: "Kong's rate-limiting instead (policy redis, a round trip per window, a timer per request)",
    edit: (c) => withKongRateLimiting(c),
  },
  {
    name: 'kong-rl-sync',
    change: "Kong's rate-limiting syncing to Redis every 0.1 s (sync_rate 0.1: inexact across nodes)",
    edit: (c) => withKongRateLimiting(c, { sync_rate: 0.1 }),
  },
  {
    name: 'no-metrics',
    change: 'no job-metrics plugin (no gateway metrics at all)',
    edit: (c) => withoutPlugin(c, 'job-metrics'),
  },
  {
    name: 'bundled-prometheus',
    change: "Kong's prometheus instead of job-metrics (status-code and latency metrics, as kong.yaml had it)",
    edit: (c) => withBundledPrometheus(c, { status_code_metrics: true, latency_metrics: true }),
  },
  {
    name: 'prometheus-lean',
    change: "Kong's prometheus instead of job-metrics, every metric off (its log phase still serializes)",
    edit: (c) => withBundledPrometheus(c, {}),
  },
  {
    name: 'correlation-id',
    change: "Kong's correlation-id plugin as kong.yaml had it, on top (X-Request-ID is nginx's now)",
    edit: (c) =>
      (c.plugins ??= []).push({
        name: 'correlation-id',
        config: { header_name: 'X-Request-ID', generator: 'uuid#counter', echo_downstream: true },
      }),
  },
  { name: 'no-auth-guard', change: 'no auth-guard plugin', edit: (c) => withoutPlugin(c, 'auth-guard') },
  {
    name: 'no-job-scopes',
    change: 'no job-scopes plugin (the client sends the gateway secret itself)',
    edit: (c) => withoutPlugin(c, 'job-scopes'),
    headers: (secret) => ({ 'X-Gateway-Secret': secret }),
  },
  {
    name: 'kong-headers-off',
    change: 'no X-Kong-Request-Id response header (kong.conf headers = off)',
    env: { KONG_HEADERS: 'off' },
  },
  { name: 'log-off', change: 'no proxy access log', env: { KONG_PROXY_ACCESS_LOG: 'off' } },
  {
    name: 'log-unbuffered',
    change: 'proxy access log written line by line (no buffer=)',
    env: { KONG_PROXY_ACCESS_LOG: '/dev/stdout jobs_safe' },
  },
  {
    name: 'no-includes',
    change: "no nginx includes, no more_set_headers (access log in Kong's default format)",
    env: {
      KONG_NGINX_HTTP_INCLUDE: 'NONE',
      KONG_NGINX_PROXY_INCLUDE: 'NONE',
      KONG_NGINX_PROXY_MORE_SET_HEADERS: 'NONE',
      KONG_PROXY_ACCESS_LOG: '/dev/stdout',
      KONG_ADMIN_ACCESS_LOG: '/dev/stdout',
    },
  },
];

/** A started variant and the processes whose CPU is its cost, by role. */
export interface RunningVariant {
  variant: KongVariant;
  kong: RealKong;
  workers: number[];
  master: number;
  /** The log redaction filters (gateway/kong/entrypoint.sh). */
  filters: number[];
  redis?: number;
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

const commOf = (pid: number): string => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();

export async function startVariant(
  variant: KongVariant,
  serviceUrl: string,
  gatewaySecret: string,
): Promise<RunningVariant> {
  const kong = await startRealKong({
    serviceUrl,
    gatewaySecret,
    env: variant.env,
    edit: (config) => {
      withRaisedLimits(config);
      variant.edit?.(config);
    },
  });
  return described(kong, () => {
    const { master, members } = kongProcesses(kong);
    const workers = members.filter((pid) => pid !== master && parentOf(pid) === master && commOf(pid) === 'nginx');
    const filters = members.filter((pid) => pid !== master && !workers.includes(pid));
    if (workers.length === 0) throw new Error(`${variant.name}: no nginx worker under ${master}`);
    if (filters.some((pid) => commOf(pid) !== 'luajit'))
      throw new Error(`${variant.name}: unexpected processes in Kong's group: ${filters.map(commOf).join(', ')}`);
    return { variant, kong, master, workers, filters, redis: redisPid(kong.redis.port) };
  });
}

/** One window of wrk against one variant: requests and CPU microseconds per request, by role. */
export interface VariantWindow {
  variant: string;
  window: number;
  requests: number;
  reqPerSec: number;
  /** Answers other than 200. */
  others: number;
  worker: number;
  master: number;
  filters: number;
  redis: number;
  service: number;
}

export interface BreakdownOptions {
  serviceUrl: string;
  servicePids: () => number[];
  gatewaySecret: string;
  apiKey: string;
  /** GET paths the connections cycle through (D: random ids). */
  paths: string[];
  variants: KongVariant[];
  windows: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  log?: (line: string) => void;
}

const cpuOf = (pids: number[]): number => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);

/**
 * Every variant started side by side, then `windows` rounds in which each takes its turn under
 * wrk (the order rotated each round, so no variant always follows the same one).
 */
export async function kongBreakdown(options: BreakdownOptions): Promise<VariantWindow[]> {
  const log = options.log ?? (() => undefined);
  const running: RunningVariant[] = [];
  const results: VariantWindow[] = [];
  try {
    for (const variant of options.variants) {
      running.push(await startVariant(variant, options.serviceUrl, options.gatewaySecret));
      log(`started ${variant.name}: ${variant.change}`);
    }
    const load = (v: RunningVariant, seconds: number) =>
      runLoad({
        origin: v.kong.proxyUrl,
        method: 'GET',
        paths: options.paths,
        headers: { 'X-API-Key': options.apiKey, ...v.variant.headers?.(options.gatewaySecret) },
        connections: options.connections,
        threads: 1,
        seconds,
        timeoutSeconds: 10,
      });
    // LuaJIT compiles the hot paths in the first thousands of requests: not counted.
    for (const v of running) await load(v, options.warmupSeconds);
    for (let window = 1; window <= options.windows; window++) {
      const order = running.map((_, i) => running[(i + window - 1) % running.length]!);
      for (const v of order) {
        const roles = {
          worker: v.workers,
          master: [v.master],
          filters: v.filters,
          redis: v.redis ? [v.redis] : [],
          service: options.servicePids(),
        };
        const before = Object.fromEntries(Object.entries(roles).map(([role, pids]) => [role, cpuOf(pids)]));
        const result = await load(v, options.seconds);
        const per = (role: keyof typeof roles) =>
          result.requests ? (cpuOf(roles[role]) - before[role]!) / result.requests : NaN;
        const row: VariantWindow = {
          variant: v.variant.name,
          window,
          requests: result.requests,
          reqPerSec: result.requests / result.seconds,
          others: result.requests - (result.statuses['200'] ?? 0) + result.errors + result.timeouts,
          worker: per('worker'),
          master: per('master'),
          filters: per('filters'),
          redis: per('redis'),
          service: per('service'),
        };
        results.push(row);
        log(
          `${window} ${v.variant.name.padEnd(18)} ${row.reqPerSec.toFixed(0).padStart(5)} req/s  worker ${row.worker.toFixed(0).padStart(4)}  filters ${row.filters.toFixed(1).padStart(5)}  ` +
            `redis ${row.redis.toFixed(1).padStart(5)}  master ${row.master.toFixed(1)}  service ${row.service.toFixed(0)} us/request${row.others ? `  (${row.others} not 200)` : ''}`,
        );
      }
    }
  } finally {
    for (const v of running) await v.kong.stop();
  }
  return results;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * The breakdown as a markdown table, medians over the windows. The worker's figure is also given
 * scaled by the service's CPU per request in the same window against its median over the run: the
 * service does the same work for every variant, so its swings (a busy machine makes every process
 * slower per request) show how much of a window's figure is the machine rather than the variant.
 */
export function breakdownTable(results: VariantWindow[], variants: KongVariant[]): string {
  const service = median(results.map((r) => r.service));
  const scaled = (r: VariantWindow) => (r.worker * service) / r.service;
  const of = (name: string) => results.filter((r) => r.variant === name);
  const ours = median(of('ours').map(scaled));
  const rows = variants
    .filter((v) => of(v.name).length > 0)
    .map((v) => {
      const rs = of(v.name);
      const worker = median(rs.map(scaled));
      const delta = v.name === 'ours' ? '' : `${worker - ours > 0 ? '+' : ''}${(worker - ours).toFixed(0)}`;
      return (
        `| ${v.change} | ${median(rs.map((r) => r.worker)).toFixed(0)} | ${worker.toFixed(0)} (${rs.map((r) => scaled(r).toFixed(0)).join(', ')}) | ${delta} | ` +
        `${median(rs.map((r) => r.filters)).toFixed(0)} | ${median(rs.map((r) => r.redis)).toFixed(0)} | ${median(rs.map((r) => r.worker + r.master + r.filters + r.redis)).toFixed(0)} | ` +
        `${median(rs.map((r) => r.reqPerSec)).toFixed(0)} |`
      );
    });
  return [
    '| Kong | worker us/request | worker, scaled by the service (each window) | vs ours | log filters | Redis | all (as K counts) | req/s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/**
 * node dist/bench/kong.js [--windows 3] [--seconds 15] [--size 10000] [--variants ours,log-off,...]
 * D through each variant, as the K scenario drives it (wrk -t1 -c16, random ids of demo-reader).
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      windows: { type: 'string' },
      seconds: { type: 'string' },
      size: { type: 'string' },
      variants: { type: 'string' },
    },
  });
  const unavailable = kongUnavailable();
  if (unavailable) throw new Error(unavailable);
  const wanted = values.variants?.split(',');
  const variants = wanted ? VARIANTS.filter((v) => wanted.includes(v.name)) : VARIANTS;
  if (wanted && variants.length !== wanted.length)
    throw new Error(`unknown variant in ${values.variants}; known: ${VARIANTS.map((v) => v.name).join(', ')}`);
  const secret = BREAKDOWN_SECRET;
  const table = await prepareTable(
    process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306',
    Number(values.size ?? 10_000),
    { log: console.log },
  );
  const connection = await mysql.createConnection(connectionOptions(table.url));
  const [sample] = await connection.query<mysql.RowDataPacket[]>(
    'SELECT id FROM jobs WHERE listed ORDER BY RAND() LIMIT 2000',
  );
  await connection.end();
  const service = await startService(table.url, { poolSize: 10, gatewaySecret: secret });
  try {
    const results = await kongBreakdown({
      serviceUrl: service.url,
      servicePids: service.pids,
      gatewaySecret: secret,
      apiKey: DEMO_READER_KEY,
      paths: sample.map((row) => `/api/v1/jobs/${formatUuid(row.id as Buffer)}`),
      variants,
      windows: Number(values.windows ?? 3),
      seconds: Number(values.seconds ?? 15),
      warmupSeconds: 5,
      connections: 16,
      log: console.log,
    });
    console.log(`\n${breakdownTable(results, variants)}`);
    console.log(`\nBREAKDOWN_JSON ${JSON.stringify(results)}`);
  } finally {
    await service.stop();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
