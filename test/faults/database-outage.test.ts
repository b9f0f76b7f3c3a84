/**
 * The database stopped under load, for real: a mariadbd of this test's own (the shared one is never
 * stopped), stopped with SIGTERM as an operator would for 20 s and started again on the same port.
 * The service process (service/server.ts) and the webhook dispatcher's must each say so once and
 * count it in their database-up gauge; the dispatcher's compose health check fails meanwhile; and
 * partners keep getting a 503 they can retry.
 */
import { startPrivateMariaDb, type PrivateMariaDb } from '../helpers/mariadb-private';
import { randomBytes } from 'node:crypto';
import { dispatcherHealthCheck } from '../helpers/dispatcher-health';
import { startServiceProcess, type ServiceProcess } from '../helpers/processes';
import { checkRecordedAlert, scrape } from '../helpers/alert-recording';
import { sleep } from './support';

const SECRET = 'database-outage-gateway-secret-01';
const CLIENTS = 5;
const OUTAGE_MS = 20_000;
const HEADERS = {
  'X-Gateway-Secret': SECRET,
  'X-Consumer-ID': 'outage-reader',
  'X-Consumer-Username': 'outage-reader',
};

interface Outcome {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: string;
}

let mariadb: PrivateMariaDb;
let service: ServiceProcess;
let url: string;
let metricsUrl: string;
let dispatcher: ServiceProcess;
let dispatcherMetricsUrl: string;
/** /metrics as Prometheus would have scraped them: before, during the outage, and once the dispatcher stopped. */
const scraped = { service: [] as Array<string | null>, dispatcher: [] as Array<string | null> };

beforeAll(async () => {
  mariadb = await startPrivateMariaDb();
  service = startServiceProcess({
    DATABASE_URL: mariadb.url('jobs_outage'),
    GATEWAY_SECRET: SECRET,
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
  });
  const outcome = await service.listening;
  if (!('url' in outcome)) throw new Error(`the service exited at start-up: ${outcome.stderr}`);
  url = outcome.url;
  const logLine = () =>
    service
      .stdout()
      .split('\n')
      .find((entry) => entry.includes('"jobs service listening"'));
  for (let tries = 0; !logLine() && tries < 50; tries++) await sleep(100);
  metricsUrl = JSON.parse(logLine()!).metrics;
  dispatcher = startServiceProcess(
    {
      DATABASE_URL: mariadb.url('jobs_outage'),
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    },
    'service/webhooks/dispatcher/main.ts',
  );
  const running = () =>
    dispatcher
      .stdout()
      .split('\n')
      .find((entry) => entry.includes('"webhook dispatcher running"'));
  for (let tries = 0; !running() && tries < 100; tries++) await sleep(100);
  if (!running()) throw new Error(`the dispatcher did not start: ${dispatcher.stderr()}`);
  dispatcherMetricsUrl = JSON.parse(running()!).metrics;
}, 60_000);
afterAll(async () => {
  await dispatcher?.stop();
  await service?.stop();
  await mariadb?.remove();
});

async function gauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (!match) throw new Error(`no ${name} in /metrics`);
  return Number(match[1]);
}
const databaseUp = () => gauge(metricsUrl, 'jobs_database_up');
const dispatcherDatabaseUp = () => gauge(dispatcherMetricsUrl, 'webhook_dispatcher_database_up');

const logLines = (process = service) =>
  process
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; [key: string]: unknown });

