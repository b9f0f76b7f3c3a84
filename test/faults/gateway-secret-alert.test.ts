/**
 * A gateway whose secret is not the service's (GATEWAY_SECRET rotated on one side only): every
 * request it forwards is a 401, and alerts.yml's GatewaySecretRejected fires on the service's
 * jobs_gateway_secret_rejections_total as scraped meanwhile, labelled by reason; not before.
 */
import { runService, type RunningService } from '../../service/server';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { checkRecordedAlert, scrape } from '../helpers/alert-recording';

const SECRET = 'gateway-secret-alert-service-01';
let database: TestDatabase;
let service: RunningService;

beforeAll(async () => {
  database = await freshDatabase('secret_alert');
  service = await runService({
    databaseUrl: database.url,
    port: 0,
    metricsPort: 0,
    logLevel: 'silent',
    gatewaySecret: SECRET,
  });
});
afterAll(async () => {
  await service?.stop();
  await database?.close();
});

test('requests with a wrong and a missing secret are 401s, and GatewaySecretRejected fires on the series scraped meanwhile', async () => {
  const read = (secret?: string) =>
    fetch(`${service.url}/api/v1/jobs?limit=1`, {
      headers: { 'X-Consumer-ID': 'secret-alert', ...(secret ? { 'X-Gateway-Secret': secret } : {}) },
    });
  expect((await read(SECRET)).status).toBe(200);
  const scrapes = [await scrape(service.metricsUrl!)];
  for (let round = 0; round < 3; round++) {
    const statuses = [(await read('gateway-secret-alert-rotated-02')).status, (await read()).status];
    expect(statuses).toEqual([401, 401]);
    scrapes.push(await scrape(service.metricsUrl!));
  }
  expect(scrapes.at(-1)).toMatch(/^jobs_gateway_secret_rejections_total\{reason="mismatch"\} 3$/m);
  const recordings = [{ job: 'jobs-service', instance: 'jobs-service-1:9464', scrapes }];
  expect(
    checkRecordedAlert('GatewaySecretRejected', recordings, [
      { instance: 'jobs-service-1:9464', reason: 'mismatch' },
      { instance: 'jobs-service-1:9464', reason: 'missing' },
    ]),
  ).toMatch(/SUCCESS$/);
});
