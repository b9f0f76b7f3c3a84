import { createDatabase, type DatabaseHandle } from '../../db/client';
import { insertInBatches } from '../../db/seed';
import { demoJobs } from '../../db/seed-data';
import { createApp } from '../../service/app';
import { createLogger } from '../../service/logger';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { serve, type Served } from '../helpers/http';
import { testServerAddress } from '../helpers/server';
import { memoryLog } from '../helpers/service';
import { startRealKong } from '../../harness/real-kong';
import { gatewayKinds } from '../e2e/support';
import { configFile, DEMO, gatewayEnv, startGateway, type ConfigFile } from '../local-gateway/support';
import { startRelay, type Relay } from './relay';
import { sleep } from './support';

const SECRET = 'link-cut-gateway-secret-0123456789';
const CLIENTS = 20;
const CUTS = 3;
const CUT_MS = 1500;
// "Recovered": every request sent this long after the link returns is a 200.
const RECOVERY_MS = 1000;

interface Outcome {
  sentAt: number;
  doneAt: number;
  status: number;
  retryAfter: string | null;
  body: string;
}

describe.each(gatewayKinds())('the database link cut under keep-alive load through the %s', (kind) => {
  let database: TestDatabase;
  let relay: Relay;
  let handle: DatabaseHandle;
  let served: Served;
  let config: ConfigFile;
  let gateway: { url: string; close(): Promise<void> };
  const logs: string[] = [];

  beforeAll(async () => {
    database = await freshDatabase(kind === 'real Kong' ? 'faults_cut_kong' : 'faults_cut');
    await insertInBatches(database.db, demoJobs());
    relay = await startRelay(testServerAddress());
    handle = createDatabase(relay.via(database.url), {
      connectionLimit: 10,
      connectTimeoutMs: 1000,
      queryTimeoutMs: 5000,
    });
    const app = createApp({
      db: handle.db,
      config: { gatewaySecret: SECRET, dbPoolSize: 10, dbQueryTimeoutMs: 5000 },
      logger: createLogger('info', memoryLog(logs)),
    });
    served = await serve(app.callback());
    // The load is far over a partner's quota: the limit is not what this test is about.
    config = configFile(served.port, (state) => {
      for (const route of state.services[0].routes)
        route.plugins = route.plugins.filter((p: { name: string }) => !p.name.includes('rate-limit'));
    });
    if (kind === 'real Kong') {
      const kong = await startRealKong({ stateFiles: config.paths, serviceUrl: served.url, gatewaySecret: SECRET });
      gateway = { url: kong.proxyUrl, close: () => kong.stop() };
    } else gateway = await startGateway(config.paths, gatewayEnv(SECRET));
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
    await served?.close();
    await handle?.close();
    await relay?.close();
    await database?.close();
    config?.remove();
  });

  test(`${CUTS} cuts: no 500, every failure a 503 with Retry-After, every request ${RECOVERY_MS} ms after the link returns a 200`, async () => {
    const outcomes: Outcome[] = [];
    let running = true;
    // fetch keeps its connections to the gateway alive, as a partner's HTTP client does.
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (running) {
        const sentAt = Date.now();
        const response = await fetch(`${gateway.url}/api/v1/jobs?limit=5`, { headers: { 'X-API-Key': DEMO.reader } });
        const body = await response.text();
        outcomes.push({
          sentAt,
          doneAt: Date.now(),
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
          body,
        });
      }
    });
    const cuts: Array<{ from: number; back: number; next: number }> = [];
    try {
      await sleep(500);
      for (let i = 0; i < CUTS; i++) {
        const from = Date.now();
        relay.set('reset');
        await sleep(CUT_MS);
        relay.set('forward');
        const back = Date.now();
        // Long enough that requests sent after RECOVERY_MS also finish before the next cut, even on a busy machine.
        await sleep(RECOVERY_MS + 3000);
        cuts.push({ from, back, next: Date.now() });
      }
    } finally {
      running = false;
      await Promise.all(clients);
    }

    const failures = outcomes.filter((o) => o.status !== 200);
    expect(failures.filter((o) => o.status === 500)).toEqual([]);
    for (const failure of failures) {
      expect(failure).toEqual({
        sentAt: failure.sentAt,
        doneAt: failure.doneAt,
        status: 503,
        retryAfter: '5',
        body: JSON.stringify({ error: 'Service temporarily unavailable. Retry in a few seconds.' }),
      });
    }
    for (const { from, back, next } of cuts) {
      // Each cut was felt (the test would prove nothing otherwise) ...
      expect(failures.some((o) => o.doneAt >= from && o.sentAt < back)).toBe(true);
      // ... and over a second after the link came back, everything is answered again.
      const after = outcomes.filter((o) => o.sentAt >= back + RECOVERY_MS && o.doneAt < next);
      expect(after.length).toBeGreaterThan(0);
      expect(after.filter((o) => o.status !== 200)).toEqual([]);
    }
    // The service logged the failures as the database being away, not as unexplained errors.
    expect(logs.filter((line) => line.includes('"status":500'))).toEqual([]);
  }, 60_000);
});
