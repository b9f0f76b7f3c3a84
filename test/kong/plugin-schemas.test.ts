/**
 * The job-scopes, auth-guard, job-rate-limits and job-metrics schemas as Kong 3.9 itself reads them: the Admin API's
 * /schemas/plugins/<name> (what Kong loaded from gateway/plugins/<name>/schema.lua) and
 * /schemas/plugins/validate (Kong's own validator, defaults filled in). kong.yaml's configurations
 * of them are accepted: every real-Kong test starts on them.
 */
import { startRealKong, type RealKong } from '../../harness/real-kong';
import type { Parsed } from '../helpers/parsed';

let kong: RealKong;
beforeAll(async () => {
  kong = await startRealKong({ serviceUrl: 'http://127.0.0.1:9', gatewaySecret: 's' });
}, 120_000);
afterAll(() => kong?.stop());

async function schema(name: string): Promise<Parsed> {
  const res = await fetch(`${kong.adminUrl}/schemas/plugins/${name}`);
  expect(res.status).toBe(200);
  return res.json();
}

const field = (fields: Parsed[], name: string) => fields.find((f) => name in f)?.[name];

/** Kong's verdict on a plugin configuration: the filled-in config, or the field errors. */
async function validate(name: string, config: unknown, extra: object = {}): Promise<{ status: number; body: Parsed }> {
  const res = await fetch(`${kong.adminUrl}/schemas/plugins/validate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, config, ...extra }),
  });
  return { status: res.status, body: await res.json() };
}

describe('job-scopes', () => {
  test('has exactly required_scope, gateway_secret and key_names, each documented; never on a consumer', async () => {
    const s = await schema('job-scopes');
    const config = field(s.fields, 'config');
    expect(config.fields.map((f: object) => Object.keys(f)[0])).toEqual([
      'required_scope',
      'gateway_secret',
      'key_names',
    ]);
    for (const f of config.fields) expect(typeof (Object.values(f)[0] as Parsed).description).toBe('string');
    expect(field(s.fields, 'consumer')).toMatchObject({ type: 'foreign', reference: 'consumers', eq: null });
    const consumerScoped = await validate(
      'job-scopes',
      { required_scope: 'jobs:read' },
      { consumer: { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01' } },
    );
    expect(consumerScoped.status).toBe(400);
    expect(consumerScoped.body.fields.consumer).toBe('value must be null');
  });

  test('requires a scope among jobs:read and jobs:write', async () => {
    expect((await validate('job-scopes', { required_scope: 'jobs:read' })).status).toBe(200);
    expect((await validate('job-scopes', { required_scope: 'jobs:write' })).status).toBe(200);
    const other = await validate('job-scopes', { required_scope: 'jobs:admin' });
    expect([other.status, other.body.fields.config.required_scope]).toEqual([
      400,
      'expected one of: jobs:read, jobs:write',
    ]);
    const none = await validate('job-scopes', {});
    expect([none.status, none.body.fields.config.required_scope]).toEqual([400, 'required field missing']);
  });

  test('keeps the gateway secret optional, referenceable and encrypted', async () => {
    const secret = field(field((await schema('job-scopes')).fields, 'config').fields, 'gateway_secret');
    expect(secret).toMatchObject({ type: 'string', required: false, referenceable: true, encrypted: true });
    expect(
      (
        await validate('job-scopes', {
          required_scope: 'jobs:read',
          gateway_secret: '{vault://env/jobs-gateway-secret}',
        })
      ).status,
    ).toBe(200);
  });

  test('defaults key_names to X-API-Key then api_key and checks them as header names; refuses unknown fields', async () => {
    const filled = await validate('job-scopes', { required_scope: 'jobs:read' });
    expect(filled.status).toBe(200);
    const badName = await validate('job-scopes', { required_scope: 'jobs:read', key_names: ['bad name'] });
    expect(badName.status).toBe(400);
    expect(JSON.stringify(badName.body.fields.config.key_names)).toMatch(/bad header name/);
    const empty = await validate('job-scopes', { required_scope: 'jobs:read', key_names: [] });
    expect(empty.status).toBe(400);
    const unknown = await validate('job-scopes', { required_scope: 'jobs:read', scopes: ['x'] });
    expect([unknown.status, unknown.body.fields.config.scopes]).toEqual([400, 'unknown field']);
    const keyNames = field(field((await schema('job-scopes')).fields, 'config').fields, 'key_names');
    expect(keyNames.default).toEqual(['X-API-Key', 'api_key']);
  });
});

describe('auth-guard', () => {
  test('has exactly `limit` and `key_names`, each documented; never on a consumer', async () => {
    const s = await schema('auth-guard');
    const config = field(s.fields, 'config');
    expect(config.fields.map((f: object) => Object.keys(f)[0])).toEqual(['limit', 'key_names']);
    expect(field(config.fields, 'limit')).toMatchObject({
      type: 'integer',
      required: true,
      default: 10,
      gt: 0,
      description: expect.any(String),
    });
    // key-auth's own default, so a guard configured without key_names looks where key-auth does.
    expect(field(config.fields, 'key_names')).toMatchObject({
      type: 'array',
      required: true,
      default: ['apikey'],
      len_min: 1,
      description: expect.any(String),
    });
    expect(field(s.fields, 'consumer')).toMatchObject({ type: 'foreign', reference: 'consumers', eq: null });
    const consumerScoped = await validate(
      'auth-guard',
      {},
      { consumer: { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01' } },
    );
    expect([consumerScoped.status, consumerScoped.body.fields.consumer]).toEqual([400, 'value must be null']);
  });

  test('key_names takes only header names, at least one', async () => {
    const filled = await validate('auth-guard', { key_names: ['X-API-Key', 'api_key'] });
    expect(filled.status).toBe(200);
    const badName = await validate('auth-guard', { key_names: ['bad name'] });
    expect(badName.status).toBe(400);
    expect(JSON.stringify(badName.body.fields.config.key_names)).toMatch(/bad header name/);
    expect((await validate('auth-guard', { key_names: [] })).status).toBe(400);
  });

  test('limit defaults to 10 and takes only whole numbers from 1', async () => {
    expect((await validate('auth-guard', {})).status).toBe(200);
    expect((await validate('auth-guard', { limit: 1 })).status).toBe(200);
    for (const bad of [0, -3, 2.5, '10'])
      expect([bad, (await validate('auth-guard', { limit: bad })).status]).toEqual([bad, 400]);
    const unknown = await validate('auth-guard', { window: 60 });
    expect([unknown.status, unknown.body.fields.config.window]).toEqual([400, 'unknown field']);
  });
});

describe('job-rate-limits', () => {
  const redis = { host: 'redis', password: '{vault://env/jobs-redis-password}', timeout: 500 };

  test('has the windows, limit_by, the refusal and a Redis, each documented; never on a consumer', async () => {
    const s = await schema('job-rate-limits');
    const config = field(s.fields, 'config');
    expect(config.fields.map((f: object) => Object.keys(f)[0])).toEqual([
      'second',
      'minute',
      'hour',
      'limit_by',
      'error_code',
      'error_message',
      'sync_rate',
      'redis',
    ]);
    for (const f of config.fields)
      expect([Object.keys(f)[0], typeof (Object.values(f)[0] as Parsed).description]).toEqual([
        Object.keys(f)[0],
        'string',
      ]);
    const consumerScoped = await validate(
      'job-rate-limits',
      { minute: 1, redis },
      { consumer: { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01' } },
    );
    expect([consumerScoped.status, consumerScoped.body.fields.consumer]).toEqual([400, 'value must be null']);
  });

  test("fills in the contract's refusal, per consumer; the Redis password is a vault reference Kong accepts", async () => {
    expect((await validate('job-rate-limits', { minute: 120, hour: 3000, redis })).status).toBe(200);
    const config = field((await schema('job-rate-limits')).fields, 'config');
    expect(field(config.fields, 'limit_by')).toMatchObject({ default: 'consumer', one_of: ['consumer', 'ip'] });
    expect(field(config.fields, 'error_code')).toMatchObject({ default: 429 });
    expect(field(config.fields, 'error_message')).toMatchObject({ default: 'Rate limit exceeded' });
    expect(field(field(config.fields, 'redis').fields, 'password')).toMatchObject({
      referenceable: true,
      encrypted: true,
    });
  });

  test('refuses a configuration with no window, no Redis host, a window of 0, another limit_by or an unknown field', async () => {
    const none = await validate('job-rate-limits', { redis });
    expect(none.status).toBe(400);
    expect(JSON.stringify(none.body)).toMatch(
      /at least one of these fields must be non-empty: 'config.second', 'config.minute', 'config.hour'/,
    );
    const noHost = await validate('job-rate-limits', { minute: 1, redis: { port: 6379 } });
    expect([noHost.status, noHost.body.fields.config?.redis?.host]).toEqual([400, 'required field missing']);
    for (const bad of [
      { minute: 0 },
      { minute: 1, limit_by: 'service' },
      { minute: 1, day: 5 },
      { minute: 1, error_code: 500 },
    ]) {
      expect([bad, (await validate('job-rate-limits', { ...bad, redis })).status]).toEqual([bad, 400]);
    }
  });
});

describe('job-metrics', () => {
  test('takes no settings, and never a consumer (series would name partners)', async () => {
    expect(field(field((await schema('job-metrics')).fields, 'config').fields, 'per_consumer')).toBeUndefined();
    expect((await validate('job-metrics', {})).status).toBe(200);
    const unknown = await validate('job-metrics', { per_consumer: true });
    expect([unknown.status, unknown.body.fields.config.per_consumer]).toEqual([400, 'unknown field']);
    const consumerScoped = await validate(
      'job-metrics',
      {},
      { consumer: { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01' } },
    );
    expect([consumerScoped.status, consumerScoped.body.fields.consumer]).toEqual([400, 'value must be null']);
  });
});
