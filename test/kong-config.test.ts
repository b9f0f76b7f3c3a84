// Invariants of kong.yaml, the decK state Kong runs with. Each invariant is a function returning the
// violations it finds; the first block checks the real file, the second proves every invariant can
// fail by breaking a copy of the file in the way it guards against.
import { readFileSync } from 'fs';
import { join } from 'path';
import { parse } from 'yaml';

type Plugin = { name: string; config?: Record<string, unknown> };
type Route = {
  name: string;
  methods?: string[];
  paths?: string[];
  strip_path?: boolean;
  plugins?: Plugin[];
};
type Service = { name: string; url?: string; plugins?: Plugin[]; routes?: Route[] };
type Consumer = {
  username: string;
  id?: string;
  custom_id?: string;
  keyauth_credentials?: { id?: string; key: string }[];
  acls?: { group: string }[];
};
type KongDoc = { services?: Service[]; plugins?: Plugin[]; consumers?: Consumer[] };

const ROOT = join(__dirname, '..');
const KONG_YAML = readFileSync(join(ROOT, 'kong.yaml'), 'utf8');
const SCHEMA_LUA = readFileSync(join(ROOT, 'gateway/plugins/job-scopes/schema.lua'), 'utf8');
const AUTH_CASES = JSON.parse(readFileSync(join(ROOT, 'gateway/spec/auth-cases.json'), 'utf8')) as {
  cases: { route: string; consumer: string; request: { headers: Record<string, unknown>; query: Record<string, unknown> } }[];
};

const load = (): KongDoc => parse(KONG_YAML) as KongDoc;

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

