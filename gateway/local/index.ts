/**
 * The local gateway: a development stand-in for Kong that serves decK state files (kong.yaml,
 * demo.yaml) on Kong's proxy port.
 * See gateway/local/README.md for what it reproduces and what only Kong provides.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadGateway, type LoadedGateway } from './config/load';
import { loadKongHeaders } from './kong-headers';
import { createListener } from './listener';
import { createGatewayLogger, type Logger } from './logger';
import { loadNginxLimits } from './nginx/limits';
import { RateLimitCounters } from './plugins/rate-limiting';
import { pluginRegistry } from './plugins/registry';
import { loadGzipSettings } from './upstream/compress';
import { Upstreams } from './upstream/proxy';

export type ReloadResult = { ok: true } | { ok: false; error: string };

export interface LocalGatewayOptions {
  /**
   * The decK state files to serve, merged as `deck gateway sync a.yaml b.yaml` merges them
   * (config/load.ts), e.g. [kong.yaml, demo.yaml].
   */
  configPaths?: readonly string[];
  /** One state file: the same as configPaths: [configPath]. */
  configPath?: string;
  /** Defaults to KONG_PROXY_LISTEN's first address, else 127.0.0.1:8000. Port 0 picks a free one. */
  port?: number;
  host?: string;
  /** Where DECK_* variables, vault references and KONG_* settings are read. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Called after every reload attempt (file change, SIGHUP, reload()). */
  onReload?(result: ReloadResult): void;
  /** The most connections to one service at a time (default: no limit, as nginx); for tests. */
  upstreamConnections?: number;
}

export interface LocalGateway {
  url: string;
  port: number;
  /** The state files served, absolute, in merge order. */
  configPaths: string[];
  /** Loads the state files again; an invalid one is refused and the running configuration kept. */
  reload(): ReloadResult;
  /** The literal demo keys (prefix "demo-") of all the state files, for start-up banners. */
  demoKeys(): Array<{ username: string; key: string; groups: string[] }>;
  close(): Promise<void>;
}

/** LOCAL_GATEWAY_STATE: state files separated by commas (`kong.yaml,demo.yaml`). */
export function parseStateList(value: string | undefined): string[] {
  return (value ?? '').split(',').map((p) => p.trim()).filter(Boolean);
}

/** Kong's proxy_listen: `host:port [flags...], ...`; the first plain-HTTP address is used. */
export function parseProxyListen(value: string | undefined): { host: string; port: number } | null {
  if (!value) return null;
  for (const entry of value.split(',')) {
    const [address, ...flags] = entry.trim().split(/\s+/);
    if (!address || flags.includes('ssl') || address === 'off') continue;
    const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address);
    if (m) return { host: m[1] ?? '127.0.0.1', port: Number(m[2]) };
  }
  return null;
}

export async function startLocalGateway(options: LocalGatewayOptions): Promise<LocalGateway> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? createGatewayLogger(env);
  const configPaths = [...(options.configPaths ?? []), ...(options.configPath ? [options.configPath] : [])].map((p) => path.resolve(p));
  if (configPaths.length === 0) throw new Error('no state file given (configPaths)');
  const counters = new RateLimitCounters();
  const plugins = pluginRegistry(counters);
  const load = (): LoadedGateway => loadGateway(configPaths, env, plugins, (message) => logger.warn(message));

  let current = load();
  const listen = parseProxyListen(env.KONG_PROXY_LISTEN);
  const host = options.host ?? listen?.host ?? '127.0.0.1';
  const port = options.port ?? listen?.port ?? 8000;

  const upstreams = new Upstreams(options.upstreamConnections ?? null);
  let listenPort = port;
  const server = createListener({
    current: () => current,
    upstreams,
    listenPort: () => listenPort,
    logger,
    kongHeaders: loadKongHeaders(env),
    limits: loadNginxLimits(env),
    gzip: loadGzipSettings(env),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  listenPort = (server.address() as AddressInfo).port;

  const reload = (): ReloadResult => {
    let result: ReloadResult;
    try {
      current = load();
      result = { ok: true };
      logger.info({ config: configPaths, select_tags: current.config.selectTags }, 'configuration reloaded');
    } catch (err) {
      result = { ok: false, error: (err as Error).message };
      logger.error({ config: configPaths }, `configuration refused, still serving the previous one: ${(err as Error).message}`);
    }
    options.onReload?.(result);
    return result;
  };

  // Watch the directories, not the files: editors replace files by renaming over them. One
  // reload for a burst of changes, whichever of the files changed.
  let debounce: NodeJS.Timeout | null = null;
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(configPaths.map((p) => path.dirname(p)))) {
    const names = new Set(configPaths.filter((p) => path.dirname(p) === dir).map((p) => path.basename(p)));
    watchers.push(
      watch(dir, (_event, filename) => {
        if (filename !== null && !names.has(filename.toString())) return;
        if (debounce) clearTimeout(debounce);
        debounce = setTimeout(() => {
          debounce = null;
          reload();
        }, 150);
      }),
    );
  }

  const displayHost = host.includes(':') ? `[${host}]` : host;
  logger.info({ url: `http://${displayHost}:${listenPort}`, config: configPaths, select_tags: current.config.selectTags }, 'local gateway listening');
  return {
    url: `http://${displayHost}:${listenPort}`,
    port: listenPort,
    configPaths,
    reload,
    demoKeys: () =>
      [...current.config.credentialsByKey]
        .filter(([key]) => key.startsWith('demo-'))
        .map(([key, credential]) => ({
          username: credential.consumer.username ?? credential.consumer.id,
          key,
          groups: [...credential.consumer.groups],
        })),
    close: () =>
      new Promise<void>((resolve) => {
        if (debounce) clearTimeout(debounce);
        for (const watcher of watchers) watcher.close();
        server.close(() => resolve());
        server.closeAllConnections();
        void upstreams.close();
      }),
  };
}
