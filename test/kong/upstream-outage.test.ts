/**
 * A database outage on production's topology: real Kong 3.9 with kong.yaml's upstream as written
 * (its active and passive checks, retries), two built service instances on a MariaDB of this
 * test's own, steady reads and keyed creates (each create repeated with its Idempotency-Key until
 * it gets an answer that is not 5xx). MariaDB is stopped for 3 minutes; a minute in, one instance
 * is `kill -9`ed. Partners must never get Kong's ring-balancer error: every failure is the
 * service's JSON 503 with Retry-After (but a create in flight at the kill, which nginx never
 * resends), Kong ejects the killed instance only, its probe of the live one (kong.yaml's path)
 * is answered 200 without the database, no create is stored twice, and 200s and 201s come back
 * after the outage. Kong's /metrics, scraped every 15 s as prometheus.yml does, show
 * PartnerErrorsHigh firing during the outage and quiet within 2 minutes of its end
 * (prometheus/recorded/database-outage.test.yml).
 */
import { randomBytes } from 'node:crypto';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { freePort, startRealKong, type RealKong } from '../../harness/real-kong';
import { buildDist } from '../helpers/built';
import { startPrivateMariaDb, type PrivateMariaDb } from '../helpers/mariadb-private';
import { checkRecordedCases, scrape } from '../helpers/alert-recording';
import { startServiceProcess, type ServiceProcess } from '../helpers/processes';
import { DEMO } from '../local-gateway/support';
import { limitsOutOfTheWay } from '../helpers/rate-limits';
import { targetHealth, until } from './upstream-support';

const SECRET = 'upstream-outage-secret-0001';
const SCRAPE_MS = 15_000;
const OUTAGE_MS = 180_000;
const KILL_AFTER_MS = 60_000;
/** Long enough after the outage for PartnerErrorsHigh's 1-minute windows to clear, and within the 2 minutes it must. */
const AFTER_MS = 90_000;

let mariadb: PrivateMariaDb;
let ports: number[];
const instances: ServiceProcess[] = [];
let kong: RealKong;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function start(i: number): Promise<void> {
  const service = startServiceProcess(
    { DATABASE_URL: mariadb.url('jobs_outage'), PORT: String(ports[i]), GATEWAY_SECRET: SECRET, LOG_LEVEL: 'warn' },
    'dist/service/server.js',
  );
  const outcome = await service.listening;
  if (!('url' in outcome)) throw new Error(`instance ${i + 1} did not start: ${outcome.stderr}`);
  instances[i] = service;
}

const health = () => targetHealth(kong.statusUrl, ports);

beforeAll(async () => {
  await buildDist();
  mariadb = await startPrivateMariaDb();
  ports = [await freePort(), await freePort()];
  // One at a time: the first migrates, the second finds the schema done.
  await start(0);
  await start(1);
  kong = await startRealKong({
    serviceUrl: 'http://127.0.0.1:9',
    upstreamTargets: ports.map((port) => `127.0.0.1:${port}`),
    gatewaySecret: SECRET,
    edit: limitsOutOfTheWay,
  });
  await until('both targets healthy', async () => (await health()).every((state) => state === 'healthy'), 15_000);
}, 120_000);
afterAll(async () => {
  await kong?.stop();
  for (const instance of instances) await instance?.stop();
  await mariadb?.remove();
});

interface Answer {
  method: 'GET' | 'POST';
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: string;
  sentAt: number;
  answeredAt: number;
}

interface Create {
  title: string;
  key: string;
  answers: Answer[];
  id?: string;
}

