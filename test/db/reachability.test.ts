/**
 * db/reachability.ts as the dispatcher uses it: its logger and its registry, a link to MariaDB cut
 * and restored by a TCP relay (test/faults/relay.ts), failures reported as its ticks report them.
 */
import { Registry } from 'prom-client';
import mysql from 'mysql2/promise';
import { connectionOptions } from '../../db/client';
import { DATABASE_UP_GAUGES, watchDatabase, type Reachability } from '../../db/reachability';
import { createLogger } from '../../service/logger';
import { startRelay, type Relay } from '../faults/relay';
import { sleep } from '../faults/support';
import { testServerAddress, testServerUrl } from '../helpers/server';
import { memoryLog } from '../helpers/service';

let relay: Relay;
let reachability: Reachability | undefined;
beforeAll(async () => {
  relay = await startRelay(testServerAddress());
});
afterAll(async () => {
  reachability?.stop();
  await relay.close();
});

/** What a query through the link fails with now: the driver's real error. */
async function failureThroughLink(url: string): Promise<unknown> {
  try {
    const connection = await mysql.createConnection(connectionOptions(url));
    await connection.end();
  } catch (error) {
    return error;
  }
  throw new Error('the link answered');
}

const gauge = async (registry: Registry) =>
  (await registry.getSingleMetric(DATABASE_UP_GAUGES.dispatcher)!.get()).values[0]?.value;

test("the dispatcher's twin: one error line, the gauge 0 and isUp() false while cut, one line and 1 once the link returns", async () => {
  const lines: string[] = [];
  const logger = createLogger('debug', memoryLog(lines)).child({ component: 'webhook-dispatcher' });
  const registry = new Registry();
  const url = relay.via(`${testServerUrl()}`);
  reachability = watchDatabase({
    url,
    logger,
    registry,
    gauge: DATABASE_UP_GAUGES.dispatcher,
    failures: 'dispatcher ticks failed',
    retryMs: 200,
  });
  expect(await gauge(registry)).toBe(1);

  // Not a database failure: not the tracker's.
  expect(
    reachability.failed(Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY', sqlState: '23000' })),
  ).toBe(false);

  relay.set('reset');
  for (let tick = 0; tick < 5; tick++) {
    expect(reachability.failed(await failureThroughLink(url))).toBe(true);
    await sleep(100);
  }
  expect(reachability.isUp()).toBe(false);
  expect(await gauge(registry)).toBe(0);

  relay.set('forward');
  for (let tries = 0; !reachability.isUp() && tries < 50; tries++) await sleep(100);
  expect(reachability.isUp()).toBe(true);
  expect(await gauge(registry)).toBe(1);
  logger.flush();
  await sleep(50);

  const parsed = lines.map((line) => JSON.parse(line) as { level: number; msg: string; [key: string]: unknown });
  expect(parsed.filter((line) => line.level >= 50)).toEqual([
    expect.objectContaining({
      component: 'webhook-dispatcher',
      host: '127.0.0.1',
      port: relay.port,
      msg: expect.stringMatching(new RegExp(`^database unreachable at 127\\.0\\.0\\.1:${relay.port}: `)),
    }),
  ]);
  expect(parsed.filter((line) => /reachable again/.test(line.msg))).toEqual([
    expect.objectContaining({
      level: 40,
      failed: 5,
      msg: expect.stringMatching(/after [\d.]+ s; 5 dispatcher ticks failed meanwhile$/),
    }),
  ]);
});

test('one connection lost while the database answers is a warning, not an outage', async () => {
  const lines: string[] = [];
  const logger = createLogger('info', memoryLog(lines));
  const tracker = watchDatabase({ url: testServerUrl(), logger, gauge: DATABASE_UP_GAUGES.service });
  expect(
    tracker.failed(
      Object.assign(new Error('Connection lost: The server closed the connection.'), {
        code: 'PROTOCOL_CONNECTION_LOST',
        fatal: true,
      }),
    ),
  ).toBe(true);
  for (let tries = 0; lines.length === 0 && tries < 50; tries++) {
    logger.flush();
    await sleep(100);
  }
  tracker.stop();
  expect(tracker.isUp()).toBe(true);
  expect(lines.map((line) => JSON.parse(line))).toEqual([
    expect.objectContaining({ level: 40, msg: expect.stringMatching(/a database connection failed, but .* answers/) }),
  ]);
});
