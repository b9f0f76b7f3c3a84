/**
 * Real Kong in front of the bench's service, three ways, each a Kong of its own started by
 * harness/real-kong.ts as the image starts it (one nginx worker, so it compares with one node
 * process): no plugin at all (the proxy floor: the client sends the identity headers itself),
 * Kong's own key-auth + acl (the standard way: the client sends the gateway secret, which nothing
 * standard adds), and our configuration, kong.yaml + demo.yaml with rate limits in a Redis of its
 * own, raised out of reach so the row measures the plugins' cost, not their 429s. A Kong's CPU is
 * every process of its group (nginx, the log redaction filters) and, for ours, its Redis.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { findKong, startRealKong, type DeclarativeConfig, type RealKong } from '../harness/real-kong';
import type { Target } from './scenarios';
import type { Server } from './servers';

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
