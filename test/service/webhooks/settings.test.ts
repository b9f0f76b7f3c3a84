/** The WEBHOOK_* settings, which the service and the dispatcher load alike (service/config.ts): production-safe when unset, and every bad value named at start-up. */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../../service/config';

test("unset: https only, no extra address, no key (creating a subscription is then a 503), the issue's timings", () => {
  expect(loadConfig({}).webhooks).toEqual({
    secretsKey: undefined,
    previousSecretsKeys: [],
    policy: { allowHttp: false, allowed: [] },
    retry: { firstMs: 5000, maxMs: 36_000_000, giveUpAfterMs: 259_200_000 },
    leaseMs: 30_000,
    pollMs: 200,
    timeoutMs: 10_000,
    subscriptionLimit: 5,
  });
});

test('development settings as npm start sets them', () => {
  const key = randomBytes(32);
  const settings = loadConfig({
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8, ::1/128',
    WEBHOOK_SECRETS_KEY: key.toString('base64'),
  }).webhooks;
  expect(settings.policy).toEqual({ allowHttp: true, allowed: ['127.0.0.0/8', '::1/128'] });
  expect(settings.secretsKey).toEqual(key);
});

test('WEBHOOK_SECRETS_KEY_PREVIOUS: a comma list of keys that open, beside the one that seals', () => {
  const [current, a, b] = [randomBytes(32), randomBytes(32), randomBytes(32)];
  const settings = loadConfig({
    WEBHOOK_SECRETS_KEY: current.toString('hex'),
    WEBHOOK_SECRETS_KEY_PREVIOUS: `${a.toString('base64')}, ${b.toString('hex')}`,
  }).webhooks;
  expect(settings).toMatchObject({ secretsKey: current, previousSecretsKeys: [a, b] });
});

test.each([
  [
    { WEBHOOK_SECRETS_KEY_PREVIOUS: randomBytes(32).toString('hex') },
    'WEBHOOK_SECRETS_KEY_PREVIOUS is set without WEBHOOK_SECRETS_KEY, the key that seals',
  ],
  [
    {
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString('hex'),
      WEBHOOK_SECRETS_KEY_PREVIOUS: `${randomBytes(32).toString('hex')},short`,
    },
    'WEBHOOK_SECRETS_KEY_PREVIOUS (each of its comma list) must be 32 random bytes in base64 or hex',
  ],
  [{ WEBHOOK_ALLOW_HTTP: 'yes' }, 'WEBHOOK_ALLOW_HTTP must be true or false'],
  [
    { WEBHOOK_ALLOWED_ADDRESSES: 'localhost' },
    'WEBHOOK_ALLOWED_ADDRESSES must be a comma list of addresses or CIDR ranges, e.g. 127.0.0.0/8,::1',
  ],
  [
    { WEBHOOK_ALLOWED_ADDRESSES: '10.0.0.0/33' },
    'WEBHOOK_ALLOWED_ADDRESSES must be a comma list of addresses or CIDR ranges, e.g. 127.0.0.0/8,::1',
  ],
  [{ WEBHOOK_TIMEOUT_MS: '20000' }, 'WEBHOOK_TIMEOUT_MS must be at most 10000'],
  [{ WEBHOOK_LEASE_MS: '5000' }, 'WEBHOOK_LEASE_MS must be at least twice WEBHOOK_TIMEOUT_MS'],
  [{ WEBHOOK_SECRETS_KEY: 'too-short' }, 'WEBHOOK_SECRETS_KEY must be 32 random bytes in base64 or hex'],
  [{ WEBHOOK_SECRETS_KEY: ' ' }, 'WEBHOOK_SECRETS_KEY must be 32 random bytes in base64 or hex'],
  [{ WEBHOOK_METRICS_PORT: '70000' }, 'WEBHOOK_METRICS_PORT must be a port number (0-65535)'],
  [{ WEBHOOK_METRICS_PORT: 'metrics' }, 'WEBHOOK_METRICS_PORT must be a port number (0-65535)'],
])('%j is refused: %s', (env, message) => {
  expect(() => loadConfig(env).webhooks).toThrow(message);
});

test("WEBHOOK_METRICS_PORT: the dispatcher's metrics port, none when unset or empty (as compose may pass it)", () => {
  expect(loadConfig({ WEBHOOK_METRICS_PORT: '9465' }).webhookMetricsPort).toBe(9465);
  expect(loadConfig({ WEBHOOK_METRICS_PORT: '' }).webhookMetricsPort).toBeUndefined();
  expect(loadConfig({}).webhookMetricsPort).toBeUndefined();
});

test('a bad WEBHOOK_* value and a bad service variable are named in the one error', () => {
  expect(() => loadConfig({ PORT: 'eighty', WEBHOOK_POLL_MS: '5' })).toThrow(
    'Invalid configuration: PORT must be a port number (0-65535); WEBHOOK_POLL_MS must be at least 10',
  );
});
