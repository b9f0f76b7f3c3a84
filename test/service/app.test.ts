/**
 * The chain createApp (service/app.ts) builds, as a client meets it through app.callback(): what
 * answers before the gateway's secret is checked, what needs a database turn, and that Koa itself
 * prints nothing (a driver's message quotes SQL and bound values; the error middleware logs name
 * and code only).
 */
import mysql from 'mysql2/promise';
import { createApp } from '../../service/app';
import { MESSAGES } from '../../service/errors';
import { createLogger } from '../../service/logger';
import { reader } from '../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { call, expectJsonError, serve, type Served } from '../helpers/http';

const SECRET = 'app-test-gateway-secret-0123456789';
const fromGateway = { ...reader, 'X-Gateway-Secret': SECRET };

let database: TestDatabase;
let served: Served;
beforeAll(async () => {
  database = await freshDatabase('app');
  // One connection's worth of turns and no queue: a second request while one runs is refused at once.
  const app = createApp({
    db: database.db,
    config: { gatewaySecret: SECRET, dbPoolSize: 1, dbQueueLimit: 0 },
    logger: createLogger('silent'),
  });
  served = await serve(app.callback());
});
afterAll(async () => {
  await served.close();
  await database.close();
});

test('the probes and the reference page answer without the gateway secret; the API does not', async () => {
  expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${served.url}/readyz`)).status).toBe(200);
  const docs = await fetch(`${served.url}/docs`);
  expect(docs.status).toBe(200);
  expect(docs.headers.get('content-type')).toMatch(/^text\/html/);

  for (const path of ['/api/v1/jobs', '/api/v1/openapi.json']) {
    expectJsonError(await call(`${served.url}${path}`, { headers: reader }), 401, MESSAGES.notThroughGateway);
  }
  expect((await call(`${served.url}/api/v1/jobs`, { headers: fromGateway })).status).toBe(200);
});

test('while the one database turn is held, a listing is a 503 at once and readiness says so; the OpenAPI document still answers', async () => {
  // Another session holds the jobs table, so the first listing waits inside its turn.
  const locker = await mysql.createConnection(database.url);
  await locker.query('LOCK TABLES jobs WRITE');
  let held: Promise<Response> | undefined;
  try {
    held = fetch(`${served.url}/api/v1/jobs`, { headers: fromGateway });
    // Readiness turns 503 once the held listing has its turn (it takes none itself).
    expect(await readyzOnce((status) => status === 503)).toBe(503);
    const refused = await call(`${served.url}/api/v1/jobs`, { headers: fromGateway });
    expectJsonError(refused, 503, MESSAGES.unavailable);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await call(`${served.url}/api/v1/openapi.json`, { headers: fromGateway })).status).toBe(200);
  } finally {
    await locker.query('UNLOCK TABLES');
    await locker.end();
  }
  expect((await held).status).toBe(200);
  expect((await fetch(`${served.url}/readyz`)).status).toBe(200);
});

test('an error Koa reports itself (after a response has started) prints nothing: no SQL or values on stderr', () => {
  const app = createApp({ db: database.db, config: {}, logger: createLogger('silent') });
  app.callback(); // installs Koa's default 'error' listener, as listening does
  // Koa prints with console.error (jest's own console here, so that is where to read it).
  const printed: string[] = [];
  const print = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    printed.push(args.map(String).join(' '));
  });
  try {
    app.emit(
      'error',
      Object.assign(new Error("Duplicate entry 'acme-rate-120' for key 'jobs.internal'"), { status: 500 }),
    );
  } finally {
    print.mockRestore();
  }
  expect(printed).toEqual([]);
});

/** /readyz's status, asked until `done` holds of it (or a second has passed). */
async function readyzOnce(done: (status: number) => boolean): Promise<number> {
  for (let tries = 0; ; tries++) {
    const { status } = await fetch(`${served.url}/readyz`);
    if (done(status) || tries === 50) return status;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