const DEMO_CONSUMERS: Record<string, { id: string; groups: string[] }> = {
  'demo-reader': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01', groups: ['jobs:read'] },
  'demo-writer': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a02', groups: ['jobs:read', 'jobs:write'] },
  'demo-writer-2': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a03', groups: ['jobs:read', 'jobs:write'] },
  'demo-disabled': { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a04', groups: ['jobs:read', 'disabled'] },
};
const ANONYMOUS_ID = '00000000-0000-4000-8000-000000000000';
const ALLOWED_PLUGINS = new Set([
  'key-auth', 'job-scopes', 'rate-limiting', 'request-size-limiting', 'correlation-id',
]);

type RouteView = { route: Route; service: Service; plugins: Map<string, Plugin> };

/** Each route with the plugins that apply to it (global, then service, then route; the most specific wins). */
function routes(doc: KongDoc): RouteView[] {
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

function allPlugins(doc: KongDoc): Plugin[] {
  const list = [...(doc.plugins ?? [])];
  for (const s of doc.services ?? []) {
    list.push(...(s.plugins ?? []));
    for (const r of s.routes ?? []) list.push(...(r.plugins ?? []));
  }
  return list;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const invariants: Record<string, (doc: KongDoc) => string[]> = {
  'there are exactly the three jobs routes': (doc) => {
    const names = routes(doc).map((r) => r.route.name).sort();
    return sameJson(names, ['jobs-other-methods', 'jobs-read', 'jobs-write']) ? [] : [`routes: ${names.join(', ')}`];
  },

  'every route has job-scopes with the scope its methods need': (doc) =>
    routes(doc).flatMap(({ route, plugins }) => {
      const js = plugins.get('job-scopes');
      if (!js) return [`${route.name}: no job-scopes`];
      const scope = js.config?.required_scope;
      if (scope !== 'jobs:read' && scope !== 'jobs:write') return [`${route.name}: invalid scope ${String(scope)}`];
      const methods = route.methods ?? [];
      const problems: string[] = [];
      if (methods.length === 0) problems.push(`${route.name}: matches every method`);
      if (methods.includes('POST') && scope !== 'jobs:write') problems.push(`${route.name}: POST needs jobs:write`);
      if ((methods.includes('GET') || methods.includes('HEAD')) && scope !== 'jobs:read') {
        problems.push(`${route.name}: GET needs jobs:read`);
      }
      if (methods.includes('POST') && methods.some((m) => m !== 'POST')) {
        problems.push(`${route.name}: POST shares a route with ${methods.join(', ')}`);
      }
      return problems;
    }),

  'job-scopes sends the gateway secret from the env vault': (doc) =>
    routes(doc).flatMap(({ route, plugins }) =>
      plugins.get('job-scopes')?.config?.gateway_secret === '{vault://env/jobs-gateway-secret}'
        ? []
        : [`${route.name}: gateway_secret is not {vault://env/jobs-gateway-secret}`],
    ),

  'key-auth runs on every route with the agreed settings': (doc) =>
    routes(doc).flatMap(({ route, plugins }) => {
      const ka = plugins.get('key-auth');
      if (!ka) return [`${route.name}: no key-auth`];
      return Object.entries(EXPECTED_KEY_AUTH)
        .filter(([k, v]) => !sameJson(ka.config?.[k], v))
        .map(([k, v]) => `${route.name}: key-auth ${k} is ${JSON.stringify(ka.config?.[k])}, expected ${JSON.stringify(v)}`);
    }),

  "key-auth's key_names equal job-scopes' key_names": (doc) => {
    const defaults = jobScopesDefaultKeyNames();
    return routes(doc).flatMap(({ route, plugins }) => {
      const kaNames = plugins.get('key-auth')?.config?.key_names;
      const jsNames = plugins.get('job-scopes')?.config?.key_names ?? defaults;
      return sameJson(kaNames, jsNames)
        ? []
        : [`${route.name}: key-auth key_names ${JSON.stringify(kaNames)} vs job-scopes ${JSON.stringify(jsNames)}`];
    });
  },

  'the anonymous consumer exists, with no key and no group': (doc) => {
    const anon = (doc.consumers ?? []).find((c) => c.username === 'anonymous');
    if (!anon) return ['no anonymous consumer'];
    const problems: string[] = [];
    if (anon.id !== ANONYMOUS_ID) problems.push(`anonymous id ${String(anon.id)}`);
    if ((anon.keyauth_credentials ?? []).length) problems.push('anonymous has a key');
    if ((anon.acls ?? []).length) problems.push('anonymous has groups');
    return problems;
  },

  'every route is rate limited per consumer with the spec message': (doc) =>
    routes(doc).flatMap(({ route, plugins }) => {
      const rl = plugins.get('rate-limiting');
      if (!rl) return [`${route.name}: no rate-limiting`];
      const c = rl.config ?? {};
      const problems: string[] = [];
      if (c.error_message !== 'Rate limit exceeded') problems.push(`${route.name}: error_message ${String(c.error_message)}`);
      if (c.limit_by !== 'consumer') problems.push(`${route.name}: limit_by ${String(c.limit_by)}`);
      if (c.error_code !== undefined && c.error_code !== 429) problems.push(`${route.name}: error_code ${String(c.error_code)}`);
      if (typeof c.minute !== 'number' || c.minute <= 0) problems.push(`${route.name}: no per-minute limit`);
      return problems;
    }),

  'the write route limits bodies to 100 kilobytes': (doc) => {
    const write = routes(doc).find((r) => r.route.name === 'jobs-write');
    const c = write?.plugins.get('request-size-limiting')?.config;
    return c && c.allowed_payload_size === 100 && c.size_unit === 'kilobytes'
      ? []
      : [`jobs-write: request-size-limiting is ${JSON.stringify(c)}`];
  },

  'correlation-id tags every request with X-Request-ID': (doc) =>
    routes(doc).flatMap(({ route, plugins }) => {
      const c = plugins.get('correlation-id')?.config;
      return c && c.header_name === 'X-Request-ID' && c.echo_downstream === true
        ? []
        : [`${route.name}: correlation-id is ${JSON.stringify(c)}`];
    }),

  'no literal key other than demo keys and DECK_ env references': (doc) =>
    (doc.consumers ?? []).flatMap((c) =>
      (c.keyauth_credentials ?? [])
        .filter((k) => !(/^demo-[A-Za-z0-9-]+$/.test(k.key) || /^\$\{\{ env "DECK_[A-Z0-9_]+" \}\}$/.test(k.key)))
        .map((k) => `${c.username}: literal key ${k.key.slice(0, 4)}…`),
    ),

  'the demo consumers are exactly as documented': (doc) => {
    const problems: string[] = [];
    for (const [username, want] of Object.entries(DEMO_CONSUMERS)) {
      const c = (doc.consumers ?? []).find((x) => x.username === username);
      if (!c) {
        problems.push(`${username}: missing`);
        continue;
      }
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

  'groups are only jobs:read, jobs:write and disabled': (doc) =>
    (doc.consumers ?? []).flatMap((c) =>
      (c.acls ?? [])
        .filter((a) => !['jobs:read', 'jobs:write', 'disabled'].includes(a.group))
        .map((a) => `${c.username}: unknown group ${a.group}`),
    ),

  'routes keep the path and reach jobs-service': (doc) =>
    routes(doc).flatMap(({ route, service }) => {
      const problems: string[] = [];
      if (route.strip_path !== false) problems.push(`${route.name}: strip_path ${String(route.strip_path)}`);
      if (service.url !== 'http://jobs-service:3000') problems.push(`${route.name}: upstream ${String(service.url)}`);
      return problems;
    }),

  'only the plugins the gateway is built with': (doc) =>
    allPlugins(doc)
      .filter((p) => !ALLOWED_PLUGINS.has(p.name))
      .map((p) => `unexpected plugin ${p.name}`),

  'auth-cases.json only uses routes and consumers of kong.yaml': (doc) => {
    const routeNames = new Set(routes(doc).map((r) => r.route.name));
    const users = new Set((doc.consumers ?? []).map((c) => c.username));
    return AUTH_CASES.cases.flatMap((c) => [
      ...(routeNames.has(c.route) ? [] : [`case route ${c.route}`]),
      ...(users.has(c.consumer) ? [] : [`case consumer ${c.consumer}`]),
    ]);
  },
};

describe('kong.yaml', () => {
  const doc = load();
  it.each(Object.keys(invariants))('%s', (name) => {
    expect(invariants[name]!(doc)).toEqual([]);
  });
});

// Every invariant must be able to fail: each mutation breaks a fresh copy of kong.yaml and must be
// reported by the invariant named with it.
describe('kong.yaml invariants catch a broken copy', () => {
  const route = (doc: KongDoc, name: string): Route => {
    const r = doc.services?.[0]?.routes?.find((x) => x.name === name);
    if (!r) throw new Error(`no route ${name}`);
    return r;
  };
  const routePlugin = (doc: KongDoc, routeName: string, plugin: string): Plugin => {
    const p = route(doc, routeName).plugins?.find((x) => x.name === plugin);
    if (!p) throw new Error(`no ${plugin} on ${routeName}`);
    return p;
  };
  const keyAuth = (doc: KongDoc): Plugin => {
    const p = doc.services?.[0]?.plugins?.find((x) => x.name === 'key-auth');
    if (!p) throw new Error('no key-auth');
    return p;
  };
  const consumer = (doc: KongDoc, username: string): Consumer => {
    const c = doc.consumers?.find((x) => x.username === username);
    if (!c) throw new Error(`no consumer ${username}`);
    return c;
  };
  const dropPlugin = (doc: KongDoc, routeName: string, plugin: string) => {
    const r = route(doc, routeName);
    r.plugins = (r.plugins ?? []).filter((p) => p.name !== plugin);
  };

  const mutations: [string, string, (doc: KongDoc) => void][] = [
    ['a route is added', 'there are exactly the three jobs routes', (d) => {
      d.services?.[0]?.routes?.push({ name: 'admin', methods: ['GET'], paths: ['~/admin$'], strip_path: false });
    }],
    ['job-scopes removed from the write route', 'every route has job-scopes with the scope its methods need', (d) => dropPlugin(d, 'jobs-write', 'job-scopes')],
    ['write route asks only jobs:read', 'every route has job-scopes with the scope its methods need', (d) => {
      routePlugin(d, 'jobs-write', 'job-scopes').config!.required_scope = 'jobs:read';
    }],
    ['read route asks jobs:write', 'every route has job-scopes with the scope its methods need', (d) => {
      routePlugin(d, 'jobs-read', 'job-scopes').config!.required_scope = 'jobs:write';
    }],
    ['unknown scope', 'every route has job-scopes with the scope its methods need', (d) => {
      routePlugin(d, 'jobs-other-methods', 'job-scopes').config!.required_scope = 'jobs:admin';
    }],
    ['POST added to the read route', 'every route has job-scopes with the scope its methods need', (d) => {
      route(d, 'jobs-read').methods!.push('POST');
    }],
    ['literal gateway secret', 'job-scopes sends the gateway secret from the env vault', (d) => {
      routePlugin(d, 'jobs-read', 'job-scopes').config!.gateway_secret = 'hunter2';
    }],
    ['key-auth hides credentials', 'key-auth runs on every route with the agreed settings', (d) => {
      keyAuth(d).config!.hide_credentials = true;
    }],
    ['key-auth without anonymous', 'key-auth runs on every route with the agreed settings', (d) => {
      delete keyAuth(d).config!.anonymous;
    }],
    ['key-auth reads the body', 'key-auth runs on every route with the agreed settings', (d) => {
      keyAuth(d).config!.key_in_body = true;
    }],
    ['key-auth removed', 'key-auth runs on every route with the agreed settings', (d) => {
      d.services![0]!.plugins = d.services![0]!.plugins!.filter((p) => p.name !== 'key-auth');
    }],
    ['key-auth gains a key name', "key-auth's key_names equal job-scopes' key_names", (d) => {
      keyAuth(d).config!.key_names = ['X-API-Key', 'api_key', 'apikey'];
    }],
    ['job-scopes key_names differ', "key-auth's key_names equal job-scopes' key_names", (d) => {
      routePlugin(d, 'jobs-read', 'job-scopes').config!.key_names = ['api_key', 'X-API-Key'];
    }],
    ['anonymous gets a key', 'the anonymous consumer exists, with no key and no group', (d) => {
      consumer(d, 'anonymous').keyauth_credentials = [{ key: 'demo-anon' }];
    }],
    ['anonymous gets a group', 'the anonymous consumer exists, with no key and no group', (d) => {
      consumer(d, 'anonymous').acls = [{ group: 'jobs:read' }];
    }],
    ['anonymous removed', 'the anonymous consumer exists, with no key and no group', (d) => {
      d.consumers = d.consumers!.filter((c) => c.username !== 'anonymous');
    }],
    ['rate limit by ip', 'every route is rate limited per consumer with the spec message', (d) => {
      routePlugin(d, 'jobs-read', 'rate-limiting').config!.limit_by = 'ip';
    }],
    ['rate limit message changed', 'every route is rate limited per consumer with the spec message', (d) => {
      routePlugin(d, 'jobs-write', 'rate-limiting').config!.error_message = 'API rate limit exceeded';
    }],
    ['rate limiting removed', 'every route is rate limited per consumer with the spec message', (d) => dropPlugin(d, 'jobs-other-methods', 'rate-limiting')],
    ['body limit raised', 'the write route limits bodies to 100 kilobytes', (d) => {
      routePlugin(d, 'jobs-write', 'request-size-limiting').config!.allowed_payload_size = 1000;
    }],
    ['body limit in megabytes', 'the write route limits bodies to 100 kilobytes', (d) => {
      routePlugin(d, 'jobs-write', 'request-size-limiting').config!.size_unit = 'megabytes';
    }],
    ['correlation-id removed', 'correlation-id tags every request with X-Request-ID', (d) => {
      d.plugins = [];
    }],
    ['a real key committed', 'no literal key other than demo keys and DECK_ env references', (d) => {
      d.consumers!.push({ username: 'acme', keyauth_credentials: [{ key: 'acme-live-9f8e7d6c' }] });
    }],
    ['a non-DECK env reference', 'no literal key other than demo keys and DECK_ env references', (d) => {
      d.consumers!.push({ username: 'acme', keyauth_credentials: [{ key: '${{ env "ACME_KEY" }}' }] });
    }],
    ['disabled consumer re-enabled', 'the demo consumers are exactly as documented', (d) => {
      consumer(d, 'demo-disabled').acls = [{ group: 'jobs:read' }];
    }],
    ['reader given write', 'the demo consumers are exactly as documented', (d) => {
      consumer(d, 'demo-reader').acls!.push({ group: 'jobs:write' });
    }],
    ['second writer removed', 'the demo consumers are exactly as documented', (d) => {
      d.consumers = d.consumers!.filter((c) => c.username !== 'demo-writer-2');
    }],
    ['consumer id changed', 'the demo consumers are exactly as documented', (d) => {
      consumer(d, 'demo-writer').id = '11111111-1111-4111-8111-111111111111';
    }],
    ['typo in a group', 'groups are only jobs:read, jobs:write and disabled', (d) => {
      consumer(d, 'demo-writer').acls!.push({ group: 'jobs:wirte' });
    }],
    ['strip_path on', 'routes keep the path and reach jobs-service', (d) => {
      route(d, 'jobs-read').strip_path = true;
    }],
    ['upstream renamed', 'routes keep the path and reach jobs-service', (d) => {
      d.services![0]!.url = 'http://service:3000';
    }],
    ['acl plugin added', 'only the plugins the gateway is built with', (d) => {
      route(d, 'jobs-read').plugins!.push({ name: 'acl', config: { allow: ['jobs:read'] } });
    }],
    ['case route renamed away', 'auth-cases.json only uses routes and consumers of kong.yaml', (d) => {
      route(d, 'jobs-other-methods').name = 'jobs-misc';
    }],
  ];

  it('covers every invariant with at least one mutation', () => {
    const covered = new Set(mutations.map((m) => m[1]));
    expect(Object.keys(invariants).filter((name) => !covered.has(name))).toEqual([]);
  });

  it.each(mutations)('%s is caught by "%s"', (_label, invariant, mutate) => {
    const doc = load();
    mutate(doc);
    expect(invariants[invariant]).toBeDefined();
    expect(invariants[invariant]!(doc).length).toBeGreaterThan(0);
  });
});