test('a stopped database is one error line naming it, jobs_database_up 0 then 1, one line on its return, and partners get 503 + Retry-After', async () => {
  expect(await databaseUp()).toBe(1);
  expect(await dispatcherDatabaseUp()).toBe(1);
  expect(await dispatcherHealthCheck(dispatcherMetricsUrl)).toBe(0);
  scraped.service.push(await scrape(metricsUrl));
  scraped.dispatcher.push(await scrape(dispatcherMetricsUrl));
  const during: Outcome[] = [];
  const all: Outcome[] = [];
  let running = true;
  let outage = false;
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (running) {
      const response = await fetch(`${url}/api/v1/jobs?limit=5`, { headers: HEADERS });
      const outcome = {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        contentType: response.headers.get('content-type'),
        body: await response.text(),
      };
      all.push(outcome);
      if (outage) during.push(outcome);
      // Ten requests a second per client at most: load, not a flood on a shared machine.
      await sleep(outcome.status === 200 ? 20 : 100);
    }
  });

  let downReading: number;
  let dispatcherDown: number;
  let healthDuring: number | null;
  let upAgainMs: number;
  try {
    await sleep(500);
    outage = true;
    await mariadb.stop();
    await sleep(OUTAGE_MS / 2);
    downReading = await databaseUp();
    dispatcherDown = await dispatcherDatabaseUp();
    scraped.service.push(await scrape(metricsUrl));
    scraped.dispatcher.push(await scrape(dispatcherMetricsUrl));
    healthDuring = await dispatcherHealthCheck(dispatcherMetricsUrl);
    await sleep(OUTAGE_MS / 2);
    await mariadb.start();
    const restarted = Date.now();
    while (((await databaseUp()) !== 1 || (await dispatcherDatabaseUp()) !== 1) && Date.now() - restarted < 10_000)
      await sleep(200);
    upAgainMs = Date.now() - restarted;
    outage = false;
    await sleep(1000);
  } finally {
    running = false;
    await Promise.all(clients);
  }
  expect(await dispatcherHealthCheck(dispatcherMetricsUrl)).toBe(0);
  await service.stop();
  await dispatcher.stop();
  scraped.dispatcher.push(await scrape(dispatcherMetricsUrl));

  expect(downReading).toBe(0);
  expect(dispatcherDown).toBe(0);
  expect(healthDuring).not.toBe(0);
  expect(upAgainMs).toBeLessThan(3000);
  expect(await fetch(`${url}/healthz`).catch(() => 'stopped')).toBe('stopped');

  // Partners: a retryable JSON 503 whenever the database is away, never a 500.
  const failures = all.filter((o) => o.status !== 200);
  expect(failures.length).toBeGreaterThan(5);
  expect(new Set(failures.map((o) => `${o.status} ${o.retryAfter} ${o.contentType}`))).toEqual(
    new Set(['503 5 application/json; charset=utf-8']),
  );
  for (const failure of failures)
    expect(JSON.parse(failure.body)).toEqual({ error: expect.stringMatching(/Retry in a few seconds/) });
  expect(all.at(-1)!.status).toBe(200);

  const lines = logLines();
  const loud = lines.filter((line) => line.level >= 50);
  expect(loud.length).toBeLessThanOrEqual(2);
  expect(loud).toEqual([
    expect.objectContaining({
      msg: `database unreachable at 127.0.0.1:${mariadb.port}: ECONNREFUSED`,
      host: '127.0.0.1',
      port: mariadb.port,
      cause: expect.objectContaining({
        code: 'ECONNREFUSED',
        message: expect.stringContaining(`127.0.0.1:${mariadb.port}`),
      }),
    }),
  ]);
  const back = lines.filter((line) => /database reachable again/.test(line.msg));
  expect(back).toHaveLength(1);
  expect(back[0]).toMatchObject({ level: 40, host: '127.0.0.1', port: mariadb.port, failed: failures.length });
  expect(back[0]!.downSeconds).toBeGreaterThanOrEqual(OUTAGE_MS / 1000 - 1);
  expect(back[0]!.msg).toBe(
    `database reachable again at 127.0.0.1:${mariadb.port} after ${String(back[0]!.downSeconds)} s; ${failures.length} requests answered 503 meanwhile`,
  );
}, 120_000);

test('the dispatcher said it once too: one error line naming the database, one line on its return', () => {
  const lines = logLines(dispatcher);
  const loud = lines.filter((line) => line.level >= 50);
  expect(loud).toEqual([
    expect.objectContaining({
      msg: `database unreachable at 127.0.0.1:${mariadb.port}: ECONNREFUSED`,
      host: '127.0.0.1',
      port: mariadb.port,
    }),
  ]);
  const back = lines.filter((line) => /database reachable again/.test(line.msg));
  expect(back).toHaveLength(1);
  expect(back[0]!.msg).toMatch(
    new RegExp(
      `^database reachable again at 127\\.0\\.0\\.1:${mariadb.port} after [\\d.]+ s; \\d+ dispatcher ticks failed meanwhile$`,
    ),
  );
});

// Held three scrapes (a minute apart in the rules' time): longer than each alert's `for`.
const held = (scrapes: Array<string | null>, i: number) => [scrapes[0]!, scrapes[i]!, scrapes[i]!, scrapes[i]!];

test("alerts.yml's DatabaseUnreachable fires on both processes' series recorded during the outage, and not before it", () => {
  expect(scraped.service[1]).toMatch(/^jobs_database_up 0$/m);
  const recordings = [
    { job: 'jobs-service', instance: 'jobs-service-1:9464', scrapes: held(scraped.service, 1) },
    { job: 'webhook-dispatcher', instance: 'webhook-dispatcher:9465', scrapes: held(scraped.dispatcher, 1) },
  ];
  expect(
    checkRecordedAlert(
      'DatabaseUnreachable',
      recordings,
      [
        { job: 'jobs-service', instance: 'jobs-service-1:9464' },
        { job: 'webhook-dispatcher', instance: 'webhook-dispatcher:9465' },
      ],
      'database-stopped',
    ),
  ).toMatch(/SUCCESS$/);
});

test("alerts.yml's ScrapeTargetDown fires on the stopped dispatcher's failed scrapes", () => {
  expect(scraped.dispatcher[2]).toBeNull();
  const recordings = [
    { job: 'webhook-dispatcher', instance: 'webhook-dispatcher:9465', scrapes: held(scraped.dispatcher, 2) },
  ];
  expect(
    checkRecordedAlert(
      'ScrapeTargetDown',
      recordings,
      [{ job: 'webhook-dispatcher', instance: 'webhook-dispatcher:9465' }],
      'webhook-dispatcher-stopped',
    ),
  ).toMatch(/SUCCESS$/);
});

test("alerts.yml's WebhookDispatcherAbsent fires once no dispatcher exports, where WebhookDeliveryLagging cannot", () => {
  const recordings = [
    { job: 'webhook-dispatcher', instance: 'webhook-dispatcher:9465', scrapes: held(scraped.dispatcher, 2) },
  ];
  expect(checkRecordedAlert('WebhookDispatcherAbsent', recordings, [{}], 'webhook-dispatcher-absent')).toMatch(
    /SUCCESS$/,
  );
});
