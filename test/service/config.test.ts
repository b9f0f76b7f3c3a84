/**
 * What the environment may say (service/config.ts): the shapes of DATABASE_URL,
 * DATABASE_READ_URLS, GATEWAY_SECRET_NEXT and the numbers a deployer is likely to get wrong. Defaults and the combined error:
 * test/startup.test.ts; SEED_DEMO_DATA: test/db/seed-demo-data.test.ts.
 */
import { ConfigError, loadConfig } from '../../service/config';

const URL_SHAPE = 'DATABASE_URL must look like mysql://user:password@host:3306/database';

test.each([
  ['a JDBC URL', 'jdbc:mysql://root@127.0.0.1:3306/jobs'],
  ['a database name with a hyphen (the name is used unquoted)', 'mysql://root@127.0.0.1:3306/jobs-prod'],
  ['options after the database name', 'mysql://root@127.0.0.1:3306/jobs?ssl=true'],
  ['no database name', 'mysql://root@127.0.0.1:3306/'],
  ['a path below the database', 'mysql://root@127.0.0.1:3306/jobs/extra'],
])('DATABASE_URL with %s is refused at start-up', (_case, url) => {
  const load = () => loadConfig({ DATABASE_URL: url });
  expect(load).toThrow(ConfigError);
  expect(load).toThrow(`Invalid configuration: ${URL_SHAPE}`);
});

test('DATABASE_URL with a password, a host name and an underscore in the name is accepted as given', () => {
  const url = 'mysql://jobs:s3cret@db.internal:3307/jobs_prod';
  expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
});

test('DATABASE_READ_URLS: empty entries (a trailing or doubled comma) and spaces are dropped', () => {
  expect(
    loadConfig({ DATABASE_READ_URLS: ' mysql://ro@replica-1:3306/jobs,, mysql://ro@replica-2:3306/jobs , ' })
      .databaseReadUrls,
  ).toEqual(['mysql://ro@replica-1:3306/jobs', 'mysql://ro@replica-2:3306/jobs']);
  expect(loadConfig({ DATABASE_READ_URLS: '' }).databaseReadUrls).toEqual([]);
});

test.each([
  ['PORT', '', 'must be a port number (0-65535)'],
  ['PORT', '0x50', 'must be a port number (0-65535)'],
  ['DB_POOL_SIZE', ' 5', 'must be a whole number from 1 to 100'],
  ['SHUTDOWN_GRACE_MS', '', 'must be a whole number of milliseconds from 0 to 300000'],
  ['DB_QUEUE_LIMIT', '1e3', 'must be a whole number of requests from 0 to 10000'],
  ['DB_QUERY_TIMEOUT_MS', '5000.5', 'must be a whole number of milliseconds from 100 to 25000'],
])('%s=%j is refused, not read as a number (an empty one would be 0)', (name, value, message) => {
  expect(() => loadConfig({ [name]: value })).toThrow(`Invalid configuration: ${name} ${message}`);
});

test('numbers are digits: PORT=0 (any free port) and SHUTDOWN_GRACE_MS=0 (no grace) are accepted when written out', () => {
  expect(loadConfig({ PORT: '0', SHUTDOWN_GRACE_MS: '0', DB_POOL_SIZE: '100' })).toMatchObject({
    port: 0,
    shutdownGraceMs: 0,
    dbPoolSize: 100,
  });
});

test('PUBLIC_URL is the gateway origin the reference page sends "Try it out" to: an origin, never a path', () => {
  expect(loadConfig({ PUBLIC_URL: 'https://jobs-api.example.org' }).publicUrl).toBe('https://jobs-api.example.org');
  expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8443' }).publicUrl).toBe('http://127.0.0.1:8443');
  expect(loadConfig({}).publicUrl).toBeUndefined();
  // The operations' paths already start with /api/v1: a path here would be sent twice.
  for (const url of [
    'https://jobs-api.example.org/api/v1',
    'https://jobs-api.example.org/',
    'jobs-api.example.org',
    '',
  ]) {
    expect(() => loadConfig({ PUBLIC_URL: url })).toThrow(
      "Invalid configuration: PUBLIC_URL must be the gateway's public origin, like https://jobs-api.example.org (no path)",
    );
  }
});

test.each([
  [
    'GATEWAY_SECRET_NEXT without GATEWAY_SECRET',
    { GATEWAY_SECRET_NEXT: 'next-gateway-secret-9876543210abc' },
    'GATEWAY_SECRET_NEXT is set without GATEWAY_SECRET',
  ],
  [
    'a short GATEWAY_SECRET_NEXT',
    { GATEWAY_SECRET: 'current-gateway-secret-0123456789', GATEWAY_SECRET_NEXT: 'short' },
    'GATEWAY_SECRET_NEXT must be at least 16 characters',
  ],
  [
    'an empty GATEWAY_SECRET_NEXT',
    { GATEWAY_SECRET: 'current-gateway-secret-0123456789', GATEWAY_SECRET_NEXT: '' },
    'GATEWAY_SECRET_NEXT must be at least 16 characters',
  ],
])('%s stops start-up with a line naming it', (_case, env, message) => {
  const load = () => loadConfig(env);
  expect(load).toThrow(ConfigError);
  expect(load).toThrow(message);
});

test('GATEWAY_SECRET_NEXT beside GATEWAY_SECRET: both are read', () => {
  expect(
    loadConfig({
      GATEWAY_SECRET: 'current-gateway-secret-0123456789',
      GATEWAY_SECRET_NEXT: 'next-gateway-secret-9876543210abc',
    }),
  ).toMatchObject({
    gatewaySecret: 'current-gateway-secret-0123456789',
    gatewaySecretNext: 'next-gateway-secret-9876543210abc',
  });
});
