/** Turns the merged state into the configuration served. */
import { z } from 'zod';
import { parseWith, type PluginDefinition } from '../plugins/definition';
import type { Consumer, Credential, GatewayConfig, PluginInstance, Route, Service } from '../types';

export class ConfigError extends Error {}

const Plugin = z.strictObject({ name: z.string(), config: z.record(z.string(), z.unknown()).default({}) });
const Plugins = z.array(Plugin).default([]);
// Regex (~) paths, or the one prefix path of the catch-all route.
const regexPaths = z.array(
  z
    .string()
    .refine(
      (p) => p.startsWith('~') || p === '/',
      'the local gateway routes on regex (~) paths and the prefix path / only',
    ),
);
const Route = z.strictObject({
  name: z.string(),
  methods: z.array(z.string()).optional(),
  paths: regexPaths,
  strip_path: z.literal(false),
  preserve_host: z.literal(false),
  plugins: Plugins,
});
const url = z.string().regex(/^http:\/\/[^/:]+:\d+$/, 'http://host:port (the local gateway serves no path, no TLS)');
const timeout = z.number().int();
const Service = z.strictObject({
  name: z.string(),
  url,
  connect_timeout: timeout,
  read_timeout: timeout,
  write_timeout: timeout,
  retries: z.number().int().min(0),
  plugins: Plugins,
  routes: z.array(Route),
});
// Accepted whole (Kong validates it) and followed for its targets and host_header; its health checks
// are Kong's only (gateway/local/README.md, "Known differences").
const Upstream = z
  .object({
    name: z.string(),
    host_header: z.string().optional(),
    healthchecks: z.record(z.string(), z.unknown()).optional(),
    targets: z.array(z.object({ target: z.string().regex(/^[^:]+:\d+$/, 'host:port') }).passthrough()).min(1),
  })
  .passthrough();
const KeyauthCredential = z.strictObject({ id: z.string(), key: z.string().min(1) });
const Consumer = z.strictObject({
  ...{ username: z.string(), id: z.string(), custom_id: z.string().optional(), tags: z.array(z.string()).optional() },
  keyauth_credentials: z.array(KeyauthCredential).default([]),
  acls: z.array(z.strictObject({ group: z.string() })).default([]),
});
const State = z.strictObject({
  _format_version: z.literal('3.0'),
  _info: z.strictObject({ select_tags: z.array(z.string()) }).optional(),
  upstreams: z.array(Upstream).nullable().default([]),
  services: z.array(Service).nullable().default([]),
  plugins: Plugins.nullable(),
  consumers: z.array(Consumer).nullable().default([]),
});

export interface BuildOptions {
  env: NodeJS.ProcessEnv;
  /** What `{vault://env/...}` reads: the environment as the gateway started with it (default env). */
  vault?: NodeJS.ProcessEnv;
  plugins: Map<string, PluginDefinition<unknown>>;
  errorTemplate: string;
  warn(message: string): void;
}

/** `{vault://env/<name>}` (kong/vaults/env/init.lua: dashes to underscores, upper case); unset, the field is left unset, as Kong does. */
function resolveReference(value: unknown, opts: BuildOptions, where: string): unknown {
  if (typeof value !== 'string' || !value.startsWith('{vault://')) return value;
  const m = /^\{vault:\/\/env\/([\w-]+)\}$/.exec(value);
  if (!m) throw new ConfigError(`${where}: only {vault://env/<name>} references are reproduced by the local gateway`);
  const resolved = (opts.vault ?? opts.env)[m[1]!.replace(/-/g, '_').toUpperCase()];
  if (resolved === undefined)
    opts.warn(`${where}: unable to resolve reference ${value}; the field is left unset, as Kong does`);
  return resolved;
}

function buildPlugins(
  list: z.infer<typeof Plugins> | null,
  where: string,
  scope: Pick<PluginInstance, 'routeId' | 'serviceId'>,
  opts: BuildOptions,
): PluginInstance[] {
  return (list ?? []).map((p, i) => {
    const definition = opts.plugins.get(p.name);
    if (!definition)
      throw new ConfigError(
        `${where}[${i}]: plugin "${p.name}" is not reproduced by the local gateway (only ${[...opts.plugins.keys()].join(', ')}); run real Kong to use it`,
      );
    const fields = Object.entries(p.config).filter(([field]) => !definition.unusedFields?.includes(field));
    const raw = Object.fromEntries(
      fields.map(([field, v]) => [field, resolveReference(v, opts, `${where}[${i}].config.${field}`)]),
    );
    try {
      return { name: p.name, definition, config: definition.parseConfig(raw), ...scope };
    } catch (err) {
      throw new ConfigError(`${where}[${i}] (${p.name}).config.${(err as Error).message}`);
    }
  });
}

