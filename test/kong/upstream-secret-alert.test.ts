/**
 * Kong and the service disagree on the gateway secret (one side rotated alone): partners with good
 * keys get the service's 401 through Kong. alerts.yml's PartnersGetGatewaySecret401s counts them
 * where partners see them, on Kong's kong_jobs_http_requests_total (source="service"), and not
 * Kong's own 401s for a missing key (prometheus/recorded/gateway-secret-mismatch.test.yml).
 */
import { startRealKong, type RealKong } from '../../harness/real-kong';
import { runService, type RunningService } from '../../service/server';
import { checkRecordedAlert, scrape } from '../helpers/alert-recording';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { DEMO } from '../local-gateway/support';

let database: TestDatabase;
let service: RunningService;
let kong: RealKong;

beforeAll(async () => {
  database = await freshDatabase('secret_partners');
  service = await runService({
    databaseUrl: database.url,
    port: 0,
    logLevel: 'silent',
    gatewaySecret: 'upstream-secret-alert-service-01',
  });
  kong = await startRealKong({
    serviceUrl: 'http://127.0.0.1:9',
    upstreamTargets: [new URL(service.url).host],
    gatewaySecret: 'upstream-secret-alert-rotated-02',
  });
}, 90_000);
afterAll(async () => {
  await kong?.stop();
  await service?.stop();
  await database?.close();
});

test("partners' good keys get the service's 401 through Kong, and PartnersGetGatewaySecret401s fires on Kong's series; Kong's own 401s do not count", async () => {
  const read = (key?: string) =>
    fetch(`${kong.proxyUrl}/api/v1/jobs?limit=1`, { headers: key ? { 'X-API-Key': key } : {} });
  // Before: a partner's own mistake, no key at all, is Kong's 401 and no reason to wake anyone.
  expect((await read()).status).toBe(401);
  const scrapes = [await scrape(`${kong.statusUrl}/metrics`)];
  expect(scrapes[0]).toMatch(/^kong_jobs_http_requests_total\{[^}]*code="401",source="kong"\} 1$/m);
  for (let round = 0; round < 3; round++) {
    const res = await read(DEMO.reader);
    expect({ status: res.status, body: await res.text() }).toEqual({
      status: 401,
      body: expect.stringContaining('error'),
    });
    scrapes.push(await scrape(`${kong.statusUrl}/metrics`));
  }
  expect(scrapes.at(-1)).toMatch(/^kong_jobs_http_requests_total\{[^}]*code="401",source="service"\} 3$/m);
  expect(
    checkRecordedAlert(
      'PartnersGetGatewaySecret401s',
      [{ job: 'kong', instance: 'kong-1:8100', scrapes }],
      [{ instance: 'kong-1:8100' }],
      'gateway-secret-mismatch',
    ),
  ).toMatch(/SUCCESS$/);
});