test("a 3-minute database outage with one instance killed in it: partners get the service's 503 with Retry-After, never Kong's ring-balancer error; no create is stored twice", async () => {
  const started = Date.now();
  const answers: Answer[] = [];
  const creates: Create[] = [];
  let running = true;

  const call = async (method: 'GET' | 'POST', init: RequestInit & { path: string }): Promise<Answer> => {
    const sentAt = Date.now();
    const res = await fetch(`${kong.proxyUrl}${init.path}`, { ...init, method });
    const answer = {
      method,
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      contentType: res.headers.get('content-type'),
      body: await res.text(),
      sentAt,
      answeredAt: Date.now(),
    };
    answers.push(answer);
    return answer;
  };
  const reader = async () => {
    while (running) {
      const answer = await call('GET', { path: '/api/v1/jobs?limit=5', headers: { 'X-API-Key': DEMO.reader } });
      await sleep(answer.status === 200 ? 20 : 200);
    }
  };
  // A partner's create: repeated with the same key, a little sooner than Retry-After asks, until it is answered.
  const retried = async (c: Create) => {
    for (;;) {
      const answer = await call('POST', {
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json', 'Idempotency-Key': c.key },
        body: JSON.stringify({ title: c.title, department: 'Operations', type: 'full-time', description: 'Outage.' }),
      });
      c.answers.push(answer);
      if (answer.status === 200 || answer.status === 201) {
        c.id = (JSON.parse(answer.body) as { data: { id: string } }).data.id;
        return;
      }
      if (answer.status < 500 && answer.status !== 409) return;
      await sleep(500);
    }
  };
  const writer = async (name: string) => {
    for (let n = 0; running; n++) {
      const c: Create = { title: `outage ${name} ${n}`, key: randomBytes(8).toString('hex'), answers: [] };
      creates.push(c);
      await retried(c);
      await sleep(50);
    }
  };

  // Kong's /metrics every 15 s from the start, as Prometheus scrapes it.
  const scrapes: Array<string | null> = [];
  const scraper = (async () => {
    for (let next = started; running; next += SCRAPE_MS) {
      await sleep(Math.max(0, next - Date.now()));
      if (running) scrapes.push(await scrape(`${kong.statusUrl}/metrics`));
    }
  })();
  const load = [reader(), reader(), writer('a'), writer('b')];

  await sleep(20_000);
  const outageStart = Date.now();
  await mariadb.stop();
  await sleep(KILL_AFTER_MS);
  const killedAt = Date.now();
  instances[1]!.child.kill('SIGKILL');
  const ejectedMs = await until('the killed target unhealthy', async () => (await health())[1] === 'unhealthy', 10_000);
  const duringOutage = await health();
  // Kong's active probe as kong.yaml writes it, sent to the live instance: it must not depend on the database.
  const { http_path: probePath, timeout: probeTimeout } = (
    kong.config!.upstreams as Array<{ healthchecks: { active: { http_path: string; timeout: number } } }>
  )[0]!.healthchecks.active;
  const probes: Array<{ status: number; ms: number }> = [];
  for (let i = 0; i < 10; i++) {
    const sent = Date.now();
    const res = await fetch(`http://127.0.0.1:${ports[0]}${probePath}`);
    await res.arrayBuffer();
    probes.push({ status: res.status, ms: Date.now() - sent });
  }
  await sleep(outageStart + OUTAGE_MS - Date.now());
  await mariadb.start();
  const outageEnd = Date.now();
  const servingMs = await until(
    'a read answered 200 again',
    () => Promise.resolve(answers.some((a) => a.sentAt > outageEnd && a.status === 200)),
    30_000,
  );
  await sleep(outageEnd + AFTER_MS - Date.now());
  running = false;
  await Promise.all([...load, scraper]);
  const ended = Date.now();

  // Kong kept the live instance through the outage and took out the killed one.
  expect(ejectedMs).toBeLessThan(5000);
  expect(duringOutage).toEqual(['healthy', 'unhealthy']);
  // Its probe is answered 200 without the database, in a fifth of Kong's timeout: room on a busy host.
  expect(probes.map((p) => p.status)).toEqual(Array(10).fill(200));
  expect(Math.max(...probes.map((p) => p.ms))).toBeLessThan((probeTimeout * 1000) / 5);

  // Never Kong's own answer for a lost upstream: every failure is the service's JSON 503 with Retry-After ...
  const failures = answers.filter((a) => a.status >= 400);
  expect(failures.filter((a) => /ring-balancer|healthy upstream|peer/i.test(a.body))).toEqual([]);
  // ... but a create the killed instance held, or sent on its broken keep-alive connection before Kong took it
  // out: sent once, so nginx does not send it again (Kong's 502), and repeated with its key it gets its job.
  const cutByKill = (a: Answer) =>
    a.method === 'POST' && a.answeredAt >= killedAt && a.sentAt <= killedAt + ejectedMs + 2000;
  const cut = failures.filter((a) => a.status === 502 && cutByKill(a));
  expect(cut.length).toBeLessThanOrEqual(6);
  const refused = failures.filter((a) => !cut.includes(a));
  expect(
    new Set(
      refused.map(
        (a) =>
          `${a.status} ${a.retryAfter} ${a.contentType}${a.status === 503 ? '' : ` ${a.method} sent ${a.sentAt - killedAt} ms after the kill`}`,
      ),
    ),
  ).toEqual(new Set(['503 5 application/json; charset=utf-8']));
  for (const failure of refused)
    expect(JSON.parse(failure.body)).toEqual({ error: expect.stringMatching(/Retry in a few seconds/) });
  // Failures only while the database was away (and a request under way as it went or came back).
  expect(refused.filter((a) => a.answeredAt < outageStart || a.sentAt > outageEnd + 5000)).toEqual([]);
  expect(refused.length).toBeGreaterThan(100);

  // Normal service again after it: reads 200, every create answered with its job.
  const after = answers.filter((a) => a.sentAt > outageEnd + 5000);
  expect(after.length).toBeGreaterThan(50);
  expect(new Set(after.map((a) => a.status))).toEqual(new Set([200, 201]));
  expect(creates.filter((c) => !c.id)).toEqual([]);
  expect(creates.filter((c) => c.answers.length > 1).length).toBeGreaterThan(0);

  // Stored once each: one row per title, the one whose id the partner got.
  const connection = await mysql.createConnection(mariadb.url('jobs_outage'));
  const [rows] = await connection.query<Array<{ id: string; title: string } & RowDataPacket>>(
    "SELECT LOWER(CONCAT_WS('-', HEX(SUBSTR(id, 1, 4)), HEX(SUBSTR(id, 5, 2)), HEX(SUBSTR(id, 7, 2)), HEX(SUBSTR(id, 9, 2)), HEX(SUBSTR(id, 11)))) AS id, title FROM jobs WHERE title LIKE 'outage %'",
  );
  await connection.end();
  expect(rows.length).toBe(creates.length);
  const byTitle = new Map(rows.map((row) => [row.title, row.id]));
  expect(creates.filter((c) => byTitle.get(c.title) !== c.id)).toEqual([]);

  // PartnerErrorsHigh on Kong's series as scraped: quiet before, firing at the outage's last scrape, quiet after.
  const second = (at: number) => Math.floor((at - started) / 1000);
  const lastIn = Math.floor((outageEnd - started) / SCRAPE_MS);
  const check = checkRecordedCases('database-outage', [
    {
      alert: 'PartnerErrorsHigh',
      name: `database away from ${second(outageStart)}s to ${second(outageEnd)}s, instance 2 killed at ${second(killedAt)}s, scraped every 15 s`,
      intervalSeconds: SCRAPE_MS / 1000,
      recordings: [{ job: 'kong', instance: 'kong-1:8100', scrapes }],
      checks: [
        { at: Math.floor((outageStart - started) / SCRAPE_MS), expected: [] },
        { at: lastIn, expected: [{}] },
        { at: scrapes.length - 1, expected: [] },
      ],
    },
  ]);
  expect(check).toMatch(/SUCCESS$/);
  expect((scrapes.length - 1) * SCRAPE_MS - (outageEnd - started)).toBeLessThanOrEqual(120_000);

  console.log(
    `outage: ${Math.round((ended - started) / 1000)} s in all, database away ${Math.round((outageEnd - outageStart) / 1000)} s; ` +
      `${answers.length} answers (${answers.filter((a) => a.method === 'GET').length} reads), ${creates.length} creates ` +
      `(${creates.filter((c) => c.answers.length > 1).length} repeated with their key), ${refused.length} 503s with Retry-After, ` +
      `${cut.length} creates cut by the kill (502), killed target out after ${ejectedMs} ms, reads 200 again ${servingMs} ms after the database`,
  );
}, 480_000);
