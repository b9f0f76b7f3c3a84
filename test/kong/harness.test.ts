/**
 * harness/real-kong.ts: a real Kong 3.9 started as the image starts it, DB-less on the rendered
 * state files, in front of the real service.
 */
import { findKong, renderState, startRealKong, type RealKong } from '../../harness/real-kong';
import { startTestService, type TestService } from '../helpers/service';
import { DEMO } from '../local-gateway/support';
import type { Parsed } from '../helpers/parsed';

const SECRET = 'harness-gateway-secret-0123456789';
let service: TestService;
let kong: RealKong;

beforeAll(async () => {
  service = await startTestService({ name: 'kong_harness', gatewaySecret: SECRET, seed: true });
  kong = await startRealKong({ serviceUrl: service.url, gatewaySecret: SECRET });
}, 120_000);
afterAll(async () => {
  await kong?.stop();
  await service?.close();
});

test('findKong names the Kong it runs', () => {
  const found = findKong();
  expect(found).toMatchObject({ found: true, version: expect.stringMatching(/^3\.9\./) });
  if (found.found) expect(found.description).toMatch(/^Kong 3\.9\.\d+ from /);
});

test('the state files are rendered as decK hands them over: no _info, select tags on every entity', () => {
  const config = renderState({ serviceUrl: 'http://127.0.0.1:1234' });
  expect(config._info).toBeUndefined();
  expect(config.services[0].url).toBe('http://127.0.0.1:1234');
  expect(config.services[0].tags).toEqual(['jobs-api', 'jobs-demo']);
  expect(config.consumers.find((c: Parsed) => c.username === 'demo-reader').keyauth_credentials[0].tags).toEqual([
    'jobs-api',
    'jobs-demo',
  ]);
});

test('a demo key reads jobs through Kong; the service sees the identity and the secret, never the key', async () => {
  const res = await fetch(`${kong.proxyUrl}/api/v1/jobs?limit=2`, { headers: { 'X-API-Key': DEMO.reader } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as Parsed).data).toHaveLength(2);
  const seen = service.received.at(-1)!;
  expect(seen.headers['x-consumer-username']).toBe('demo-reader');
  expect(seen.headers['x-gateway-secret']).toBe(SECRET);
  expect(seen.headers['x-api-key']).toBeUndefined();
  expect(seen.headers.via).toMatch(/kong\/3\.9/);
});

test('its access log (through the redaction filter) has the request without the key', async () => {
  await fetch(`${kong.proxyUrl}/api/v1/jobs?api_key=${DEMO.reader}`);
  for (let i = 0; i < 50 && kong.logs().stdout.split('\n').filter(Boolean).length < 2; i++)
    await new Promise((r) => setTimeout(r, 50));
  const lines = kong
    .logs()
    .stdout.trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines.map((l) => [l.method, l.path, l.status])).toEqual([
    ['GET', '/api/v1/jobs', 200],
    ['GET', '/api/v1/jobs', 200],
  ]);
  expect(JSON.stringify(kong.logs())).not.toContain(DEMO.reader);
});
