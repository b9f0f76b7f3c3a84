import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { renderDeckTemplate } from '../../gateway/local/config/deck-template';
import { loadGateway, mergeStates } from '../../gateway/local/config/load';
import { parseStateList } from '../../gateway/local';
import { RateLimitCounters } from '../../gateway/local/plugins/job-rate-limits';
import { pluginRegistry } from '../../gateway/local/plugins/registry';
import {
  DEMO,
  DEMO_YAML,
  KONG_YAML,
  ROOT,
  configFile,
  gatewayEnv,
  overOneStub,
  send,
  startGateway,
  stubUpstream,
  type ConfigFile,
} from './support';
import type { Parsed } from '../helpers/parsed';

const plugins = pluginRegistry(new RateLimitCounters());

/** A change to a copy of the state files, and what loading the copy must fail with. */
type Refusal = [string, (state: Parsed, demo: Parsed) => void, string];

function expectRefused(edit: Refusal[1], message: string, env = gatewayEnv('x')): void {
  const cf = configFile(3000, edit);
  try {
    expect(() => loadGateway(cf.paths, { env, plugins, warn: () => undefined })).toThrow(message);
  } finally {
    cf.remove();
  }
}

describe('decK environment references', () => {
  test('${{ env "DECK_..." }} is replaced by the variable, wherever it is in the text', () => {
    const text = 'key: \'${{ env "DECK_ACME_KEY" }}\'\n# ${{ env "DECK_OTHER" }}\n';
    expect(renderDeckTemplate(text, { DECK_ACME_KEY: 'acme-123', DECK_OTHER: 'x' })).toBe("key: 'acme-123'\n# x\n");
  });

  test("an unset variable fails with decK's message, naming it and its position", () => {
    const text = 'consumers:\n  - key: ${{ env "DECK_ACME_KEY" }}\n';
    expect(() => renderDeckTemplate(text, {})).toThrow(
      'template: state:2:13: executing "state" at <env "DECK_ACME_KEY">: error calling env: ' +
        "environment variable 'DECK_ACME_KEY' present in state file but not set",
    );
  });

  test('only DECK_-prefixed names may be read', () => {
    expect(() => renderDeckTemplate('a: ${{ env "HOME" }}', { HOME: '/root' })).toThrow(
      "environment variables in the state file must be prefixed with 'DECK_', found: 'HOME'",
    );
  });

  test('a reference inside a YAML comment is rendered too, so an unset one fails the whole file', () => {
    expect(() => renderDeckTemplate('# e.g. ${{ env "DECK_EXAMPLE" }}\na: 1\n', {})).toThrow(
      "environment variable 'DECK_EXAMPLE' present in state file but not set",
    );
  });

  test('a key from the environment authenticates through the gateway; unset, the file is refused', async () => {
    const upstream = await stubUpstream();
    const cf = configFile(upstream.port);
    const text = stringify(cf.demo.state).replace(DEMO.reader, '${{ env "DECK_READER_KEY" }}');
    cf.demo.writeRaw(text);
    await expect(startGateway(cf.paths, gatewayEnv('s3cret-s3cret-s3cret'))).rejects.toThrow(
      "environment variable 'DECK_READER_KEY' present in state file but not set",
    );
    const gateway = await startGateway(
      cf.paths,
      gatewayEnv('s3cret-s3cret-s3cret', { DECK_READER_KEY: 'partner-key-from-env' }),
    );
    try {
      const ok = await send(gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': 'partner-key-from-env' } });
      expect(ok.status).toBe(200);
      expect(upstream.received.at(-1)?.headers['x-consumer-username']).toBe('demo-reader');
      const old = await send(gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
      expect(old.status).toBe(401);
    } finally {
      await gateway.close();
      await upstream.close();
      cf.remove();
    }
  });

  test("the repository's kong.yaml and demo.yaml load the way decK loads them (every DECK_ reference resolvable without partner secrets)", () => {
    const env = gatewayEnv('s3cret-s3cret-s3cret');
    const loaded = loadGateway([KONG_YAML, DEMO_YAML], { env, plugins, warn: () => undefined });
    expect(loaded.config.routes.map((r) => r.name)).toEqual([
      'jobs-read',
      'jobs-write',
      'jobs-other-methods',
      'webhooks-read',
      'webhooks-manage',
      'jobs-docs',
      'jobs-not-found',
    ]);
    expect(loaded.config.credentialsByKey.get(DEMO.writer)?.consumer.groups).toEqual(['jobs:read', 'jobs:write']);
    expect(loaded.config.selectTags).toEqual(['jobs-api', 'jobs-demo']);
  });
});

describe('several state files, merged as `deck gateway sync a.yaml b.yaml` merges them', () => {
  const env = gatewayEnv('s3cret-s3cret-s3cret');

  test('kong.yaml alone serves no demo key; with demo.yaml the demo keys work', async () => {
    const alone = loadGateway([KONG_YAML], { env, plugins, warn: () => undefined });
    expect([...alone.config.credentialsByKey.keys()]).toEqual([]);
    expect([...alone.config.consumersByIdOrUsername.keys()]).toContain('anonymous');

    await overOneStub(
      [(cf) => startGateway([cf.path], env), (cf) => startGateway(cf.paths, env)],
      async ([prodOnly, both]) => {
        expect((await send(prodOnly.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } })).status).toBe(
          401,
        );
        expect(prodOnly.demoKeys()).toEqual([]);
        expect((await send(both.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } })).status).toBe(
          200,
        );
        expect(both.demoKeys().map((k) => `${k.username} ${k.key} ${k.groups.join(',')}`)).toEqual([
          `demo-reader ${DEMO.reader} jobs:read`,
          `demo-writer ${DEMO.writer} jobs:read,jobs:write`,
          `demo-writer-2 ${DEMO.writer2} jobs:read,jobs:write`,
          `demo-disabled ${DEMO.disabled} jobs:read,disabled`,
          'demo-no-groups demo-no-groups-4e9b2d71 ',
        ]);
      },
    );
  });

  test('lists are appended in file order, select_tags de-duplicated, the first _format_version kept', () => {
    const states = [
      { _format_version: '3.0', _info: { select_tags: ['a', 'b'] }, consumers: [{ username: 'one' }] },
      { _info: { select_tags: ['b', 'c'] }, consumers: [{ username: 'two' }], plugins: [{ name: 'x' }] },
      { _format_version: '1.1', consumers: null },
    ];
    expect(mergeStates(states)).toEqual({
      _format_version: '3.0',
      _info: { select_tags: ['a', 'b', 'c'] },
      consumers: [{ username: 'one' }, { username: 'two' }],
      plugins: [{ name: 'x' }],
    });
  });

  const refusals: Refusal[] = [
    [
      'a consumer in both files',
      (_s, demo) => demo.consumers.push({ username: 'anonymous', id: 'x' }),
      'consumer "anonymous" is defined twice',
    ],
    [
      "another consumer under a consumer's id",
      (_s, demo) => demo.consumers.push({ username: 'someone-else', id: '00000000-0000-4000-8000-000000000000' }),
      'consumer "00000000-0000-4000-8000-000000000000" is defined twice',
    ],
    [
      'a service in both files',
      (s, demo) => (demo.services = [{ ...s.services[0], routes: [] }]),
      'service name "jobs-service" is used twice',
    ],
    [
      'a route name in both files',
      (s, demo) => (demo.services = [{ ...s.services[0], name: 'other', routes: [s.services[0].routes[0]] }]),
      'route name "jobs-read" is used twice',
    ],
    [
      'a key in both files',
      (_s, demo) =>
        demo.consumers.push({ username: 'copy', id: 'c', keyauth_credentials: [{ id: 'k', key: DEMO.reader }] }),
      'the same key is used twice',
    ],
    [
      '_info settings that change what decK syncs',
      (_s, demo) => (demo._info.default_lookup_tags = { consumers: ['x'] }),
      '_info: the local gateway reads select_tags only',
    ],
  ];
  test.each(refusals)('refused: %s', (_name, edit, message) => expectRefused(edit, message, env));

  test('an error names the file it is in', () => {
    const cf = configFile(3000);
    try {
      cf.demo.writeRaw('_format_version: "3.0"\nconsumers:\n  - key: ${{ env "DECK_UNSET" }}\n');
      expect(() => loadGateway(cf.paths, { env, plugins, warn: () => undefined })).toThrow(
        `reading file ${cf.demo.path}: template: state:3:13`,
      );
      cf.demo.writeRaw('_format_version: "3.0"\n_info: { selected_tags: [jobs-demo] }\n');
      expect(() => loadGateway(cf.paths, { env, plugins, warn: () => undefined })).toThrow(
        `reading file ${cf.demo.path}: _info: the local gateway reads select_tags only`,
      );
    } finally {
      cf.remove();
    }
  });

  test('LOCAL_GATEWAY_STATE is a comma list of files', () => {
    expect(parseStateList('kong.yaml, demo.yaml,')).toEqual(['kong.yaml', 'demo.yaml']);
    expect(parseStateList(undefined)).toEqual([]);
  });
});

