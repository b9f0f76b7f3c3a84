/**
 * Reads the decK state files the way `deck gateway sync a.yaml b.yaml` does and builds the
 * configuration to serve, together with the two Kong settings it depends on: the JSON error
 * template (KONG_ERROR_TEMPLATE_JSON) and the hosts file (KONG_DNS_HOSTSFILE).
 *
 * decK (Kong/go-database-reconciler pkg/file/readfile.go, getContent and readContent) renders and
 * parses every file on its own (an error names the file: "reading file <path>: ..."), then merges
 * them with mergo.Merge(..., WithAppendSlice): lists (services, consumers, plugins, and
 * `_info.select_tags`) are appended in file order, a scalar such as `_format_version` keeps the
 * first file's value. cmd/common.go determineSelectorTag then de-duplicates the select tags, and
 * pkg/file/builder.go tags every entity with all of them (MustMergeTags). Entities defined twice
 * across files are refused, as decK's state refuses them.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { loadErrorTemplate } from '../error-template';
import type { PluginDefinition } from '../plugins/definition';
import { Router } from '../router';
import type { GatewayConfig } from '../types';
import { loadHostsFile, type HostsTable } from '../upstream/resolve';
import { renderDeckTemplate } from './deck-template';
import { buildGatewayConfig, ConfigError } from './state';

export interface LoadedGateway {
  config: GatewayConfig;
  router: Router;
  hosts: HostsTable;
}

type Obj = Record<string, unknown>;

const APPENDED = ['services', 'plugins', 'consumers'] as const;
/** `_info` fields the local gateway understands; decK's others change how a sync runs, not what Kong serves. */
const INFO_FIELDS = new Set(['select_tags']);

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One file: decK template, then YAML (readContent). */
export function readStateFile(file: string, env: NodeJS.ProcessEnv): Obj {
  const text = readFileSync(file, 'utf8');
  let rendered: string;
  try {
    rendered = renderDeckTemplate(text, env);
  } catch (err) {
    throw new Error(`reading file ${file}: parsing file: ${(err as Error).message}`);
  }
  let state: unknown;
  try {
    state = parse(rendered, { prettyErrors: true, uniqueKeys: true, merge: true });
  } catch (err) {
    throw new Error(`reading file ${file}: ${(err as Error).message}`);
  }
  if (!isObj(state)) throw new Error(`reading file ${file}: the state file must be a YAML mapping`);
  const info = state._info;
  if (info !== undefined && info !== null) {
    if (!isObj(info)) throw new Error(`reading file ${file}: _info: expected a mapping`);
    for (const key of Object.keys(info)) {
      if (!INFO_FIELDS.has(key)) throw new Error(`reading file ${file}: _info.${key}: not reproduced by the local gateway (it reads select_tags)`);
    }
    const tags = info.select_tags;
    if (tags !== undefined && (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string' && t !== ''))) {
      throw new Error(`reading file ${file}: _info.select_tags: expected a list of non-empty strings`);
    }
  }
  return state;
}

/** mergo.Merge(&res, content, mergo.WithAppendSlice) over the files, in order. */
export function mergeStates(states: Obj[]): Obj {
  const merged: Obj = {};
  const selectTags: string[] = [];
  for (const state of states) {
    for (const [key, value] of Object.entries(state)) {
      if ((APPENDED as readonly string[]).includes(key)) {
        if (value === null || value === undefined) continue;
        if (!Array.isArray(value)) throw new ConfigError(`${key}: expected a list`);
        merged[key] = [...((merged[key] as unknown[] | undefined) ?? []), ...value];
      } else if (key === '_info') {
        selectTags.push(...(((value as Obj | null)?.select_tags as string[] | undefined) ?? []));
      } else if (merged[key] === undefined || merged[key] === null || merged[key] === '') {
        merged[key] = value;
      }
    }
  }
  // determineSelectorTag: utils.RemoveDuplicates keeps the first occurrence.
  if (selectTags.length > 0) merged._info = { select_tags: [...new Set(selectTags)] };
  return merged;
}

export function loadGateway(
  configPaths: string | readonly string[],
  env: NodeJS.ProcessEnv,
  plugins: Map<string, PluginDefinition<unknown>>,
  warn: (message: string) => void,
): LoadedGateway {
  const files = typeof configPaths === 'string' ? [configPaths] : [...configPaths];
  if (files.length === 0) throw new Error('no state file given');
  const merged = mergeStates(files.map((file) => readStateFile(file, env)));
  const config = buildGatewayConfig(merged, { env, plugins, errorTemplate: loadErrorTemplate(env), warn });
  return { config, router: new Router(config.routes), hosts: loadHostsFile(env) };
}