/** Route over service over global, by plugin name; then by descending priority. */
function effectivePlugins(...levels: PluginInstance[][]): PluginInstance[] {
  const byName = new Map<string, PluginInstance>();
  for (const p of levels.flat()) if (!byName.has(p.name)) byName.set(p.name, p);
  return [...byName.values()].sort((a, b) => b.definition.priority - a.definition.priority);
}

function buildConsumers(
  list: z.infer<typeof Consumer>[],
): Pick<GatewayConfig, 'consumersByIdOrUsername' | 'credentialsByKey'> {
  const consumersByIdOrUsername = new Map<string, Consumer>();
  const credentialsByKey = new Map<string, Credential>();
  for (const c of list) {
    const groups = c.acls.map((a) => a.group);
    let consumer: Consumer = {
      id: c.id,
      username: c.username,
      ...(c.custom_id !== undefined ? { custom_id: c.custom_id } : {}),
      groups,
    };
    // Files synced one by one into one Kong (partners.yaml, then partner-keys.yaml) each name the
    // same consumer: that is one consumer with the groups and keys of both. Any other clash is an error.
    const same = consumersByIdOrUsername.get(c.id);
    if (same && same.username === c.username && same.custom_id === c.custom_id) {
      same.groups.push(...groups.filter((g) => !same.groups.includes(g)));
      consumer = same;
    } else {
      for (const name of [c.id, c.username]) {
        if (consumersByIdOrUsername.has(name)) throw new ConfigError(`consumers: consumer "${name}" is defined twice`);
        consumersByIdOrUsername.set(name, consumer);
      }
    }
    for (const k of c.keyauth_credentials) {
      if (credentialsByKey.has(k.key))
        throw new ConfigError(`consumers: ${c.username}: the same key is used twice (Kong requires unique keys)`);
      credentialsByKey.set(k.key, { id: k.id, consumer });
    }
  }
  return { consumersByIdOrUsername, credentialsByKey };
}

export function buildGatewayConfig(raw: unknown, opts: BuildOptions): GatewayConfig {
  let state: z.infer<typeof State>;
  try {
    state = parseWith(State)(raw as Record<string, unknown>);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const globalPlugins = buildPlugins(state.plugins, 'plugins', { routeId: null, serviceId: null }, opts);
  const routes: Route[] = [];
  // Kong's ids for entities our state files leave without one: only names must be stable here.
  const id = (kind: string, name: string): string => `${kind}:${name}`;
  for (const [i, s] of (state.services ?? []).entries()) {
    if (routes.some((r) => r.service.id === `service:${s.name}`))
      throw new ConfigError(`services[${i}]: service name "${s.name}" is used twice`);
    const url = new URL(s.url);
    // Kong looks a service's host up among the upstreams before DNS (kong/runloop/balancer/init.lua).
    const upstream = (state.upstreams ?? []).find((u) => u.name === url.hostname);
    const targets = upstream
      ? upstream.targets.map(({ target }) => ({
          host: target.slice(0, target.lastIndexOf(':')),
          port: Number(target.slice(target.lastIndexOf(':') + 1)),
        }))
      : [{ host: url.hostname, port: Number(url.port) }];
    const service: Service = {
      ...{ id: id('service', s.name), targets, hostHeader: upstream ? (upstream.host_header ?? null) : url.hostname },
      ...{ retries: s.retries, connectTimeout: s.connect_timeout, readTimeout: s.read_timeout },
    };
    const servicePlugins = buildPlugins(
      s.plugins,
      `services[${i}].plugins`,
      { routeId: null, serviceId: service.id },
      opts,
    );
    for (const [j, r] of s.routes.entries()) {
      if (routes.some((other) => other.name === r.name))
        throw new ConfigError(`services[${i}].routes[${j}]: route name "${r.name}" is used twice`);
      const routePlugins = buildPlugins(
        r.plugins,
        `services[${i}].routes[${j}].plugins`,
        { routeId: id('route', r.name), serviceId: null },
        opts,
      );
      routes.push({
        id: id('route', r.name),
        name: r.name,
        methods: r.methods?.map((m) => m.toUpperCase()) ?? null,
        paths: r.paths.map((p) => new RegExp(p.startsWith('~') ? `^${p.slice(1)}` : '^/')),
        prefixOnly: r.paths.every((p) => !p.startsWith('~')),
        service,
        plugins: effectivePlugins(routePlugins, servicePlugins, globalPlugins),
      });
    }
  }
  return {
    routes,
    globalPlugins,
    ...buildConsumers(state.consumers ?? []),
    selectTags: state._info?.select_tags ?? [],
    errorTemplate: opts.errorTemplate,
  };
}
