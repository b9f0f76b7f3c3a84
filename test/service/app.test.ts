/**
 * What createApp (service/app.ts) decides beyond its middleware: Koa's own error printing is off.
 * Koa prints every error it is told about to stderr (application.js onerror), message and stack,
 * and a driver's message quotes SQL and bound values; the error middleware logs name and code only.
 */
import { createApp } from '../../service/app';
import { createLogger } from '../../service/logger';
import { freshDatabase, type TestDatabase } from '../helpers/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase('app');
});
afterAll(() => database.close());

test('an error Koa reports itself (after a response has started) prints nothing: no SQL or values on stderr', () => {
  const app = createApp({ db: database.db, config: {}, logger: createLogger('silent') });
  app.callback(); // installs Koa's default 'error' listener, as listening does
  const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    app.emit(
      'error',
      Object.assign(new Error("Duplicate entry 'acme-rate-120' for key 'jobs.internal'"), { status: 500 }),
    );
    expect(printed).not.toHaveBeenCalled();
  } finally {
    printed.mockRestore();
  }
});