describe('Kong env vault references', () => {
  test("kong.yaml's gateway_secret reaches the service as X-Gateway-Secret; unresolvable, no secret is sent", async () => {
    const resolvable = (cf: ConfigFile) => startGateway(cf.paths, gatewayEnv('from-the-env-vault-123'));
    const unresolvable = (cf: ConfigFile) => startGateway(cf.paths, gatewayEnv(undefined));
    await overOneStub([resolvable, unresolvable], async ([withSecret, without], upstream) => {
      await send(withSecret.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
      expect(upstream.received.at(-1)?.headers['x-gateway-secret']).toBe('from-the-env-vault-123');
      const res = await send(without.url, {
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.reader, 'X-Gateway-Secret': 'forged' },
      });
      expect(res.status).toBe(200);
      expect(upstream.received.at(-1)?.headers['x-gateway-secret']).toBeUndefined();
      expect(
        without.rawLogs.some((l) => l.includes('unable to resolve reference {vault://env/jobs-gateway-secret}')),
      ).toBe(true);
    });
  });
});

describe('a new gateway secret needs a new process, as with Kong', () => {
  test("a reload keeps the secret the gateway started with (Kong's env vault keeps its copy of the environment)", async () => {
    const env = gatewayEnv('started-with-this-secret');
    await overOneStub([(cf) => startGateway(cf.paths, env)], async ([gateway], upstream) => {
      env.JOBS_GATEWAY_SECRET = 'changed-after-the-start';
      expect(gateway.reload()).toEqual({ ok: true });
      await send(gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
      expect(upstream.received.at(-1)?.headers['x-gateway-secret']).toBe('started-with-this-secret');
    });
    await overOneStub([(cf) => startGateway(cf.paths, env)], async ([restarted], upstream) => {
      await send(restarted.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
      expect(upstream.received.at(-1)?.headers['x-gateway-secret']).toBe('changed-after-the-start');
    });
  });
});

describe('what the local gateway refuses instead of ignoring', () => {
  const cases: Refusal[] = [
    ['a plugin only Kong runs', (s) => s.plugins.push({ name: 'cors' }), 'plugin "cors" is not reproduced'],
    [
      'routing on hosts',
      (s) => (s.services[0].routes[0].hosts = ['api.example.com']),
      'services.0.routes.0: Unrecognized key: "hosts"',
    ],
    [
      'a rate-limit window the plugin does not have',
      (s) => (s.services[0].routes[0].plugins[1].config.day = 5),
      'Unrecognized key: "day"',
    ],
    [
      'a rate limit with no window',
      (s) => (
        delete s.services[0].routes[0].plugins[1].config.minute,
        delete s.services[0].routes[0].plugins[1].config.hour
      ),
      'at least one of second, minute, hour',
    ],
    [
      'a limit_by mode no state file sets (consumer, and ip on the docs route, are)',
      (s) => (s.services[0].routes[0].plugins[1].config.limit_by = 'service'),
      'config.limit_by',
    ],
    [
      'a key-auth option no state file sets',
      (s) => (s.services[0].plugins[1].config.hide_credentials = true),
      'config.hide_credentials',
    ],
    [
      'another vault',
      (s) => (s.services[0].routes[0].plugins[0].config.gateway_secret = '{vault://aws/x}'),
      'only {vault://env/<name>} references',
    ],
    [
      'an unknown scope',
      (s) => (s.services[0].routes[0].plugins[0].config.required_scope = 'jobs:admin'),
      'required_scope',
    ],
    [
      'a key used twice',
      (_s, demo) => demo.consumers[0].keyauth_credentials.push({ id: 'k', key: DEMO.writer }),
      'the same key is used twice',
    ],
    ['an upstream without targets', (s) => (s.upstreams = [{ name: 'x', targets: [] }]), 'upstreams.0.targets'],
    [
      'a target without its port',
      (s) => (s.upstreams = [{ name: 'x', targets: [{ target: 'jobs-service-1' }] }]),
      'host:port',
    ],
  ];
  test.each(cases)('%s', (_name, edit, message) => expectRefused(edit, message));
});

test.each([
  ['job-scopes', 'gateway/plugins/job-scopes/handler.lua'],
  ['auth-guard', 'gateway/plugins/auth-guard/handler.lua'],
  ['job-rate-limits', 'gateway/plugins/job-rate-limits/handler.lua'],
])('%s runs at the PRIORITY of the Lua plugin', (name, file) => {
  const lua = readFileSync(path.join(ROOT, file), 'utf8');
  const priority = Number(/PRIORITY\s*=\s*(\d+)/.exec(lua)?.[1]);
  expect(plugins.get(name)?.priority).toBe(priority);
});

test("plugins run in Kong's priority order: auth-guard before key-auth, job-scopes between key-auth and request-size-limiting", () => {
  const order = [...plugins.values()].sort((a, b) => b.priority - a.priority).map((p) => p.name);
  expect(order).toEqual([
    'auth-guard',
    'key-auth',
    'job-scopes',
    'request-size-limiting',
    'job-rate-limits',
    'job-metrics',
    'request-termination',
  ]);
});
