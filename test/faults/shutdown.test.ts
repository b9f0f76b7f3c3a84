import { json, reader, writer } from '../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { startServiceProcess, type ServiceProcess } from '../helpers/processes';
import { testServerAddress } from '../helpers/server';
import { startRelay, type Relay } from './relay';
import { job, lockTable, sleep } from './support';

/** The exit code, or 'still running' when the process has not exited within `ms`. */
async function exitWithin(service: ServiceProcess, ms: number): Promise<number | null | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)));
  const outcome = await Promise.race([service.exited, late]);
  clearTimeout(timer);
  return outcome;
}

async function listening(service: ServiceProcess): Promise<string> {
  const outcome = await service.listening;
  if (!('url' in outcome)) throw new Error(`the service exited at start-up: ${outcome.stderr}`);
  return outcome.url;
}

describe('SIGTERM', () => {
  let database: TestDatabase;
  let relay: Relay | undefined;
  let service: ServiceProcess | undefined;

  beforeEach(async () => {
    database = await freshDatabase('faults_sigterm');
  });
  afterEach(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    await service?.exited;
    await relay?.close();
    await database.close();
    service = undefined;
    relay = undefined;
  });

  test('under a stream of creates: exits 0, and every create a client saw as 201 is stored', async () => {
    service = startServiceProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', SHUTDOWN_GRACE_MS: '5000' });
    const url = await listening(service);

    const confirmed: string[] = [];
    let sent = 0;
    let givenUp = false;
    // 8 clients on keep-alive connections, each creating jobs back to back until the service is gone.
    const client = async () => {
      while (!givenUp) {
        const title = `Shutdown ${sent++}`;
        try {
          const response = await fetch(`${url}/api/v1/jobs`, {
            method: 'POST',
            headers: { ...writer, ...json },
            body: job(title),
          });
          await response.arrayBuffer();
          if (response.status === 201) confirmed.push(title);
        } catch {
          return; // refused or cut: the service is going away
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    const loadDeadline = Date.now() + 15000;
    while (confirmed.length < 40 && Date.now() < loadDeadline) await sleep(20);
    if (confirmed.length < 40) {
      givenUp = true;
      await Promise.all(clients);
      throw new Error(`only ${confirmed.length} of ${sent} creates succeeded before SIGTERM`);
    }

    service.child.kill('SIGTERM');
    // In-flight requests finish and the keep-alive connections close: no need for the grace period.
    expect(await exitWithin(service, 5000 + 3000)).toBe(0);
    await Promise.all(clients);
    expect(service.stdout()).not.toContain('grace period over');

    const stored = await database.query<Array<{ title: string }>>(
      "SELECT title FROM jobs WHERE title LIKE 'Shutdown %'",
    );
    const storedTitles = new Set(stored.map((row) => row.title));
    expect(confirmed.filter((title) => !storedTitles.has(title))).toEqual([]);
    // Stored rows are whole rows, never part of a create.
    expect(
      await database.query(
        "SELECT COUNT(*) AS n FROM jobs WHERE title LIKE 'Shutdown %' AND (department <> 'Faults' OR description IS NULL)",
      ),
    ).toEqual([{ n: 0 }]);
  });

  test('a second SIGTERM while draining (an orchestrator and an init both sending one) does not cut the request still running', async () => {
    service = startServiceProcess({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '5000',
      DB_QUERY_TIMEOUT_MS: '10000',
    });
    const url = await listening(service);
    const lock = await lockTable(database.name, 'jobs');
    let running: Promise<number | string> | undefined;
    try {
      running = fetch(`${url}/api/v1/jobs`, { headers: reader }).then(
        (response) => response.status,
        () => 'cut',
      );
      await lock.waiters(1);
      service.child.kill('SIGTERM');
      await sleep(100);
      service.child.kill('SIGTERM');
      // Longer than the pool's own close deadline (1 s, db/client.ts): a second stop would have closed it by now.
      await sleep(1500);
    } finally {
      await lock.release();
    }
    expect(await running).toBe(200);
    expect(await exitWithin(service, 5000 + 3000)).toBe(0);
  });

  test('while the database link is hung: the grace period ends it, sockets and pool included, and it exits 0', async () => {
    const graceMs = 1000;
    relay = await startRelay(testServerAddress());
    service = startServiceProcess({
      DATABASE_URL: relay.via(database.url),
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: String(graceMs),
      // Long limits, so only the shutdown deadline can end the hung requests within this test.
      DB_QUERY_TIMEOUT_MS: '20000',
      DB_CONNECT_TIMEOUT_MS: '20000',
    });
    const url = await listening(service);
    expect((await fetch(`${url}/api/v1/jobs`, { headers: reader })).status).toBe(200);

    relay.set('blackhole');
    const hung = Array.from({ length: 3 }, () =>
      fetch(`${url}/api/v1/jobs`, { headers: reader }).then(
        (response) => response.status,
        () => 'cut',
      ),
    );
    await sleep(300);

    const signalled = Date.now();
    service.child.kill('SIGTERM');
    expect(await exitWithin(service, graceMs + 6000)).toBe(0);
    // Within the grace period plus the pool's 1 s close deadline, with room for a slow machine.
    expect(Date.now() - signalled).toBeLessThan(graceMs + 4000);
    // The hung requests were cut, not answered as if they had succeeded.
    expect(await Promise.all(hung)).toEqual(['cut', 'cut', 'cut']);
    // And the operator is told why: one warning naming the grace period.
    const warnings = service
      .stdout()
      .split('\n')
      .filter((line) => line.includes('grace period over'))
      .map((line) => JSON.parse(line));
    expect(warnings).toEqual([
      expect.objectContaining({ level: 40, graceMs, msg: 'grace period over: closed the requests still running' }),
    ]);
  });
});
