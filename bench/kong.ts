/**
 * Real Kong in front of the service, four ways, each started by harness/real-kong.ts as the image
 * starts it (one worker): no plugin, Kong's key-auth + acl + request-transformer adding the secret
 * (any keyed gateway's floor), that with Kong's rate-limiting in Redis and prometheus (Kong's own
 * plugins doing our job), and our configuration; every rate limit out of reach.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findKong, startRealKong, type DeclarativeConfig, type RealKong } from '../harness/real-kong';
import type { Target } from './scenarios';
import { processes, statFields } from './measure';
import type { Server } from './servers';

export type KongTarget = Extract<Target, 'kong-bare' | 'kong-key-auth' | 'kong-bundled' | 'kong-ours'>;

const WINDOWS = ['second', 'minute', 'hour', 'day', 'month', 'year'];
type Plugin = { name: string; config?: Record<string, unknown> };
const servicesOf = (config: DeclarativeConfig) => (config.services ?? []) as DeclarativeConfig[];
/** The configuration and every service and route in it: where plugins are configured. */
const entities = (config: DeclarativeConfig): DeclarativeConfig[] => [
  config,
  ...servicesOf(config),
  ...servicesOf(config).flatMap((s) => (s.routes ?? []) as DeclarativeConfig[]),
];
const withoutPlugins = (config: DeclarativeConfig) => entities(config).forEach((e) => delete e.plugins);
const pluginsOf = (config: DeclarativeConfig) => entities(config).flatMap((e) => (e.plugins ?? []) as Plugin[]);
const RAISED = 1_000_000_000;

const EDITS: Record<KongTarget, (config: DeclarativeConfig, secret: string) => void> = {
  'kong-bare': withoutPlugins,
  // Kong's own key-auth (the key hidden from the service), acl and request-transformer, nothing of ours.
  'kong-key-auth': (config, secret) => {
    withoutPlugins(config);
    for (const service of servicesOf(config))
      service.plugins = [
        { name: 'key-auth', config: { key_names: ['X-API-Key'], hide_credentials: true } },
        { name: 'acl', config: { allow: ['jobs:read'] } },
        { name: 'request-transformer', config: { add: { headers: [`X-Gateway-Secret:${secret}`] } } },
      ];
  },
  // Kong's rate-limiting counting minute and hour in the Redis ours uses, and its prometheus plugin.
  'kong-bundled': (config, secret) => {
    const redis = pluginsOf(config).find((plugin) => plugin.config?.redis)?.config?.redis;
    EDITS['kong-key-auth'](config, secret);
    const limits = { name: 'rate-limiting', config: { minute: RAISED, hour: RAISED, policy: 'redis', redis } };
    for (const service of servicesOf(config)) (service.plugins as Plugin[]).push(limits);
    config.plugins = [{ name: 'prometheus' }];
  },
  // Ours as it is, every rate limit out of reach (its Redis calls stay): the row prices the plugins, not their 429s.
  'kong-ours': (config) => {
    for (const plugin of pluginsOf(config))
      if (plugin.name === 'job-rate-limits' && plugin.config)
        for (const window of WINDOWS) if (plugin.config[window] != null) plugin.config[window] = RAISED;
  },
};

/** A Kong as a server: its CPU is every process of nginx's group (master, worker, log filters) and, for ours, its Redis. */
async function asServer(target: KongTarget, kong: RealKong): Promise<Server> {
  try {
    const master = Number(readFileSync(path.join(kong.prefix, 'pids', 'nginx.pid'), 'utf8').trim());
    const group = statFields(master)[2];
    const redis = target === 'kong-ours' || target === 'kong-bundled' ? `:${kong.redis.port}` : undefined;
    const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    const pids = processes(
      (pid) =>
        statFields(pid)[2] === group || (!!redis && /redis-server/.test(cmdline(pid)) && cmdline(pid).includes(redis)),
    );
    if (redis && !pids.some((pid) => /redis-server/.test(cmdline(pid))))
      throw new Error(`${target}: no redis-server found on port ${kong.redis.port}`);
    return { name: target, url: kong.proxyUrl, pid: master, pids: () => pids, stop: () => kong.stop() };
  } catch (error) {
    await kong.stop();
    throw error;
  }
}

/** Why the Kong rows cannot run here, or undefined when a Kong 3.9 was found. */
export function kongUnavailable(): string | undefined {
  const found = findKong();
  return found.found ? undefined : `no Kong 3.9 found (${found.reason})`;
}

export async function startKong(target: KongTarget, serviceUrl: string, gatewaySecret: string, proxyHost?: string) {
  const edit = (config: DeclarativeConfig) => EDITS[target](config, gatewaySecret);
  return asServer(target, await startRealKong({ serviceUrl, gatewaySecret, edit, proxyHost }));
}
