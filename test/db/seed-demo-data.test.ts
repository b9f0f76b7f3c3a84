/**
 * The service loads the demo jobs only when asked (SEED_DEMO_DATA=true, which npm start sets):
 * the production image, which never sets it, starts on an empty database and leaves it empty.
 */
import { ConfigError, loadConfig } from '../../service/config';
import { runService } from '../../service/server';
import { freshDatabase } from '../helpers/database';

/** Starts the service (as server.ts does) on a fresh database and counts every listed job it then serves. */
async function jobsServedOnFreshDatabase(name: string): Promise<number> {
  const database = await freshDatabase(name);
  try {
    const service = await runService({ databaseUrl: database.url, port: 0, logLevel: 'silent' });
    try {
      const res = await fetch(`${service.url}/api/v1/jobs?status=active,open,paused,closed&limit=1`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { meta: { total: number } }).meta.total;
    } finally {
      await service.stop();
    }
  } finally {
    await database.close();
  }
}

describe('SEED_DEMO_DATA', () => {
  const saved = process.env.SEED_DEMO_DATA;
  beforeEach(() => delete process.env.SEED_DEMO_DATA);
  afterAll(() => {
    if (saved === undefined) delete process.env.SEED_DEMO_DATA;
    else process.env.SEED_DEMO_DATA = saved;
  });

  test('is off unless set to true, and refuses anything but true or false', () => {
    expect(loadConfig({}).seedDemoData).toBe(false);
    expect(loadConfig({ SEED_DEMO_DATA: 'false' }).seedDemoData).toBe(false);
    expect(loadConfig({ SEED_DEMO_DATA: 'true' }).seedDemoData).toBe(true);
    expect(() => loadConfig({ SEED_DEMO_DATA: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ SEED_DEMO_DATA: 'yes' })).toThrow('SEED_DEMO_DATA must be true or false');
  });

  test('unset: a fresh database stays empty', async () => {
    expect(await jobsServedOnFreshDatabase('seed_off')).toBe(0);
  });

  test('SEED_DEMO_DATA=true: the demo jobs are loaded into the empty table', async () => {
    process.env.SEED_DEMO_DATA = 'true';
    expect(await jobsServedOnFreshDatabase('seed_on')).toBeGreaterThanOrEqual(40);
  });
});
