// Invariants of the decK state files Kong runs with: kong.yaml (production gateway config),
// partners.yaml and partner-keys.yaml (production partners, issue 8) and demo.yaml (demo consumers). Each invariant is a function
// returning the violations it finds; the first block checks the real files, the second proves
// every invariant can fail by breaking a copy of the files in the way it guards against.
import { readFileSync } from 'fs';
import { join } from 'path';
import { parse } from 'yaml';
import { ROUTES } from '../service/api/routes';
import { invariantsHold, mutationsCaught, type Invariants, type Mutation } from './helpers/invariants';
import type { Parsed } from './helpers/parsed';

type Plugin = { name: string; config?: Record<string, unknown> };
type Route = {
  name: string;
  methods?: string[];
  paths?: string[];
  hosts?: string[];
  headers?: Record<string, string[]>;
  strip_path?: boolean;
  plugins?: Plugin[];
};
type Service = { name: string; url?: string; retries?: number; plugins?: Plugin[]; routes?: Route[] };
type Consumer = {
  username: string;
  id?: string;
  custom_id?: string;
  keyauth_credentials?: { id?: string; key: string }[];
  acls?: { group: string }[];
};
type StateDoc = {
  _format_version?: string;
  _info?: { select_tags?: string[] };
  services?: Service[];
  plugins?: Plugin[];
  consumers?: Consumer[];
  upstreams?: Parsed[];
};
/** The state files, each synced on its own. */
type Files = { kong: StateDoc; partners: StateDoc; partnerKeys: StateDoc; demo: StateDoc };

