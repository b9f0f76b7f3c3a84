import { escapeUri, normalizePath, Router } from '../../gateway/local/router';
import type { Route, Service } from '../../gateway/local/types';
import { loadGateway } from '../../gateway/local/config/load';
import { RateLimitCounters } from '../../gateway/local/plugins/job-rate-limits';
import { pluginRegistry } from '../../gateway/local/plugins/registry';
import { DEMO, DEMO_YAML, KONG_YAML, gatewayEnv, overOneStub, send, startGateway } from './support';

const service = {} as Service;

function route(name: string, paths: string[], methods: string[] | null = null): Route {
  return {
    id: name,
    name,
    methods,
    paths: paths.map((p) => new RegExp(`^${p.slice(1)}`)),
    prefixOnly: false,
    service,
    plugins: [],
  };
}

describe('route matching (Kong 3.9 traditional_compatible priorities, for regex paths)', () => {
  test('a regex path is anchored at the start, not at the end', () => {
    const router = new Router([route('r', ['~/api/v1/jobs'])]);
    expect(router.match('GET', '/api/v1/jobs/anything')?.name).toBe('r');
    expect(router.match('GET', '/prefix/api/v1/jobs')).toBeNull();
  });

  test('a route with methods outranks one without; a method outside the list does not match', () => {
    const router = new Router([route('any', ['~/x$']), route('get', ['~/x$'], ['GET'])]);
    expect(router.match('GET', '/x')?.name).toBe('get');
    expect(router.match('POST', '/x')?.name).toBe('any');
    expect(new Router([route('get', ['~/x'], ['GET'])]).match('OPTIONS', '/x')).toBeNull();
  });

  test('paths are normalized before matching, as kong/tools/uri.lua normalize does', () => {
    expect(normalizePath('/api/v1/%6aobs')).toBe('/api/v1/jobs');
    expect(normalizePath('/api//v1/./x/../jobs')).toBe('/api/v1/jobs');
    expect(normalizePath('/api/v1/jobs%2fx')).toBe('/api/v1/jobs%2Fx');
    // "others" are decoded too, reserved characters stay escaped
    expect(normalizePath('/a%20b/%3Bc/%41')).toBe('/a b/%3Bc/A');
    expect(normalizePath('/a/b/..')).toBe('/a/');
    expect(normalizePath('/../a')).toBe('/a');
  });

  test('the upstream URI is the normalized path escaped again (kong.tools.uri.escape)', () => {
    expect(escapeUri('/a b/ä/%3B/~')).toBe('/a%20b/%E4/%3B/~');
  });
});

describe("kong.yaml's three jobs routes (the third without methods) and the catch-all", () => {
  const router = new Router(
    loadGateway([KONG_YAML, DEMO_YAML], {
      env: gatewayEnv('x'),
      plugins: pluginRegistry(new RateLimitCounters()),
      warn: () => undefined,
    }).config.routes,
  );
  test.each([
    ['GET', '/api/v1/jobs', 'jobs-read'],
    ['HEAD', '/api/v1/jobs/abc', 'jobs-read'],
    ['POST', '/api/v1/jobs/', 'jobs-write'],
    ['POST', '/api/v1/jobs/abc', 'jobs-other-methods'],
    ['PUT', '/api/v1/jobs/abc', 'jobs-other-methods'],
    ['DELETE', '/api/v1/jobs', 'jobs-other-methods'],
    ['OPTIONS', '/api/v1/jobs', 'jobs-other-methods'],
    ['PROPFIND', '/api/v1/jobs/abc', 'jobs-other-methods'],
    ['GET', '/api/v1/jobs/a/b', 'jobs-not-found'],
    ['OPTIONS', '/api/v1/other', 'jobs-not-found'],
    ['POST', '/docs', 'jobs-not-found'],
    ['GET', '/docs', 'jobs-docs'],
  ])('%s %s -> %s', (method, path, expected) => {
    expect(router.match(method, path)?.name ?? null).toBe(expected);
  });

  test('the order of the routes in the file does not matter: methods + paths outrank paths alone', () => {
    const reversed = new Router([route('any', ['~/x$']), route('get', ['~/x$'], ['GET'])].reverse());
    expect(reversed.match('GET', '/x')?.name).toBe('get');
    expect(reversed.match('OPTIONS', '/x')?.name).toBe('any');
  });

  test('a regex path outranks the plain prefix / whatever the file order', () => {
    const catchAll: Route = { ...route('all', ['~/']), paths: [/^\//], prefixOnly: true };
    const router = new Router([catchAll, route('x', ['~/x$'])]);
    expect(router.match('PUT', '/x')?.name).toBe('x');
    expect(router.match('PUT', '/y')?.name).toBe('all');
  });
});

describe("kong.yaml's routes through the gateway", () => {
  test("no other route: the catch-all answers the API's 404 body, and the request never reaches the service", async () => {
    await overOneStub([(cf) => startGateway(cf.paths, gatewayEnv('x'))], async ([gateway], upstream) => {
      for (const [method, path] of [
        ['GET', '/api/v1/unknown'],
        ['GET', '/api/v2/jobs'],
        ['GET', '/api/v1/jobs/a/b'],
        ['OPTIONS', '/api/v1/jobs/a/b'],
        ['GET', '/'],
      ] as const) {
        const res = await send(gateway.url, { method, path, headers: { 'X-API-Key': DEMO.reader } });
        expect([method, path, res.status]).toEqual([method, path, 404]);
        expect(res.json).toEqual({ error: 'Not found' });
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      }
      expect(upstream.received).toHaveLength(0);

      const encoded = await send(gateway.url, { path: '/api/v1/%6aobs/', headers: { 'X-API-Key': DEMO.reader } });
      expect(encoded.status).toBe(200);
      expect(upstream.received[0]?.url).toBe('/api/v1/jobs/');
    });
  });
});
