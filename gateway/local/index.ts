/** The local gateway: a development stand-in for Kong that serves our decK state files (kong.yaml, demo.yaml, partners...) on Kong's proxy port. */
import { watch } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadGateway } from './config/load';
import { createHttpServer } from './http-server';
import { createGatewayLogger, type Logger } from './logger';
import { RateLimitCounters } from './plugins/job-rate-limits';
import { pluginRegistry } from './plugins/registry';
import type { Serving } from './request-handler';
import { Router } from './router';
import { Upstreams } from './upstream/proxy';

export type ReloadResult = { ok: true } | { ok: false; error: string };

export interface LocalGatewayOptions {
  /** The state files, merged as `deck gateway sync a.yaml b.yaml` merges them. */
  configPaths: readonly string[];
  /** Defaults to KONG_PROXY_LISTEN's first address, else 127.0.0.1:8000. Port 0 picks a free one. */
  port?: number;
  host?: string;
  /** DECK_* variables, vault references and KONG_* settings. Default: process.env. */
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
  /** Absolute, in merge order. */
  configPaths: string[];
  /** Loads the state files again; an invalid one is refused and the running configuration kept. */
  reload(): ReloadResult;
  /** The literal demo keys (prefix "demo-"), for start-up banners. */
  demoKeys(): Array<{ username: string; key: string; groups: string[] }>;
  close(): Promise<void>;
}

/** LOCAL_GATEWAY_STATE: state files separated by commas. */
export const parseStateList = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

/** Kong's proxy_listen (`host:port [flags], ...`): its first address. */
export function parseProxyListen(value: string | undefined): { host: string; port: number } | null {
  const m = /^\s*\[?([^\]\s]*?)\]?:(\d+)/.exec(value ?? '');
  return m ? { host: m[1]!, port: Number(m[2]) } : null;
}

export async function startLocalGateway(options: LocalGatewayOptions): Promise<LocalGateway> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? createGatewayLogger(env);
  const configPaths = options.configPaths.map((p) => path.resolve(p));
  const plugins = pluginRegistry(new RateLimitCounters());
  // Kong's env vault copies the environment once, when it starts (kong/vaults/env/init.lua, init), and a reload
  // keeps that copy: so does this one. A new gateway secret needs a new process (docs/operations.md).
  const vault = { ...env };
  const load = (): Serving => {
    const loaded = loadGateway(configPaths, { env, plugins, warn: (message) => logger.warn(message), vault });
    return { ...loaded, router: new Router(loaded.config.routes) };
  };

  let current = load();
  const listen = parseProxyListen(env.KONG_PROXY_LISTEN);
  const host = options.host ?? listen?.host ?? '127.0.0.1';
  const upstreams = new Upstreams(options.upstreamConnections ?? null);
  let listenPort = options.port ?? listen?.port ?? 8000;
  const server = createHttpServer({ current: () => current, upstreams, listenPort: () => listenPort, logger });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, host, () => resolve(void server.off('error', reject)));
  });
  listenPort = (server.address() as AddressInfo).port;

  const reload = (): ReloadResult => {
    let result: ReloadResult = { ok: true };
    try {
      current = load();
      logger.info({ config: configPaths, select_tags: current.config.selectTags }, 'configuration reloaded');
    } catch (err) {
      result = { ok: false, error: (err as Error).message };
      logger.error({ config: configPaths }, `configuration refused, still serving the previous one: ${result.error}`);
    }
    options.onReload?.(result);
    return result;
  };

  // Directories, not files, are watched: editors save by renaming over the file. One reload per burst.
  let debounce: NodeJS.Timeout | undefined;
  const watchers = [...new Set(configPaths.map((p) => path.dirname(p)))].map((dir) =>
    watch(dir, (_event, filename) => {
      if (filename !== null && !configPaths.includes(path.join(dir, filename.toString()))) return;
      clearTimeout(debounce);
      debounce = setTimeout(reload, 150);
    }),
  );

  const url = `http://${host.includes(':') ? `[${host}]` : host}:${listenPort}`;
  logger.info({ url, config: configPaths, select_tags: current.config.selectTags }, 'local gateway listening');
  return {
    url,
    port: listenPort,
    configPaths,
    reload,
    demoKeys: () =>
      [...current.config.credentialsByKey]
        .filter(([key]) => key.startsWith('demo-'))
        .map(([key, { consumer }]) => ({
          username: consumer.username ?? consumer.id,
          key,
          groups: [...consumer.groups],
        })),
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(debounce);
        for (const watcher of watchers) watcher.close();
        server.close(() => resolve());
        server.closeAllConnections();
        upstreams.close();
      }),
  };
}
