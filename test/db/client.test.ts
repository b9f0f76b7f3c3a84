import { createDatabase, type DatabaseHandle } from '../../db/client';
import { migrateDatabase } from '../../db/migrate';
import { openDatabase } from '../../db/client';
import { generateJobs } from '../../db/seed-data';
import { createApp } from '../../service/app';
import { ConfigError, loadConfig } from '../../service/config';
import { createLogger } from '../../service/logger';
import { json, reader, writer, writer2 } from '../helpers/consumers';
import { call, serve, type Served } from '../helpers/http';
import { startMariaDbPair, type MariaDbPair } from '../helpers/mariadb-pair';

const DATABASE = 'jobs';

describe('DATABASE_READ_URLS', () => {
  test('a comma list of mysql:// URLs, spaces allowed around the commas', () => {
    expect(
      loadConfig({ DATABASE_READ_URLS: 'mysql://ro@replica-1:3306/jobs, mysql://ro@replica-2:3306/jobs' })
        .databaseReadUrls,
    ).toEqual(['mysql://ro@replica-1:3306/jobs', 'mysql://ro@replica-2:3306/jobs']);
    expect(loadConfig({}).databaseReadUrls ?? []).toEqual([]);
  });

  test('anything else is named in the configuration error', () => {
    const load = () => loadConfig({ DATABASE_READ_URLS: 'mysql://ro@replica-1:3306/jobs,postgres://replica-2/jobs' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow('DATABASE_READ_URLS must be a comma list of mysql://user:password@host:3306/database URLs');
  });
});

// A real primary and replica (test/helpers/mariadb-pair.ts): the service writes to the first and
// reads listings and jobs from the second.
describe('with a read replica', () => {
  let pair: MariaDbPair;
  let database: DatabaseHandle;
  let onlyReplica: DatabaseHandle;
  let service: Served;

  beforeAll(async () => {
    pair = await startMariaDbPair();
    await migrateDatabase(pair.primary.url(DATABASE));
    await pair.caughtUp();
    database = openDatabase(pair.primary.url(DATABASE), [pair.replica.url(DATABASE)]);
    onlyReplica = createDatabase(pair.replica.url(DATABASE));
    const app = createApp({ db: database.db, config: {}, logger: createLogger('silent') });
    service = await serve(app.callback());
  }, 60_000);

  afterAll(async () => {
    await service?.close();
    await database?.close();
    await onlyReplica?.close();
    await pair?.stop();
  });

  const listedIds = async () => {
    const listed = await call(`${service.url}/api/v1/jobs?limit=100`, { headers: reader });
    expect(listed.status).toBe(200);
    return {
      ids: (listed.body.data as Array<{ id: string }>).map((job) => job.id),
      total: listed.body.meta.total as number,
    };
  };

  const create = async (status: string, headers = writer) => {
    const created = await call(`${service.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { ...headers, ...json },
      body: JSON.stringify({
        title: `Replica ${status}`,
        department: 'Ops',
        type: 'contract',
        description: 'x',
        status,
      }),
    });
    expect(created.status).toBe(201);
    return created.body.data.id as string;
  };

  test('listings and jobs by id are read from the replica', async () => {
    // A row that exists on the replica alone (written there directly): only a read of the
    // replica can return it.
    const [row] = generateJobs({ count: 1, seed: 99, statusFor: () => 'active' });
    // One connection, so the counters its triggers wrote on the replica alone can be found by its id afterwards.
    const connection = await onlyReplica.pool.getConnection();
    const [[{ slot }]] = (await connection.query('SELECT CONNECTION_ID() AS slot')) as unknown as [[{ slot: number }]];
    const id = Buffer.from(row!.id.replace(/-/g, ''), 'hex');
    await connection.query(
      'INSERT INTO jobs SET id = ?, title = ?, department = ?, type = ?, description = ?, requirements = ?, responsibilities = ?, status = ?, created_at = ?',
      [
        id,
        row!.title,
        row!.department,
        row!.type,
        row!.description,
        JSON.stringify(row!.requirements),
        JSON.stringify(row!.responsibilities),
        'active',
        row!.createdAt,
      ],
    );
    try {
      expect((await listedIds()).ids).toContain(row!.id);
      const one = await call(`${service.url}/api/v1/jobs/${row!.id}`, { headers: reader });
      expect(one.status).toBe(200);
      expect(one.body.data.title).toBe(row!.title);
    } finally {
      await connection.query('DELETE FROM jobs WHERE id = ?', [id]);
      // The emptied counter rows of this replica-only connection: a primary connection with the same id would replicate a duplicate of them.
      for (const table of ['job_counts', 'job_day_counts'])
        await connection.query(`DELETE FROM ${table} WHERE slot = ? AND n = 0`, [slot]);
      await connection.query('DELETE FROM job_changes WHERE job_id = ?', [id]);
      connection.release();
    }
  });

  test('while the replica lags, a created job is found by id at once, and listed once the replica catches up', async () => {
    const before = await listedIds();
    await pair.pauseApplying();
    let created: string;
    let draft: string;
    try {
      created = await create('active');
      draft = await create('draft');

      // Read-your-writes: the replica has neither row yet, the primary answers.
      const one = await call(`${service.url}/api/v1/jobs/${created}`, { headers: writer2 });
      expect(one.status).toBe(200);
      expect(one.body.data.id).toBe(created);
      // A draft stays its creator's alone on the way through the primary.
      expect((await call(`${service.url}/api/v1/jobs/${draft}`, { headers: writer })).status).toBe(200);
      expect((await call(`${service.url}/api/v1/jobs/${draft}`, { headers: writer2 })).status).toBe(404);
      // A job that exists nowhere is still a 404.
      expect(
        (await call(`${service.url}/api/v1/jobs/0190f000-0000-7000-8000-000000000000`, { headers: reader })).status,
      ).toBe(404);

      // Listings come from the lagging replica: the new job is not there yet (docs/decisions.md).
      const lagging = await listedIds();
      expect(lagging.ids).not.toContain(created);
      expect(lagging.total).toBe(before.total);
    } finally {
      await pair.resumeApplying();
    }
    await pair.caughtUp();
    const after = await listedIds();
    expect(after.ids).toContain(created);
    expect(after.total).toBe(before.total + 1);
  });
});
