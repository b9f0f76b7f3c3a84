/**
 * jobs_bench_<size>: created and migrated by the service's own migrate command, seeded here in SQL
 * (one job a minute back from now, the demo set's mix), kept between runs while it holds the size.
 */
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { migrate } from './servers';

// Rows per INSERT ... SELECT, so no single statement holds a huge transaction.
const CHUNK_ROWS = 100_000;

export interface PreparedTable {
  url: string;
  rows: number;
  /** Seconds spent seeding; 0 when the table was reused. */
  seededSeconds: number;
}

const pick = (key: string, values: string[], n = 'n') =>
  `elt(1 + conv(left(md5(concat('${key}', ${n})), 8), 16, 10) % ${values.length}, ${values.map((v) => `'${v}'`).join(', ')})`;
const CITIES = 'Austin Denver Chicago Boston Seattle Atlanta Raleigh Phoenix Columbus Sacramento'.split(' ');
const STATES = 'TX CO IL MA WA GA NC AZ OH CA'.split(' ');

/** Rows n = from..to-1 of a table of `size`: row n created n minutes before @newest, its id a v7 UUID of that time. */
const SEED = (size: number) => `insert into jobs (id, posting_id, title, department, location, workplace, state, type,
  description, requirements, responsibilities, salary_disclosed, salary_min, salary_max, salary_currency, status,
  submission_due_date, client_name, client_name_disclosed, vendor_name, vendor_name_disclosed, posted_by_name,
  created_at, updated_at, pay_rate, bill_rate, internal_notes, created_by_consumer, deleted_at)
select unhex(concat(lpad(hex(floor(unix_timestamp(at) * 1000)), 12, '0'), '7000', '8', lpad(hex(n), 15, '0'))),
  if(n % 5 = 4, null, concat('JOB-', 10000 + n)), concat(department, ' ', ${pick('t', ['Engineer', 'Analyst', 'Manager', 'Specialist'])}),
  department, if(remote, '', concat(elt(1 + place, '${CITIES.join("', '")}'), ', ', elt(1 + place, '${STATES.join("', '")}'))),
  if(remote, 'remote', if(n >= ${Math.floor(size * 0.8)}, null, ${pick('w', ['on-site', 'hybrid'])})),
  if(remote, null, elt(1 + place, '${STATES.join("', '")}')), type,
  concat(department, ' role. You will join a team that values ownership, clear communication and steady delivery.'),
  '["3+ years of relevant professional experience","Clear written and spoken English"]',
  '["Own deliverables from planning to release","Report progress and risks to the hiring manager"]',
  n % 3 <> 0, 40000 + crc32(concat('m', n)) % 80 * 1000, 60000 + crc32(concat('m', n)) % 80 * 1000, 'USD', status,
  if(n % 4 = 0, null, at + interval 30 day), ${pick('c', ['Northwind Health', 'Contoso Logistics', 'Fabrikam Bank'])}, n % 2 = 0,
  if(type in ('contract', 'managed-teams'), 'BrightPath Staffing', null), type in ('contract', 'managed-teams') and n % 4 = 1,
  if(n % 6 = 5, null, ${pick('r', ['Dana Whitfield', 'Marcus Lee', 'Priya Raman'])}), at, if(n % 3 = 1, at + interval 1 day, null),
  45, 65, 'Margin approved by finance.', if(status = 'draft', '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a02', null),
  if(n % 23 = 22, at + interval 2 day, null)
from (select seq as n, @newest - interval seq minute as at, seq % 7 = 3 as remote, conv(left(md5(concat('p', seq)), 8), 16, 10) % 10 as place,
    elt(1 + seq % 8, 'active', 'open', 'active', 'paused', 'open', 'closed', 'active', 'draft') as status,
    ${pick('d', ['Engineering', 'Data & Analytics', 'Finance', 'Healthcare', 'Marketing', 'Operations', 'Human Resources', 'Sales'], 'seq')} as department,
    ${pick('y', ['full-time', 'part-time', 'contract', 'contract-to-hire', 'direct-hire', 'managed-teams'], 'seq')} as type
  from seq_0_to_${size - 1} where seq >= ? and seq < ?) s`;

const count = async (connection: mysql.Connection) =>
  Number((await connection.query<mysql.RowDataPacket[]>('select count(*) as n from jobs'))[0][0]!.n);

export interface TableOptions {
  reseed?: boolean;
  /** The database's name, when not jobs_bench_<size>. */
  name?: string;
  log?: (line: string) => void;
  /** --before: jobs_bench_<size>_before, migrated by that checkout's own command, the same jobs as `like`'s. */
  before?: { root: string; like: PreparedTable };
}

/** jobs_bench_<size> on the server of `serverUrl`, migrated and holding exactly `size` jobs. */
export async function prepareTable(serverUrl: string, size: number, o: TableOptions = {}): Promise<PreparedTable> {
  const database = o.name ?? `jobs_bench_${size}${o.before ? '_before' : ''}`;
  const url = `${serverUrl.replace(/\/+$/, '')}/${database}`;
  const log = o.log ?? (() => undefined);
  const newestOf = async (uri: string) => {
    const connection = await mysql.createConnection({ uri, dateStrings: true });
    const [[row]] = await connection.query<mysql.RowDataPacket[]>('select max(created_at) as at from jobs');
    await connection.end();
    return row!.at as string | null;
  };
  // The same newest job, so the same ids: a table seeded like another holds the same jobs.
  const newest = o.before ? await newestOf(o.before.like.url) : undefined;
  await migrate(url, o.before?.root);
  const admin = await mysql.createConnection({ uri: url });
  try {
    if ((await count(admin)) === size && !o.reseed && (!newest || newest === (await newestOf(url)))) {
      log(`${database}: ${size} jobs, reused`);
      return { url, rows: size, seededSeconds: 0 };
    }
    const started = performance.now();
    await admin.query(`drop database \`${database}\``);
    await migrate(url, o.before?.root);
    await admin.query(`use \`${database}\``);
    await admin.query("set time_zone = '+00:00', @newest = cast(coalesce(?, utc_timestamp(3)) as datetime(3))", [
      newest ?? null,
    ]);
    for (let from = 0; from < size; from += CHUNK_ROWS) {
      await admin.query(SEED(size), [from, Math.min(size, from + CHUNK_ROWS)]);
      log(`${database}: ${Math.min(size, from + CHUNK_ROWS)} / ${size} jobs`);
    }
    await admin.query('analyze table jobs');
    const seededSeconds = (performance.now() - started) / 1000;
    log(`${database}: seeded ${size} jobs in ${seededSeconds.toFixed(1)} s`);
    return { url, rows: await count(admin), seededSeconds };
  } finally {
    await admin.end();
  }
}
