/**
 * Options of the local gateway's correlation-id, prometheus and request-size-limiting plugins
 * that kong.yaml does not use today but an operator may set (issue 12: no test exercised them):
 * Kong's defaults, the other generator, and the error an operator reads for a wrong value.
 */
import { loadGateway } from '../../gateway/local/config/load';
import { RateLimitCounters } from '../../gateway/local/plugins/rate-limiting';
import { pluginRegistry } from '../../gateway/local/plugins/registry';
import { DEMO, configFile, gatewayOverStub, gatewayEnv, send, type KongState } from './support';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const key = { 'X-API-Key': DEMO.reader };

/** Replaces the global plugin `name`'s config in kong.yaml. */
const withGlobal = (name: string, config: Record<string, unknown>) => (state: KongState) => {
  state.plugins = state.plugins.filter((p: { name: string }) => p.name !== name);
  state.plugins.push({ name, config });
};

describe("correlation-id with Kong's defaults (Kong-Request-ID, uuid#counter, no echo)", () => {
  const stack = gatewayOverStub({ edit: withGlobal('correlation-id', {}) });

  test('the service gets <worker uuid>#<n>, counting up by one; the client is not sent the id', async () => {
    const first = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: key });
    const sentFirst = stack.upstream.received.at(-1)!.headers['kong-request-id'] as string;
    await send(stack.gateway.url, { path: '/api/v1/jobs', headers: key });
    const sentSecond = stack.upstream.received.at(-1)!.headers['kong-request-id'] as string;
    expect(sentFirst).toMatch(new RegExp(`^${UUID}#\\d+$`));
    const [uuid, n] = sentFirst.split('#');
    expect(sentSecond).toBe(`${uuid}#${Number(n) + 1}`);
    expect(first.status).toBe(200);
    expect(first.headers['kong-request-id']).toBeUndefined();
  });

  test('an id the client sent is kept', async () => {
    await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { ...key, 'Kong-Request-ID': 'from-client' } });
    expect(stack.upstream.received.at(-1)!.headers['kong-request-id']).toBe('from-client');
  });
});

describe('correlation-id with generator uuid and echo_downstream', () => {
  const stack = gatewayOverStub({ edit: withGlobal('correlation-id', { header_name: 'X-Trace', generator: 'uuid', echo_downstream: true }) });

  test('each request gets a fresh UUID, sent to the service and echoed to the client', async () => {
    const first = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: key });
    const sent = stack.upstream.received.at(-1)!.headers['x-trace'];
    expect(sent).toMatch(new RegExp(`^${UUID}$`));
    expect(first.headers['x-trace']).toBe(sent);
    const second = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: key });
    expect(second.headers['x-trace']).toMatch(new RegExp(`^${UUID}$`));
    expect(second.headers['x-trace']).not.toBe(sent);
  });

  test("the client's id is echoed, on a rejected request too", async () => {
    const rejected = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-Trace': 'mine-1' } });
    expect(rejected.status).toBe(401);
    expect(rejected.headers['x-trace']).toBe('mine-1');
  });
});

describe('request-size-limiting in bytes, with require_content_length', () => {
  const stack = gatewayOverStub({
    edit: (state) => {
      const config = { allowed_payload_size: 10, size_unit: 'bytes', require_content_length: true };
      for (const service of state.services) {
        // On the service (so the read route has it too) and on the routes that set their own.
        (service.plugins ??= []).push({ name: 'request-size-limiting', config });
        for (const route of service.routes ?? []) {
          for (const plugin of route.plugins ?? []) if (plugin.name === 'request-size-limiting') plugin.config = config;
        }
      }
    },
  });

  test('10 bytes pass, 11 are a 413; no Content-Length is a 411, chunked is read and measured', async () => {
    const post = (body: string, chunked = false) =>
      send(stack.gateway.url, { method: 'POST', path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json' }, body, chunked });
    expect((await post('{"a":"12"}')).status).toBe(200);
    const over = await post('{"a":"123"}');
    expect(over.status).toBe(413);
    expect(over.json).toMatchObject({ error: 'Request size limit exceeded' });
    const noLength = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: key });
    expect(noLength.status).toBe(411);
    expect(noLength.json).toMatchObject({ error: 'A valid Content-Length header is required' });
    expect((await post('{"a":"12"}', true)).status).toBe(200);
    expect((await post('{"a":"123"}', true)).status).toBe(413);
  });
});

describe('a wrong option is refused at load, naming the plugin and the field', () => {
  const plugins = pluginRegistry(new RateLimitCounters());
  test.each([
    ['prometheus', { per_consumer: 'no' }, 'plugins[1] (prometheus).config.per_consumer: expected a boolean'],
    ['correlation-id', { generator: 'tracker' }, 'config.generator: "tracker" is not reproduced by the local gateway (supported: uuid, uuid#counter)'],
    ['correlation-id', { header_name: 42 }, 'config.header_name: expected a string'],
    ['correlation-id', { echo_downstream: 'yes' }, 'config.echo_downstream: expected a boolean'],
  ])('%s %j', (name, config, message) => {
    const cf = configFile(3000, withGlobal(name, config));
    try {
      expect(() => loadGateway(cf.paths, gatewayEnv('x'), plugins, () => undefined)).toThrow(message);
    } finally {
      cf.remove();
    }
  });

  test.each([
    [{ allowed_payload_size: 'ten' }, 'config.allowed_payload_size: expected a number'],
    [{ size_unit: 'gigabytes' }, 'config.size_unit: "gigabytes" is not a size unit (supported: megabytes, kilobytes, bytes)'],
    [{ require_content_length: 1 }, 'config.require_content_length: expected a boolean'],
  ])('request-size-limiting %j', (config, message) => {
    const cf = configFile(3000, (state) => {
      const plugin = state.services[0].plugins.find((p: { name: string }) => p.name === 'request-size-limiting');
      if (plugin) plugin.config = config;
      else state.services[0].plugins.push({ name: 'request-size-limiting', config });
    });
    try {
      expect(() => loadGateway(cf.paths, gatewayEnv('x'), plugins, () => undefined)).toThrow(message);
    } finally {
      cf.remove();
    }
  });
});
