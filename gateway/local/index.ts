/**
 * The local gateway: a development stand-in for Kong that serves kong.yaml on Kong's proxy port.
 * See gateway/local/README.md for what it reproduces and what only Kong provides.
 */
import { watch, type FSWatcher } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadGateway, type LoadedGateway } from './config/load';
import { createGatewayLogger, type Logger } from './logger';
import { RateLimitCounters } from './plugins/rate-limiting';
import { pluginRegistry } from './plugins/registry';
import { createHandler } from './server';

export type ReloadResult = { ok: true } | { ok: false; error: string };

export interface LocalGatewayOptions {
  configPath: string;
  /** Defaults to KONG_PROXY_LISTEN's first address, else 127.0.0.1:8000. Port 0 picks a free one. */
  port?: number;
  host?: string;
  /** Where DECK_* variables, vault references and KONG_* settings are read. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Called after every reload attempt (file change, SIGHUP, reload()). */
  onReload?(result: ReloadResult): void;
}

export interface LocalGateway {
  url: string;
  port: number;
  /** Loads kong.yaml again; an invalid file is refused and the running configuration kept. */
  reload(): ReloadResult;
  /** The literal demo keys of kong.yaml (prefix "demo-"), for start-up banners. */
  demoKeys(): Array<{ username: string; key: string; groups: string[] }>;
  close(): Promise<void>;
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
  const configPath = path.resolve(options.configPath);
  const counters = new RateLimitCounters();
  const plugins = pluginRegistry(counters);
  const load = (): LoadedGateway => loadGateway(configPath, env, plugins, (message) => logger.warn(message));

  let current = load();
  const listen = parseProxyListen(env.KONG_PROXY_LISTEN);
  const host = options.host ?? listen?.host ?? '127.0.0.1';
  const port = options.port ?? listen?.port ?? 8000;

  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 64 });
  let listenPort = port;
  const server = http.createServer(
    createHandler({ current: () => current, agent, listenPort: () => listenPort, logger }),
  );
  server.keepAliveTimeout = 60_000;
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
      logger.info({ config: configPath }, 'configuration reloaded');
    } catch (err) {
      result = { ok: false, error: (err as Error).message };
      logger.error({ config: configPath }, `configuration refused, still serving the previous one: ${(err as Error).message}`);
    }
    options.onReload?.(result);
    return result;
  };

  // Watch the directory, not the file: editors replace files by renaming over them.
  let debounce: NodeJS.Timeout | null = null;
  const watcher: FSWatcher = watch(path.dirname(configPath), (_event, filename) => {
    if (filename !== null && filename.toString() !== path.basename(configPath)) return;
    if (debounce) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = null;
      reload();
    }, 150);
  });

  const displayHost = host.includes(':') ? `[${host}]` : host;
  logger.info({ url: `http://${displayHost}:${listenPort}`, config: configPath }, 'local gateway listening');
  return {
    url: `http://${displayHost}:${listenPort}`,
    port: listenPort,
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
        watcher.close();
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
