/**
 * Turns a parsed decK state (kong.yaml, demo.yaml... merged by config/load.ts) into the configuration the local gateway serves.
 * It accepts what this project's kong.yaml uses and refuses, by name, anything whose behaviour
 * only real Kong has, so a kong.yaml change that the local gateway would silently ignore fails
 * loudly instead.
 */
import { createHash } from 'node:crypto';
import type { PluginDefinition } from '../plugins/definition';
import { compileRoutePath } from '../router';
import type { Consumer, Credential, GatewayConfig, PluginInstance, Route, Service } from '../types';
import { isVaultReference, resolveVaultReference } from './vault-env';

export class ConfigError extends Error {}

type Obj = Record<string, unknown>;

const TOP_LEVEL = new Set(['_format_version', '_transform', '_info', 'services', 'plugins', 'consumers']);
const ROUTE_FIELDS_NOT_REPRODUCED = ['hosts', 'headers', 'snis', 'sources', 'destinations'];

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(v: unknown, where: string): Obj[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every(isObj)) throw new ConfigError(`${where}: expected a list of objects`);
  return v;
}

function str(o: Obj, field: string, where: string): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') throw new ConfigError(`${where}.${field}: expected a non-empty string`);
  return v;
}

function num(o: Obj, field: string, where: string, fallback: number): number {
  const v = o[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ConfigError(`${where}.${field}: expected a number`);
  return v;
}

/** Entities without an id in kong.yaml get one derived from their name, stable across reloads. */
export function stableId(kind: string, name: string): string {
  const h = createHash('sha256').update(`${kind}:${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((Number.parseInt(h[16] ?? '0', 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface BuildOptions {
  env: NodeJS.ProcessEnv;
  plugins: Map<string, PluginDefinition<unknown>>;
  errorTemplate: string;
  warn(message: string): void;
}

/** Replaces `{vault://...}` strings in a plugin config, as Kong does for referenceable fields. */
function resolveReferences(value: unknown, opts: BuildOptions, where: string): unknown {
  if (isVaultReference(value)) {
    const resolved = resolveVaultReference(value, opts.env);
    if ('value' in resolved) return resolved.value;
    opts.warn(`${where}: unable to resolve reference ${value} (${resolved.error}); the field is left unset, as Kong does`);
    return undefined;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveReferences(v, opts, `${where}[${i}]`));
  if (isObj(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveReferences(v, opts, `${where}.${k}`)]));
  }
  return value;
}

function buildPlugins(raw: unknown, where: string, scope: { routeId: string | null; serviceId: string | null }, opts: BuildOptions): PluginInstance[] {
  const out: PluginInstance[] = [];
  for (const [i, p] of list(raw, where).entries()) {
    const at = `${where}[${i}]`;
    const name = str(p, 'name', at);
    if (!name) throw new ConfigError(`${at}.name: required`);
    if (p.enabled === false) continue;
    if (p.consumer !== undefined && p.consumer !== null) {
      throw new ConfigError(`${at} (${name}): consumer-scoped plugins are not reproduced by the local gateway`);
    }
    const definition = opts.plugins.get(name);
    if (!definition) {
      throw new ConfigError(`${at}: plugin "${name}" is not reproduced by the local gateway (only ${[...opts.plugins.keys()].join(', ')}); run real Kong (docker compose up) to use it`);
    }
    const given = p.config ?? {};
    if (!isObj(given)) throw new ConfigError(`${at}.config: expected an object`);
    const rawConfig = Object.fromEntries(Object.entries(given).filter(([field]) => !definition.unusedFields?.includes(field)));
    let config: unknown;
    try {
      config = definition.parseConfig(resolveReferences(rawConfig, opts, `${at}.config`) as Obj);
    } catch (err) {
      throw new ConfigError(`${at} (${name}).config.${(err as Error).message}`);
    }
    out.push({ name, definition, config, ...scope });
  }
  const seen = new Set<string>();
  for (const p of out) {
    if (seen.has(p.name)) throw new ConfigError(`${where}: plugin "${p.name}" is configured twice on the same entity`);
    seen.add(p.name);
  }
  return out;
}

function parseUpstreamTarget(s: Obj, where: string): { host: string; port: number; path: string | null } {
  const url = str(s, 'url', where);
  let protocol = str(s, 'protocol', where) ?? 'http';
  let host = str(s, 'host', where);
  let port = num(s, 'port', where, 80);
  let path = str(s, 'path', where) ?? null;
  if (url) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`${where}.url: invalid URL ${url}`);
    }
    protocol = parsed.protocol.replace(/:$/, '');
    host = parsed.hostname;
    port = parsed.port ? Number(parsed.port) : protocol === 'https' ? 443 : 80;
    path = parsed.pathname && parsed.pathname !== '/' ? parsed.pathname : url.endsWith('/') ? '/' : null;
  }
  if (protocol !== 'http') throw new ConfigError(`${where}: protocol "${protocol}" is not reproduced by the local gateway (http only)`);
  if (!host) throw new ConfigError(`${where}: url or host is required`);
  return { host, port, path };
}

