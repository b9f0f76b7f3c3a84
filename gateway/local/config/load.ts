/**
 * Reads kong.yaml the way `deck gateway sync` does (decK template first, then YAML) and builds the
 * configuration to serve, together with the two Kong settings it depends on: the JSON error
 * template (KONG_ERROR_TEMPLATE_JSON) and the hosts file (KONG_DNS_HOSTSFILE).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { loadErrorTemplate } from '../error-template';
import type { PluginDefinition } from '../plugins/definition';
import { Router } from '../router';
import type { GatewayConfig } from '../types';
import { loadHostsFile, type HostsTable } from '../upstream/resolve';
import { renderDeckTemplate } from './deck-template';
import { buildGatewayConfig } from './state';

export interface LoadedGateway {
  config: GatewayConfig;
  router: Router;
  hosts: HostsTable;
}

export function loadGateway(
  configPath: string,
  env: NodeJS.ProcessEnv,
  plugins: Map<string, PluginDefinition<unknown>>,
  warn: (message: string) => void,
): LoadedGateway {
  const text = readFileSync(configPath, 'utf8');
  let rendered: string;
  try {
    rendered = renderDeckTemplate(text, env);
  } catch (err) {
    throw new Error(`reading file ${configPath}: parsing file: ${(err as Error).message}`);
  }
  let state: unknown;
  try {
    state = parse(rendered, { prettyErrors: true, uniqueKeys: true });
  } catch (err) {
    throw new Error(`reading file ${configPath}: ${(err as Error).message}`);
  }
  const config = buildGatewayConfig(state, { env, plugins, errorTemplate: loadErrorTemplate(env), warn });
  return { config, router: new Router(config.routes), hosts: loadHostsFile(env) };
}
