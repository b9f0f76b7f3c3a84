/**
 * The raw baseline (bench/baseline.ts) answers every scenario byte for byte as the built service
 * does, on a table the bench migrated with the service's own command and seeded in SQL: the check
 * npm run bench makes before timing, here on a small table so a drift fails a test, not a run.
 */
import mysql from 'mysql2/promise';
import { checkScenario } from '../../bench/check';
import { scenariosFor, type Scenario } from '../../bench/scenarios';
import { startBaseline, startService, type Server } from '../../bench/servers';
import { prepareTable, type PreparedTable } from '../../bench/tables';
import { buildDist } from '../helpers/built';
import { runDatabasePrefix } from '../helpers/database';
import { serve } from '../helpers/http';
import { testServerUrl } from '../helpers/server';

const SECRET = 'bench-baseline-test-secret-0123456789';
let table: PreparedTable;
let admin: mysql.Connection;
let scenarios: Scenario[];
const servers: Server[] = [];

beforeAll(async () => {
  await buildDist();
  table = await prepareTable(testServerUrl(), 600, { name: `${runDatabasePrefix()}bench`, reseed: true });
  admin = await mysql.createConnection({ uri: table.url });
  scenarios = await scenariosFor(admin, ['A', 'B', 'C', 'D', 'E', 'G', 'H']);
  servers.push(await startService(table.url, { poolSize: 2, gatewaySecret: SECRET }));
  servers.push(await startBaseline(table.url, { poolSize: 2, gatewaySecret: SECRET }));
}, 240_000);
afterAll(async () => {
  for (const server of servers) await server.stop();
  await admin?.query(`drop database if exists \`${new URL(table.url).pathname.slice(1)}\``);
  await admin?.end();
});

test('the table holds the size asked for, every listing filter the scenarios use matching some jobs', async () => {
  const [[counts]] = await admin.query<mysql.RowDataPacket[]>(
    "select count(*) as n, sum(listed) as listed, sum(visible_status = 'paused') as paused, count(distinct department) as departments from jobs",
  );
  expect(counts).toMatchObject({ n: 600, departments: 8 });
  expect(Number(counts!.listed)).toBeGreaterThan(300);
  expect(Number(counts!.paused)).toBeGreaterThan(50);
});

test('the baseline answers each scenario as the service does: same status, bytes and ETag (a create: new id and time aside)', async () => {
  const [service, baseline] = servers as [Server, Server];
  const checks: Record<string, string> = {};
  for (const scenario of scenarios) {
    const check = await checkScenario(scenario, service, baseline, SECRET);
    checks[scenario.key] = 'body' in check ? check.body : check.unavailable;
  }
  expect(checks).toEqual({
    A: 'identical',
    B: 'identical',
    C: 'identical',
    D: 'identical',
    E: 'identical (new id and createdAt aside)',
    G: 'identical',
    H: 'identical',
  });
  const [[made]] = await admin.query<mysql.RowDataPacket[]>(
    "select count(*) as n from jobs where created_by_consumer = 'bench-writer'",
  );
  expect(made!.n).toBe(2);
}, 60_000);

test('a difference is found and said where it is: a reference that drops one field', async () => {
  const [service] = servers as [Server];
  const d = scenarios.find((s) => s.key === 'D')!;
  const other = await serve((req, res) => {
    void fetch(`${service.url}${req.url}`, { headers: req.headers as Record<string, string> })
      .then((answer) => answer.json() as Promise<{ data: Record<string, unknown> }>)
      .then(({ data }) => {
        delete data.postedByName;
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.end(JSON.stringify({ data }));
      });
  });
  try {
    const check = await checkScenario(d, service, { ...service, name: 'baseline', url: other.url }, SECRET);
    expect(check).toMatchObject({ body: expect.stringMatching(/^differs from the baseline: at byte \d+ /) as string });
  } finally {
    await other.close();
  }
});