function buildConsumers(raw: unknown): Pick<GatewayConfig, 'consumersByIdOrUsername' | 'credentialsByKey'> {
  const consumersByIdOrUsername = new Map<string, Consumer>();
  const credentialsByKey = new Map<string, Credential>();
  for (const [i, c] of list(raw, 'consumers').entries()) {
    const at = `consumers[${i}]`;
    const username = str(c, 'username', at);
    const customId = str(c, 'custom_id', at);
    if (!username && !customId) throw new ConfigError(`${at}: username or custom_id is required`);
    if (list(c.plugins, `${at}.plugins`).length > 0) throw new ConfigError(`${at}.plugins: consumer-scoped plugins are not reproduced by the local gateway`);
    const consumer: Consumer = {
      id: str(c, 'id', at) ?? stableId('consumer', username ?? customId ?? String(i)),
      ...(username !== undefined ? { username } : {}),
      ...(customId !== undefined ? { custom_id: customId } : {}),
      groups: list(c.acls, `${at}.acls`).map((a, j) => {
        const group = str(a, 'group', `${at}.acls[${j}]`);
        if (!group) throw new ConfigError(`${at}.acls[${j}].group: required`);
        return group;
      }),
    };
    for (const name of [consumer.id, username]) {
      if (name === undefined) continue;
      if (consumersByIdOrUsername.has(name)) throw new ConfigError(`${at}: consumer "${name}" is defined twice`);
      consumersByIdOrUsername.set(name, consumer);
    }
    for (const [j, k] of list(c.keyauth_credentials, `${at}.keyauth_credentials`).entries()) {
      const where = `${at}.keyauth_credentials[${j}]`;
      const key = k.key;
      if (typeof key !== 'string' || key === '') throw new ConfigError(`${where}.key: required`);
      if (credentialsByKey.has(key)) throw new ConfigError(`${where}.key: the same key is used twice (Kong requires unique keys)`);
      credentialsByKey.set(key, { id: str(k, 'id', where) ?? stableId('keyauth_credential', `${consumer.id}:${j}`), consumer });
    }
  }
  return { consumersByIdOrUsername, credentialsByKey };
}

/** Effective plugins of a route: route-level over service-level over global, by plugin name. */
function effectivePlugins(...levels: PluginInstance[][]): PluginInstance[] {
  const byName = new Map<string, PluginInstance>();
  for (const level of levels) for (const p of level) if (!byName.has(p.name)) byName.set(p.name, p);
  return [...byName.values()].sort((a, b) => b.definition.priority - a.definition.priority);
}

