/** Reads the state files the way `deck gateway sync a.yaml b.yaml` does. */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { loadErrorTemplate } from '../kong-error';
import type { PluginDefinition } from '../plugins/definition';
import type { GatewayConfig } from '../types';
import { loadHostsFile, type HostsTable } from '../upstream/resolve';
import { buildGatewayConfig, ConfigError } from './build';
import { renderDeckTemplate } from './deck-template';

export interface LoadedGateway {
  config: GatewayConfig;
  hosts: HostsTable;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function readStateFile(file: string, env: NodeJS.ProcessEnv): Obj {
  try {
    const state: unknown = parse(renderDeckTemplate(readFileSync(file, 'utf8'), env), {
      uniqueKeys: true,
      merge: true,
    });
    if (!isObj(state)) throw new Error('the state file must be a YAML mapping');
    const info = state._info ?? {};
    if (!isObj(info) || Object.keys(info).some((k) => k !== 'select_tags'))
      throw new Error('_info: the local gateway reads select_tags only');
    return state;
  } catch (err) {
    throw new Error(`reading file ${file}: ${(err as Error).message}`, { cause: err });
  }
}

export function mergeStates(states: Obj[]): Obj {
  const merged: Obj = {};
  const selectTags: string[] = [];
  for (const state of states) {
    for (const [key, value] of Object.entries(state)) {
      if (key === '_info') selectTags.push(...(((value as Obj | null)?.select_tags as string[] | undefined) ?? []));
      else if (['services', 'plugins', 'consumers'].includes(key)) {
        if (value !== null && !Array.isArray(value)) throw new ConfigError(`${key}: expected a list`);
        merged[key] = [...((merged[key] as unknown[] | undefined) ?? []), ...((value as unknown[] | null) ?? [])];
      } else merged[key] ??= value;
    }
  }
  if (selectTags.length > 0) merged._info = { select_tags: [...new Set(selectTags)] };
  return merged;
}

/** What the state files are read with; `vault` is what `{vault://env/...}` reads (default `env`). */
export interface GatewaySources {
  env: NodeJS.ProcessEnv;
  plugins: Map<string, PluginDefinition<unknown>>;
  warn: (message: string) => void;
  vault?: NodeJS.ProcessEnv;
}

export function loadGateway(
  files: readonly string[],
  { env, plugins, warn, vault = env }: GatewaySources,
): LoadedGateway {
  const merged = mergeStates(files.map((file) => readStateFile(file, env)));
  const config = buildGatewayConfig(merged, {
    env,
    vault,
    plugins,
    errorTemplate: loadErrorTemplate(env.KONG_ERROR_TEMPLATE_JSON),
    warn,
  });
  return { config, hosts: loadHostsFile(env) };
}