const ROOT = join(__dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const FILE_NAMES: Record<keyof Files, string> = {
  kong: 'kong.yaml',
  partners: 'partners.yaml',
  partnerKeys: 'partner-keys.yaml',
  demo: 'demo.yaml',
};
const TEXTS = Object.fromEntries(Object.entries(FILE_NAMES).map(([k, f]) => [k, read(f)])) as Record<
  keyof Files,
  string
>;
const SCHEMA_LUA = read('gateway/plugins/job-scopes/schema.lua');
const AUTH_GUARD_LUA = read('gateway/plugins/auth-guard/handler.lua');
const AUTH_CASES = JSON.parse(read('gateway/spec/auth-cases.json')) as {
  stateFiles: string[];
  cases: { route: string; consumer: string | null }[];
};

/** `check`'s problems in each of the files named, given the file's name and its content. */
const inFiles = (files: Files, which: (keyof Files)[], check: (name: string, doc: StateDoc) => string[]): string[] =>
  which.flatMap((f) => check(FILE_NAMES[f], files[f]));

const load = (): Files => ({
  kong: parse(TEXTS.kong, { merge: true }) as StateDoc,
  partners: parse(TEXTS.partners) as StateDoc,
  partnerKeys: parse(TEXTS.partnerKeys) as StateDoc,
  demo: parse(TEXTS.demo) as StateDoc,
});

/** job-scopes' key_names default, read from the plugin schema. */
function jobScopesDefaultKeyNames(): string[] {
  const block = /key_names\s*=\s*\{[\s\S]*?default\s*=\s*\{([^}]*)\}/.exec(SCHEMA_LUA);
  if (!block?.[1]) throw new Error('no key_names default in schema.lua');
  return [...block[1].matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
}

const EXPECTED_KEY_AUTH = {
  key_names: ['X-API-Key', 'api_key'],
  key_in_header: true,
  key_in_query: true,
  key_in_body: false,
  // job-scopes reads the key as key-auth saw it and strips every key name itself (handler.lua).
  hide_credentials: false,
  anonymous: 'anonymous',
  run_on_preflight: true,
};
// kong/plugins/key-auth/handler.lua at 3.9.1.
const KEY_AUTH_PRIORITY = 1250;

const DEMO_CONSUMERS: Record<string, { id: string; groups: string[] }> = {
  'demo-reader': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01', groups: ['jobs:read'] },
  'demo-writer': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a02', groups: ['jobs:read', 'jobs:write'] },
  'demo-writer-2': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a03', groups: ['jobs:read', 'jobs:write'] },
  'demo-disabled': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a04', groups: ['jobs:read', 'disabled'] },
  // A key and no group: every route answers 403 Missing scope (the auth-cases rows use it).
  'demo-no-groups': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a05', groups: [] },
};
const ANONYMOUS_ID = '00000000-0000-4000-8000-000000000000';
const ALLOWED_PLUGINS = new Set([
  'auth-guard',
  'key-auth',
  'job-scopes',
  'job-rate-limits',
  'request-size-limiting',
  'job-metrics',
  'request-termination',
]);
// kong.yaml names a route for the scope it requires (jobs:read -> jobs-read); every other method goes to jobs-other-methods.
const kongRouteFor = (scope: string) => scope.replace(':', '-');
const OTHER_METHODS = { name: 'jobs-other-methods', scope: 'jobs:read' };
/** The Kong route a service route is reached through: a jobs route by its scope; a webhook route by whether it only reads. */
const kongRouteOf = (route: (typeof ROUTES)[number]) =>
  route.tag === 'webhooks' ? (route.method === 'get' ? 'webhooks-read' : 'webhooks-manage') : kongRouteFor(route.scope);
const WEBHOOK_PATHS = [
  ...new Set(ROUTES.filter((route) => route.tag === 'webhooks').flatMap((route) => route.path.replace(/:\w+/g, 'x'))),
];
const JOBS_ROUTES = [
  ...new Set(ROUTES.filter((route) => route.tag !== 'webhooks').map((route) => kongRouteFor(route.scope))),
  OTHER_METHODS.name,
].sort();
const REDIS_PASSWORD_REF = '{vault://env/jobs-redis-password}';
const DECK_ENV_REF = /^\$\{\{ env "DECK_[A-Z0-9_]+" \}\}$/;

type RouteView = { route: Route; service: Service; plugins: Map<string, Plugin> };

/** Each route with the plugins that apply to it (global, then service, then route; the most specific wins). */
function routes(doc: StateDoc): RouteView[] {
  const out: RouteView[] = [];
  for (const service of doc.services ?? []) {
    for (const route of service.routes ?? []) {
      const plugins = new Map<string, Plugin>();
      for (const p of [...(doc.plugins ?? []), ...(service.plugins ?? []), ...(route.plugins ?? [])]) {
        plugins.set(p.name, p);
      }
      out.push({ route, service, plugins });
    }
  }
  return out;
}

/** The routes on the jobs paths (other routes, such as a public document, are not partner routes). */
const jobsRoutes = (doc: StateDoc) =>
  routes(doc).filter((r) => (r.route.paths ?? []).some((p) => p.includes('/api/v1/jobs')));

function allPlugins(doc: StateDoc): Plugin[] {
  const list = [...(doc.plugins ?? [])];
  for (const s of doc.services ?? []) {
    list.push(...(s.plugins ?? []));
    for (const r of s.routes ?? []) list.push(...(r.plugins ?? []));
  }
  return list;
}

const allConsumers = (files: Files) =>
  (Object.keys(files) as (keyof Files)[]).flatMap((f) =>
    (files[f].consumers ?? []).map((c) => ({ file: FILE_NAMES[f], c })),
  );

/** Does Kong's route match? Regex paths ("~") are anchored at the start of the path; a route without methods takes any. */
function routeMatches(route: Route, method: string, path: string): boolean {
  if (route.methods && !route.methods.includes(method)) return false;
  return (route.paths ?? []).some((p) =>
    p.startsWith('~') ? new RegExp(`^${p.slice(1)}`).test(path) : path.startsWith(p),
  );
}

/**
 * The route Kong 3.9 picks: the matching route with the most match fields set (kong/router/transform.lua
 * get_priority puts that count in the top bits; router_flavor traditional_compatible is the default),
 * then one with regex paths.
 * Two matching routes of equal weight are ambiguous: Kong would decide by creation order.
 */
function kongRoute(doc: StateDoc, method: string, path: string): { route?: RouteView; ambiguous: boolean } {
  // Then a regex path above a plain one (REGEX_URL_BIT).
  const weight = (r: Route) =>
    2 * [r.methods, r.paths, r.hosts, r.headers && Object.keys(r.headers)].filter((f) => f && f.length > 0).length +
    Number((r.paths ?? []).some((p) => p.startsWith('~')));
  const matching = routes(doc)
    .filter((v) => routeMatches(v.route, method, path))
    .sort((a, b) => weight(b.route) - weight(a.route));
  const [first, second] = matching;
  return { route: first, ambiguous: Boolean(first && second && weight(first.route) === weight(second.route)) };
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A request path for each route's path (a parameter as a UUID or a word), with and without a trailing slash. */
const requestPaths = (path: string) =>
  [...new Set(['3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f', 'x'].map((value) => path.replace(/:\w+/g, value)))].flatMap(
    (p) => [p, `${p}/`],
  );
const servedAt = (route: (typeof ROUTES)[number], path: string) =>
  new RegExp(`^${route.path.replace(/:\w+/g, '[^/]+')}/?$`).test(path);
const JOB_PATHS = [
  ...new Set(ROUTES.filter((route) => route.tag === 'jobs').flatMap((route) => requestPaths(route.path))),
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'MKCOL', 'LOCK', 'PURGE'];

/** Which route every method on a jobs path must reach, and the scope it needs there: the service's route's, else a key and a 405. */
function expectedRoute(method: string, path: string): { name: string; scope: string } {
  const served = ROUTES.find(
    (route) =>
      (route.method.toUpperCase() === method || (route.method === 'get' && method === 'HEAD')) && servedAt(route, path),
  );
  return served ? { name: kongRouteFor(served.scope), scope: served.scope } : OTHER_METHODS;
}

const invariants: Invariants<Files> = {
  'the jobs routes are exactly jobs-read, jobs-write and jobs-other-methods': ({ kong }) => {
    const names = jobsRoutes(kong)
      .map((r) => r.route.name)
      .sort();
    return sameJson(names, JOBS_ROUTES) ? [] : [`jobs routes: ${names.join(', ')}`];
  },

  "every method on a jobs path reaches the route with its scope, by Kong's router priority": ({ kong }) =>
    JOB_PATHS.flatMap((path) =>
      METHODS.flatMap((method) => {
        const want = expectedRoute(method, path);
        const { route, ambiguous } = kongRoute(kong, method, path);
        if (!route) return [`${method} ${path}: no route (Kong's 404)`];
        if (ambiguous) return [`${method} ${path}: two routes of equal priority`];
        const problems: string[] = [];
        if (route.route.name !== want.name)
          problems.push(`${method} ${path}: routed to ${route.route.name}, expected ${want.name}`);
        const scope = route.plugins.get('job-scopes')?.config?.required_scope;
        if (scope !== want.scope) problems.push(`${method} ${path}: scope ${String(scope)}, expected ${want.scope}`);
        return problems;
      }),
    ),

  'every route of the service is reached through the route for its scope': ({ kong }) =>
    ROUTES.flatMap((route) =>
      requestPaths(route.path)
        .filter((path) => !path.endsWith('/'))
        .flatMap((path) => {
          const { route: found } = kongRoute(kong, route.method.toUpperCase(), path);
          const scope = found?.plugins.get('job-scopes')?.config?.required_scope;
          return found?.route.name === kongRouteOf(route) && scope === route.scope
            ? []
            : [
                `${route.method.toUpperCase()} ${path}: ${found ? `${found.route.name} with ${String(scope)}` : "Kong's 404"}, expected ${kongRouteOf(route)} with ${route.scope}`,
              ];
        }),
    ),

  "every method on a webhook path reaches a webhook route with jobs:read (other methods are the service's 405)": ({
    kong,
  }) =>
    WEBHOOK_PATHS.flatMap((path) =>
      METHODS.flatMap((method) => {
        const { route, ambiguous } = kongRoute(kong, method, path);
        const read =
          (method === 'GET' || method === 'HEAD') &&
          ROUTES.some((one) => one.tag === 'webhooks' && one.method === 'get' && servedAt(one, path));
        const want = read ? 'webhooks-read' : 'webhooks-manage';
        const scope = route?.plugins.get('job-scopes')?.config?.required_scope;
        return route && !ambiguous && route.route.name === want && scope === 'jobs:read'
          ? []
          : [
              `${method} ${path}: ${route?.route.name ?? "Kong's 404"} with ${String(scope)}, expected ${want} with jobs:read`,
            ];
      }),
    ),

  'jobs-other-methods has no methods field, so no method is left to a 404': ({ kong }) => {
    const other = routes(kong).find((r) => r.route.name === 'jobs-other-methods');
    return other && other.route.methods === undefined ? [] : ['jobs-other-methods lists methods'];
  },

  'job-scopes sends the gateway secret from the env vault': ({ kong }) =>
    jobsRoutes(kong).flatMap(({ route, plugins }) =>
      plugins.get('job-scopes')?.config?.gateway_secret === '{vault://env/jobs-gateway-secret}'
        ? []
        : [`${route.name}: gateway_secret is not {vault://env/jobs-gateway-secret}`],
    ),

  'key-auth runs on every jobs route with the agreed settings': ({ kong }) =>
    jobsRoutes(kong).flatMap(({ route, plugins }) => {
      const ka = plugins.get('key-auth');
      if (!ka) return [`${route.name}: no key-auth`];
      return Object.entries(EXPECTED_KEY_AUTH)
        .filter(([k, v]) => !sameJson(ka.config?.[k], v))
        .map(
          ([k, v]) =>
            `${route.name}: key-auth ${k} is ${JSON.stringify(ka.config?.[k])}, expected ${JSON.stringify(v)}`,
        );
    }),

  "key-auth's key_names equal job-scopes' key_names": ({ kong }) => {
    const defaults = jobScopesDefaultKeyNames();
    return jobsRoutes(kong).flatMap(({ route, plugins }) => {
      const kaNames = plugins.get('key-auth')?.config?.key_names;
      const jsNames = plugins.get('job-scopes')?.config?.key_names ?? defaults;
      return sameJson(kaNames, jsNames)
        ? []
        : [`${route.name}: key-auth key_names ${JSON.stringify(kaNames)} vs job-scopes ${JSON.stringify(jsNames)}`];
    });
  },

  'auth-guard guards every jobs route, before key-auth, with a limit of 10': ({ kong }) => {
    const problems: string[] = [];
    const priority = Number(/PRIORITY\s*=\s*(\d+)/.exec(AUTH_GUARD_LUA)?.[1]);
    if (!(priority > KEY_AUTH_PRIORITY)) problems.push(`auth-guard PRIORITY ${priority} does not run before key-auth`);
    for (const { route, plugins } of jobsRoutes(kong)) {
      const limit = plugins.get('auth-guard')?.config?.limit;
      if (limit !== 10) problems.push(`${route.name}: auth-guard limit ${String(limit)}`);
    }
    return problems;
  },

  'each state file is tagged for its own sync': (files) =>
    (
      Object.entries({
        kong: 'jobs-api',
        partners: 'jobs-partners',
        partnerKeys: 'jobs-partner-keys',
        demo: 'jobs-demo',
      }) as [keyof Files, string][]
    ).flatMap(([f, tag]) => {
      const doc = files[f];
      const problems: string[] = [];
      if (doc._format_version !== '3.0')
        problems.push(`${FILE_NAMES[f]}: _format_version ${String(doc._format_version)}`);
      if (!sameJson(doc._info?.select_tags, [tag])) {
        problems.push(`${FILE_NAMES[f]}: select_tags ${JSON.stringify(doc._info?.select_tags)}, expected ["${tag}"]`);
      }
      return problems;
    }),

  'partners.yaml, partner-keys.yaml and demo.yaml hold consumers only': (files) =>
    inFiles(files, ['partners', 'partnerKeys', 'demo'], (name, doc) =>
      Object.keys(doc)
        .filter((k) => !['_format_version', '_info', 'consumers'].includes(k))
        .map((k) => `${name}: ${k}`),
    ),

  'kong.yaml holds only the keyless anonymous consumer': ({ kong }) => {
    const consumers = kong.consumers ?? [];
    const anon = consumers.find((c) => c.username === 'anonymous');
    const problems = consumers.filter((c) => c.username !== 'anonymous').map((c) => `kong.yaml consumer ${c.username}`);
    if (!anon) return [...problems, 'no anonymous consumer'];
    if (anon.id !== ANONYMOUS_ID) problems.push(`anonymous id ${String(anon.id)}`);
    if ((anon.keyauth_credentials ?? []).length) problems.push('anonymous has a key');
    if ((anon.acls ?? []).length) problems.push('anonymous has groups');
    return problems;
  },

  'no consumer or credential in a production file has a literal key or a demo- name': (files) =>
    inFiles(files, ['kong', 'partners', 'partnerKeys'], (file, doc) =>
      (doc.consumers ?? []).flatMap((c) => [
        ...(/^demo-/i.test(c.username) || /^demo-/i.test(c.custom_id ?? '')
          ? [`${file}: demo consumer ${c.username}`]
          : []),
        ...(c.keyauth_credentials ?? [])
          .filter((k) => !DECK_ENV_REF.test(k.key))
          .map((k) => `${file}: ${c.username} has a literal key ${String(k.key).slice(0, 4)}…`),
      ]),
    ),

  'every jobs route is rate limited per consumer with the spec message': ({ kong }) =>
    jobsRoutes(kong).flatMap(({ route, plugins }) => {
      const rl = plugins.get('job-rate-limits');
      if (!rl) return [`${route.name}: no job-rate-limits`];
      const c = rl.config ?? {};
      const problems: string[] = [];
      if (c.error_message !== 'Rate limit exceeded')
        problems.push(`${route.name}: error_message ${String(c.error_message)}`);
      if (c.limit_by !== 'consumer') problems.push(`${route.name}: limit_by ${String(c.limit_by)}`);
      if (c.error_code !== undefined && c.error_code !== 429)
        problems.push(`${route.name}: error_code ${JSON.stringify(c.error_code)}`);
      if (typeof c.minute !== 'number' || c.minute <= 0) problems.push(`${route.name}: no per-minute limit`);
      return problems;
    }),

  'rate limits count in Redis, shared by every Kong node, password from the vault, a bounded wait': ({ kong }) =>
    jobsRoutes(kong).flatMap(({ route, plugins }) => {
      const c = plugins.get('job-rate-limits')?.config ?? {};
      const redis = (c.redis ?? {}) as Record<string, unknown>;
      const problems: string[] = [];
      if (typeof redis.host !== 'string' || redis.host === '') problems.push(`${route.name}: no redis.host`);
      if (!Number.isInteger(redis.port)) problems.push(`${route.name}: redis.port ${String(redis.port)}`);
      if (redis.password !== REDIS_PASSWORD_REF)
        problems.push(`${route.name}: redis.password is not ${REDIS_PASSWORD_REF}`);
      // A request waits at most this for a Redis that does not answer (decisions.md, "Rate limiting and Kong's cost").
      if (!Number.isInteger(redis.timeout) || (redis.timeout as number) > 1000)
        problems.push(`${route.name}: redis.timeout ${String(redis.timeout)}`);
      for (const k of Object.keys(c).filter((k) => k.startsWith('redis_')))
        problems.push(`${route.name}: deprecated ${k}`);
      return problems;
    }),

  'the write route limits bodies to 100 kilobytes': ({ kong }) => {
    const write = routes(kong).find((r) => r.route.name === 'jobs-write');
    const c = write?.plugins.get('request-size-limiting')?.config;
    return c && c.allowed_payload_size === 100 && c.size_unit === 'kilobytes'
      ? []
      : [`jobs-write: request-size-limiting is ${JSON.stringify(c)}`];
  },

  'job-metrics is global and the bundled prometheus (a log serializer per request) is set nowhere': ({ kong }) => {
    const problems = (kong.plugins ?? []).some((x) => x.name === 'job-metrics') ? [] : ['no global job-metrics plugin'];
    if (allPlugins(kong).some((x) => x.name === 'prometheus')) problems.push('prometheus configured');
    return problems;
  },

  'the demo consumers in demo.yaml are exactly as documented': ({ demo }) => {
    const problems: string[] = [];
    const names = (demo.consumers ?? []).map((c) => c.username).sort();
    if (!sameJson(names, Object.keys(DEMO_CONSUMERS).sort())) problems.push(`demo consumers: ${names.join(', ')}`);
    for (const [username, want] of Object.entries(DEMO_CONSUMERS)) {
      const c = (demo.consumers ?? []).find((x) => x.username === username);
      if (!c) continue;
      if (c.id !== want.id) problems.push(`${username}: id ${String(c.id)}`);
      if (c.custom_id !== username) problems.push(`${username}: custom_id ${String(c.custom_id)}`);
      const groups = (c.acls ?? []).map((a) => a.group).sort();
      if (!sameJson(groups, [...want.groups].sort())) problems.push(`${username}: groups ${groups.join(', ')}`);
      const keys = c.keyauth_credentials ?? [];
      if (keys.length !== 1 || !keys[0]?.key.startsWith('demo-') || !keys[0]?.id) {
        problems.push(`${username}: needs exactly one demo key with a fixed credential id`);
      }
    }
    return problems;
  },

  'groups are only jobs:read, jobs:write and disabled': (files) =>
    allConsumers(files).flatMap(({ file, c }) =>
      (c.acls ?? [])
        .filter((a) => !['jobs:read', 'jobs:write', 'disabled'].includes(a.group))
        .map((a) => `${file}: ${c.username}: unknown group ${a.group}`),
    ),

  'jobs routes keep the path and reach jobs-service': ({ kong }) =>
    jobsRoutes(kong).flatMap(({ route, service }) => {
      const problems: string[] = [];
      if (route.strip_path !== false) problems.push(`${route.name}: strip_path ${String(route.strip_path)}`);
      if (service.url !== 'http://jobs-service:3000') problems.push(`${route.name}: upstream ${String(service.url)}`);
      return problems;
    }),

  'jobs-service is an upstream of two or more targets, health-checked on liveness (/healthz, never the database) and passively; every service retries through it':
    ({ kong }) => {
      const problems: string[] = [];
      const upstream = (kong.upstreams ?? []).find((u) => u.name === 'jobs-service');
      if (!upstream) return ['no upstream jobs-service'];
      if ((upstream.targets ?? []).length < 2) problems.push(`${(upstream.targets ?? []).length} target(s)`);
      const { active, passive } = upstream.healthchecks ?? {};
      if (active?.http_path !== '/healthz' || !(active?.healthy?.interval > 0) || !(active?.unhealthy?.interval > 0))
        problems.push('no active /healthz check');
      if (!(active?.timeout >= 3))
        problems.push(`active probe timeout ${String(active?.timeout)} s leaves no room on a busy host`);
      if (active?.unhealthy?.tcp_failures !== 1)
        problems.push('a dead instance is not ejected at its first refused probe');
      if (!(passive?.unhealthy?.tcp_failures > 0)) problems.push('no passive check on connection failures');
      if ((passive?.unhealthy?.http_statuses ?? []).includes(503))
        problems.push("passive checks eject on the service's own 503");
      if ((active?.unhealthy?.http_statuses ?? []).includes(503))
        problems.push(
          "active checks eject on a 503, so a database away from every instance is Kong's own 503, without Retry-After",
        );
      for (const service of kong.services ?? [])
        if (!(Number(service.retries) > 0)) problems.push(`${service.name}: retries ${String(service.retries)}`);
      return problems;
    },

  'only the plugins the gateway is built with': ({ kong }) =>
    allPlugins(kong)
      .filter((p) => !ALLOWED_PLUGINS.has(p.name))
      .map((p) => `unexpected plugin ${p.name}`),

  'auth-cases.json only uses the state files, routes and consumers they hold': (files) => {
    const problems: string[] = [];
    for (const f of ['kong.yaml', 'demo.yaml']) {
      if (!AUTH_CASES.stateFiles.includes(f)) problems.push(`auth-cases.json does not load ${f}`);
    }
    const extra = AUTH_CASES.stateFiles
      .filter((f) => f !== 'kong.yaml' && f !== 'demo.yaml')
      .map((f) => parse(read(f), { merge: true }) as StateDoc);
    const routeNames = new Set(routes(files.kong).map((r) => r.route.name));
    const users = new Set(
      [files.kong, files.demo, ...extra].flatMap((d) => (d.consumers ?? []).map((c) => c.username)),
    );
    for (const c of AUTH_CASES.cases) {
      if (!routeNames.has(c.route)) problems.push(`case route ${c.route}`);
      if (c.consumer !== null && !users.has(c.consumer)) problems.push(`case consumer ${c.consumer}`);
    }
    return problems;
  },
};

describe('kong.yaml, partners.yaml and demo.yaml', () => invariantsHold(invariants, load));

// Every invariant must be able to fail: each mutation breaks a fresh copy of the files and must be
// reported by the invariant named with it.
describe('the state file invariants catch a broken copy', () => {
  const route = (f: Files, name: string): Route => {
    const r = f.kong.services?.[0]?.routes?.find((x) => x.name === name);
    if (!r) throw new Error(`no route ${name}`);
    return r;
  };
  const routePlugin = (f: Files, routeName: string, plugin: string): Plugin => {
    const p = route(f, routeName).plugins?.find((x) => x.name === plugin);
    if (!p) throw new Error(`no ${plugin} on ${routeName}`);
    return p;
  };
  const servicePlugin = (f: Files, name: string): Plugin => {
    const p = f.kong.services?.[0]?.plugins?.find((x) => x.name === name);
    if (!p) throw new Error(`no ${name}`);
    return p;
  };
  const consumer = (doc: StateDoc, username: string): Consumer => {
    const c = doc.consumers?.find((x) => x.username === username);
    if (!c) throw new Error(`no consumer ${username}`);
    return c;
  };
  const dropPlugin = (f: Files, routeName: string, plugin: string) => {
    const r = route(f, routeName);
    r.plugins = (r.plugins ?? []).filter((p) => p.name !== plugin);
  };
  const redis = (f: Files, routeName: string) =>
    routePlugin(f, routeName, 'job-rate-limits').config!.redis as Record<string, unknown>;

  const mutations: Mutation<Files>[] = [
    [
      'a jobs route is added',
      'the jobs routes are exactly jobs-read, jobs-write and jobs-other-methods',
      (f) => {
        f.kong.services?.[0]?.routes?.push({
          name: 'jobs-admin',
          methods: ['GET'],
          paths: ['~/api/v1/jobs/admin$'],
          strip_path: false,
        });
      },
    ],
    [
      'job-scopes removed from the write route',
      "every method on a jobs path reaches the route with its scope, by Kong's router priority",
      (f) => dropPlugin(f, 'jobs-write', 'job-scopes'),
    ],
    [
      'write route asks only jobs:read',
      "every method on a jobs path reaches the route with its scope, by Kong's router priority",
      (f) => {
        routePlugin(f, 'jobs-write', 'job-scopes').config!.required_scope = 'jobs:read';
      },
    ],
    [
      'read route asks jobs:write',
      "every method on a jobs path reaches the route with its scope, by Kong's router priority",
      (f) => {
        routePlugin(f, 'jobs-read', 'job-scopes').config!.required_scope = 'jobs:write';
      },
    ],
    [
      'other methods need no key scope',
      "every method on a jobs path reaches the route with its scope, by Kong's router priority",
      (f) => {
        routePlugin(f, 'jobs-other-methods', 'job-scopes').config!.required_scope = 'jobs:write';
      },
    ],
    [
      'POST added to the read route (equal priority with jobs-write)',
      "every method on a jobs path reaches the route with its scope, by Kong's router priority",
      (f) => {
        route(f, 'jobs-read').methods!.push('POST');
      },
    ],
    [
      'methods removed from the read route',
      "every method on a jobs path reaches the route with its scope, by Kong's router priority",
      (f) => {
        delete route(f, 'jobs-read').methods;
      },
    ],
    [
      'other methods listed again (OPTIONS gets a 404)',
      "every method on a jobs path reaches the route with its scope, by Kong's router priority",
      (f) => {
        route(f, 'jobs-other-methods').methods = ['PUT', 'PATCH', 'DELETE'];
      },
    ],
    [
      'webhook management asks jobs:write',
      "every method on a webhook path reaches a webhook route with jobs:read (other methods are the service's 405)",
      (f) => {
        routePlugin(f, 'webhooks-manage', 'job-scopes').config!.required_scope = 'jobs:write';
      },
    ],
    [
      'the OpenAPI document left off the read route',
      'every route of the service is reached through the route for its scope',
      (f) => {
        route(f, 'jobs-read').paths = route(f, 'jobs-read').paths!.filter((p) => !p.includes('openapi'));
      },
    ],
    [
      'other methods listed exhaustively',
      'jobs-other-methods has no methods field, so no method is left to a 404',
      (f) => {
        route(f, 'jobs-other-methods').methods = [
          ...METHODS.filter((m) => !['GET', 'HEAD', 'POST'].includes(m)),
          'POST',
        ];
      },
    ],
    [
      'literal gateway secret',
      'job-scopes sends the gateway secret from the env vault',
      (f) => {
        routePlugin(f, 'jobs-read', 'job-scopes').config!.gateway_secret = 'hunter2';
      },
    ],
    [
      'key-auth hides credentials',
      'key-auth runs on every jobs route with the agreed settings',
      (f) => {
        servicePlugin(f, 'key-auth').config!.hide_credentials = true;
      },
    ],
    [
      'key-auth without anonymous',
      'key-auth runs on every jobs route with the agreed settings',
      (f) => {
        delete servicePlugin(f, 'key-auth').config!.anonymous;
      },
    ],
    [
      'key-auth reads the body',
      'key-auth runs on every jobs route with the agreed settings',
      (f) => {
        servicePlugin(f, 'key-auth').config!.key_in_body = true;
      },
    ],
    [
      'key-auth removed',
      'key-auth runs on every jobs route with the agreed settings',
      (f) => {
        f.kong.services![0]!.plugins = f.kong.services![0]!.plugins!.filter((p) => p.name !== 'key-auth');
      },
    ],
    [
      'key-auth gains a key name',
      "key-auth's key_names equal job-scopes' key_names",
      (f) => {
        servicePlugin(f, 'key-auth').config!.key_names = ['X-API-Key', 'api_key', 'apikey'];
      },
    ],
    [
      'job-scopes key_names differ',
      "key-auth's key_names equal job-scopes' key_names",
      (f) => {
        routePlugin(f, 'jobs-read', 'job-scopes').config!.key_names = ['api_key', 'X-API-Key'];
      },
    ],
    [
      'auth-guard removed',
      'auth-guard guards every jobs route, before key-auth, with a limit of 10',
      (f) => {
        f.kong.services![0]!.plugins = f.kong.services![0]!.plugins!.filter((p) => p.name !== 'auth-guard');
      },
    ],
    [
      'auth-guard limit raised',
      'auth-guard guards every jobs route, before key-auth, with a limit of 10',
      (f) => {
        servicePlugin(f, 'auth-guard').config!.limit = 1000;
      },
    ],
    [
      'kong.yaml without select tags',
      'each state file is tagged for its own sync',
      (f) => {
        delete f.kong._info;
      },
    ],
    [
      'demo.yaml tagged like kong.yaml',
      'each state file is tagged for its own sync',
      (f) => {
        f.demo._info = { select_tags: ['jobs-api'] };
      },
    ],
    [
      'partners.yaml shares the demo tag',
      'each state file is tagged for its own sync',
      (f) => {
        f.partners._info = { select_tags: ['jobs-partners', 'jobs-demo'] };
      },
    ],
    [
      'a route in demo.yaml',
      'partners.yaml, partner-keys.yaml and demo.yaml hold consumers only',
      (f) => {
        f.demo.services = [{ name: 'demo-service', routes: [] }];
      },
    ],
    [
      'a plugin in partners.yaml',
      'partners.yaml, partner-keys.yaml and demo.yaml hold consumers only',
      (f) => {
        f.partners.plugins = [{ name: 'key-auth' }];
      },
    ],
    [
      'a demo consumer back in kong.yaml',
      'kong.yaml holds only the keyless anonymous consumer',
      (f) => {
        f.kong.consumers!.push({ username: 'demo-reader', keyauth_credentials: [{ key: 'demo-reader-2f6c1a9e' }] });
      },
    ],
    [
      'anonymous gets a key',
      'kong.yaml holds only the keyless anonymous consumer',
      (f) => {
        consumer(f.kong, 'anonymous').keyauth_credentials = [{ key: '${{ env "DECK_ANON_KEY" }}' }];
      },
    ],
    [
      'anonymous gets a group',
      'kong.yaml holds only the keyless anonymous consumer',
      (f) => {
        consumer(f.kong, 'anonymous').acls = [{ group: 'jobs:read' }];
      },
    ],
    [
      'anonymous removed',
      'kong.yaml holds only the keyless anonymous consumer',
      (f) => {
        f.kong.consumers = f.kong.consumers!.filter((c) => c.username !== 'anonymous');
      },
    ],
    [
      'a real key committed to partner-keys.yaml',
      'no consumer or credential in a production file has a literal key or a demo- name',
      (f) => {
        f.partnerKeys.consumers = [{ username: 'acme', keyauth_credentials: [{ key: 'jl_live_9f8e7d6c5b4a' }] }];
      },
    ],
    [
      'partner-keys.yaml shares the partners tag',
      'each state file is tagged for its own sync',
      (f) => {
        f.partnerKeys._info = { select_tags: ['jobs-partners'] };
      },
    ],
    [
      'a real key committed to partners.yaml',
      'no consumer or credential in a production file has a literal key or a demo- name',
      (f) => {
        f.partners.consumers = [{ username: 'acme', keyauth_credentials: [{ key: 'acme-live-9f8e7d6c' }] }];
      },
    ],
    [
      'a demo key in partners.yaml',
      'no consumer or credential in a production file has a literal key or a demo- name',
      (f) => {
        f.partners.consumers = [{ username: 'acme', keyauth_credentials: [{ key: 'demo-writer-7b3d8e41' }] }];
      },
    ],
    [
      'a demo-named partner with an env key',
      'no consumer or credential in a production file has a literal key or a demo- name',
      (f) => {
        f.partners.consumers = [
          { username: 'demo-acme', keyauth_credentials: [{ key: '${{ env "DECK_ACME_KEY" }}' }] },
        ];
      },
    ],
    [
      'a non-DECK env reference',
      'no consumer or credential in a production file has a literal key or a demo- name',
      (f) => {
        f.partners.consumers = [{ username: 'acme', keyauth_credentials: [{ key: '${{ env "ACME_KEY" }}' }] }];
      },
    ],
    [
      'a literal key on anonymous',
      'no consumer or credential in a production file has a literal key or a demo- name',
      (f) => {
        consumer(f.kong, 'anonymous').keyauth_credentials = [{ key: 'anon-12345678' }];
      },
    ],
    [
      'rate limit by ip',
      'every jobs route is rate limited per consumer with the spec message',
      (f) => {
        routePlugin(f, 'jobs-read', 'job-rate-limits').config!.limit_by = 'ip';
      },
    ],
    [
      'rate limit message changed',
      'every jobs route is rate limited per consumer with the spec message',
      (f) => {
        routePlugin(f, 'jobs-write', 'job-rate-limits').config!.error_message = 'API rate limit exceeded';
      },
    ],
    [
      'rate limiting removed',
      'every jobs route is rate limited per consumer with the spec message',
      (f) => dropPlugin(f, 'jobs-other-methods', 'job-rate-limits'),
    ],
    [
      "back to Kong's rate-limiting (a round trip per window and a timer per request)",
      'every jobs route is rate limited per consumer with the spec message',
      (f) => {
        routePlugin(f, 'jobs-read', 'job-rate-limits').name = 'rate-limiting';
      },
    ],
    [
      'a literal Redis password',
      'rate limits count in Redis, shared by every Kong node, password from the vault, a bounded wait',
      (f) => {
        redis(f, 'jobs-write').password = 'hunter2';
      },
    ],
    [
      'no Redis host',
      'rate limits count in Redis, shared by every Kong node, password from the vault, a bounded wait',
      (f) => {
        delete redis(f, 'jobs-other-methods').host;
      },
    ],
    [
      'a 30 s wait for a silent Redis',
      'rate limits count in Redis, shared by every Kong node, password from the vault, a bounded wait',
      (f) => {
        redis(f, 'jobs-read').timeout = 30000;
      },
    ],
    [
      'deprecated redis_host field',
      'rate limits count in Redis, shared by every Kong node, password from the vault, a bounded wait',
      (f) => {
        routePlugin(f, 'jobs-read', 'job-rate-limits').config!.redis_host = 'redis';
      },
    ],
    [
      'body limit raised',
      'the write route limits bodies to 100 kilobytes',
      (f) => {
        routePlugin(f, 'jobs-write', 'request-size-limiting').config!.allowed_payload_size = 1000;
      },
    ],
    [
      'body limit in megabytes',
      'the write route limits bodies to 100 kilobytes',
      (f) => {
        routePlugin(f, 'jobs-write', 'request-size-limiting').config!.size_unit = 'megabytes';
      },
    ],
    [
      'job-metrics removed',
      'job-metrics is global and the bundled prometheus (a log serializer per request) is set nowhere',
      (f) => {
        f.kong.plugins = f.kong.plugins!.filter((p) => p.name !== 'job-metrics');
      },
    ],
    [
      'bundled prometheus on a route',
      'job-metrics is global and the bundled prometheus (a log serializer per request) is set nowhere',
      (f) => {
        f.kong.services![0]!.routes![0]!.plugins!.push({ name: 'prometheus', config: { per_consumer: false } });
      },
    ],
    [
      'disabled consumer re-enabled',
      'the demo consumers in demo.yaml are exactly as documented',
      (f) => {
        consumer(f.demo, 'demo-disabled').acls = [{ group: 'jobs:read' }];
      },
    ],
    [
      'reader given write',
      'the demo consumers in demo.yaml are exactly as documented',
      (f) => {
        consumer(f.demo, 'demo-reader').acls!.push({ group: 'jobs:write' });
      },
    ],
    [
      'second writer removed',
      'the demo consumers in demo.yaml are exactly as documented',
      (f) => {
        f.demo.consumers = f.demo.consumers!.filter((c) => c.username !== 'demo-writer-2');
      },
    ],
    [
      'consumer id changed',
      'the demo consumers in demo.yaml are exactly as documented',
      (f) => {
        consumer(f.demo, 'demo-writer').id = '11111111-1111-4111-8111-111111111111';
      },
    ],
    [
      'typo in a group',
      'groups are only jobs:read, jobs:write and disabled',
      (f) => {
        consumer(f.demo, 'demo-writer').acls!.push({ group: 'jobs:wirte' });
      },
    ],
    [
      'strip_path on',
      'jobs routes keep the path and reach jobs-service',
      (f) => {
        route(f, 'jobs-read').strip_path = true;
      },
    ],
    [
      'upstream renamed',
      'jobs routes keep the path and reach jobs-service',
      (f) => {
        f.kong.services![0]!.url = 'http://service:3000';
      },
    ],
    [
      'one target',
      'jobs-service is an upstream of two or more targets, health-checked on liveness (/healthz, never the database) and passively; every service retries through it',
      (f) => {
        f.kong.upstreams![0]!.targets.pop();
      },
    ],
    [
      'passive checks on 503',
      'jobs-service is an upstream of two or more targets, health-checked on liveness (/healthz, never the database) and passively; every service retries through it',
      (f) => {
        f.kong.upstreams![0]!.healthchecks.passive.unhealthy.http_statuses.push(503);
      },
    ],
    [
      'active checks on /readyz, which asks the database every instance shares',
      'jobs-service is an upstream of two or more targets, health-checked on liveness (/healthz, never the database) and passively; every service retries through it',
      (f) => {
        f.kong.upstreams![0]!.healthchecks.active.http_path = '/readyz';
      },
    ],
    [
      "active checks on /readyz's 503",
      'jobs-service is an upstream of two or more targets, health-checked on liveness (/healthz, never the database) and passively; every service retries through it',
      (f) => {
        f.kong.upstreams![0]!.healthchecks.active.unhealthy.http_statuses.push(503);
      },
    ],
    [
      'no retries',
      'jobs-service is an upstream of two or more targets, health-checked on liveness (/healthz, never the database) and passively; every service retries through it',
      (f) => {
        f.kong.services![0]!.retries = 0;
      },
    ],
    [
      'acl plugin added',
      'only the plugins the gateway is built with',
      (f) => {
        route(f, 'jobs-read').plugins!.push({ name: 'acl', config: { allow: ['jobs:read'] } });
      },
    ],
    [
      'case route renamed away',
      'auth-cases.json only uses the state files, routes and consumers they hold',
      (f) => {
        route(f, 'jobs-other-methods').name = 'jobs-misc';
      },
    ],
    [
      'demo consumer of a case removed',
      'auth-cases.json only uses the state files, routes and consumers they hold',
      (f) => {
        f.demo.consumers = f.demo.consumers!.filter((c) => c.username !== 'demo-disabled');
      },
    ],
  ];

  mutationsCaught(invariants, load, mutations);
});