export function buildGatewayConfig(state: unknown, opts: BuildOptions): GatewayConfig {
  if (!isObj(state)) throw new ConfigError('the state file must be a YAML mapping');
  const format = state._format_version;
  if (format !== '3.0' && format !== '1.1') throw new ConfigError(`_format_version: expected "3.0", found ${JSON.stringify(format)}`);
  for (const key of Object.keys(state)) {
    if (!TOP_LEVEL.has(key)) {
      throw new ConfigError(`${key}: not reproduced by the local gateway (it reads ${[...TOP_LEVEL].join(', ')}); run real Kong to use it`);
    }
  }
  const globalPlugins = buildPlugins(state.plugins, 'plugins', { routeId: null, serviceId: null }, opts);
  const routes: Route[] = [];
  const names = new Set<string>();
  const serviceNames = new Set<string>();
  for (const [i, s] of list(state.services, 'services').entries()) {
    const at = `services[${i}]`;
    const name = str(s, 'name', at) ?? `service-${i}`;
    if (serviceNames.has(name)) throw new ConfigError(`${at}: service name "${name}" is used twice`);
    serviceNames.add(name);
    const id = str(s, 'id', at) ?? stableId('service', name);
    const target = parseUpstreamTarget(s, at);
    const service: Service = {
      id,
      name,
      ...target,
      connectTimeout: num(s, 'connect_timeout', at, 60000),
      readTimeout: num(s, 'read_timeout', at, 60000),
      writeTimeout: num(s, 'write_timeout', at, 60000),
      plugins: buildPlugins(s.plugins, `${at}.plugins`, { routeId: null, serviceId: id }, opts),
    };
    for (const [j, r] of list(s.routes, `${at}.routes`).entries()) {
      const where = `${at}.routes[${j}]`;
      const routeName = str(r, 'name', where) ?? `${name}-route-${j}`;
      if (names.has(routeName)) throw new ConfigError(`${where}: route name "${routeName}" is used twice`);
      names.add(routeName);
      for (const field of ROUTE_FIELDS_NOT_REPRODUCED) {
        const v = r[field];
        if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) {
          throw new ConfigError(`${where}.${field}: routing on ${field} is not reproduced by the local gateway`);
        }
      }
      if (r.strip_path !== false) throw new ConfigError(`${where}.strip_path: the local gateway reproduces strip_path: false only (Kong's default is true, so set it)`);
      const protocols = r.protocols;
      if (Array.isArray(protocols) && !protocols.includes('http')) throw new ConfigError(`${where}.protocols: the local gateway serves http only`);
      const methods = r.methods;
      if (methods !== undefined && methods !== null && (!Array.isArray(methods) || !methods.every((m) => typeof m === 'string'))) {
        throw new ConfigError(`${where}.methods: expected a list of strings`);
      }
      const paths = r.paths;
      if (paths !== undefined && paths !== null && (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string'))) {
        throw new ConfigError(`${where}.paths: expected a list of strings`);
      }
      if ((!methods || methods.length === 0) && (!paths || paths.length === 0)) {
        throw new ConfigError(`${where}: must set methods or paths`);
      }
      const routeId = str(r, 'id', where) ?? stableId('route', routeName);
      let compiled;
      try {
        compiled = ((paths as string[] | undefined) ?? []).map(compileRoutePath);
      } catch (err) {
        throw new ConfigError(`${where}.paths: ${(err as Error).message}`);
      }
      const routePlugins = buildPlugins(r.plugins, `${where}.plugins`, { routeId, serviceId: null }, opts);
      routes.push({
        id: routeId,
        name: routeName,
        methods: methods && methods.length > 0 ? (methods as string[]).map((m) => m.toUpperCase()) : null,
        paths: compiled,
        regexPriority: num(r, 'regex_priority', where, 0),
        preserveHost: r.preserve_host === true,
        service,
        plugins: effectivePlugins(routePlugins, service.plugins, globalPlugins),
      });
    }
  }
  const selectTags = isObj(state._info) && Array.isArray(state._info.select_tags) ? (state._info.select_tags as string[]) : [];
  return { routes, globalPlugins, ...buildConsumers(state.consumers), selectTags, errorTemplate: opts.errorTemplate };
}
