/**
 * The raw baseline: the scenarios answered as a team without our stack would write it: node:http,
 * a mysql2 pool and its own SQL, the same JSON and ETag (bench/check.ts compares). Nothing of ours.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import mysql from 'mysql2/promise';

type Row = Record<string, unknown>;

const COLUMNS = `j.id, j.posting_id, j.title, j.department, j.location, j.workplace, j.state, j.type, j.description,
  j.requirements, j.responsibilities,
  case when j.salary_disclosed then json_object('min', j.salary_min, 'max', j.salary_max, 'currency', j.salary_currency) end as salary,
  j.status, j.submission_due_date, case when j.client_name_disclosed then j.client_name end as client_name,
  case when j.vendor_name_disclosed then j.vendor_name end as vendor_name, j.posted_by_name, j.created_at, j.updated_at`;
const NEWEST_FIRST = 'order by created_at desc, id desc';
// Totals of a filter job_counts does not keep are counted up to this many (the pagination guide's bound).
const COUNTED_UP_TO = 1000;

const iso = (value: unknown) => (value === null ? null : `${(value as string).replace(' ', 'T')}Z`);
const uuid = (id: Buffer) => id.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');

function job(row: Row) {
  const salary = (typeof row.salary === 'string' ? JSON.parse(row.salary) : row.salary) as Row | null;
  return {
    id: uuid(row.id as Buffer),
    postingId: row.posting_id,
    title: row.title,
    department: row.department,
    location: row.location,
    workplace: row.workplace ?? undefined,
    state: row.state,
    type: row.type,
    description: row.description,
    requirements: JSON.parse(row.requirements as string) as unknown,
    responsibilities: JSON.parse(row.responsibilities as string) as unknown,
    salary: salary && { min: salary.min, max: salary.max, currency: salary.currency },
    status: row.status,
    submissionDueDate: iso(row.submission_due_date),
    clientName: row.client_name,
    vendorName: row.vendor_name,
    postedByName: row.posted_by_name,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

const list = (value: string | null) =>
  value === null ? undefined : [...new Set(value.split(',').map((v) => v.trim()))];

export function createBaseline(pool: mysql.Pool): http.Server {
  const rows = async (sql: string, params: unknown[]) => (await pool.query<mysql.RowDataPacket[]>(sql, params))[0];
  async function listJobs(query: URLSearchParams) {
    const [limit, page] = [Number(query.get('limit') ?? 20), Number(query.get('page') ?? 1)];
    const statuses = list(query.get('status')) ?? ['active', 'open'];
    const types = list(query.get('type'));
    const states = list(query.get('state')?.toUpperCase() ?? null);
    const department = query.get('department')?.trim().toLowerCase();
    const listed = statuses.length === 2 && statuses.includes('active') && statuses.includes('open');
    // Status picks the index (one ordered range per value); the other filters are checked on its rows.
    const filters: Array<[string, unknown]> = [];
    if (types) filters.push(['type in (?)', types]);
    if (department !== undefined) filters.push(['department_key = ?', department]);
    if (states) filters.push(['state in (?)', states]);
    const and = filters.map(([condition]) => ` and ${condition}`).join('');
    const values = filters.map(([, value]) => value);
    const [lead, leads] = listed ? ['listed', [true]] : ['visible_status', statuses];
    const reach = page * limit;
    const range = `(select id, created_at from jobs where ${lead} = ?${and} ${NEWEST_FIRST} limit ${reach})`;
    const pageSql = `select ${COLUMNS} from (select id, created_at from (${leads.map(() => range).join(' union all ')}) u
      ${NEWEST_FIRST} limit ? offset ?) p join jobs j on j.id = p.id order by j.created_at desc, j.id desc`;
    const pageValues = [...leads.flatMap((value) => [value, ...values]), limit, reach - limit];
    // Totals from job_counts (the schema's triggers keep it); a filter it does not keep is counted up to the bound.
    const counted = `select coalesce(sum(n), 0) as n from job_counts where by_department = ? and department_key = ? and status in (?)`;
    const [countSql, countValues] = states
      ? [
          `select count(*) as n from (select 1 from jobs where ${lead} in (?)${and} limit ${COUNTED_UP_TO + 1}) m`,
          [leads, ...values],
        ]
      : [
          `${counted}${types ? ' and type in (?)' : ''}`,
          [department !== undefined, department ?? '', statuses, ...(types ? [types] : [])],
        ];
    const [found, [count]] = await Promise.all([rows(pageSql, pageValues), rows(countSql, countValues)]);
    const total = Math.min(Number(count!.n), states ? COUNTED_UP_TO : Infinity);
    return { data: found.map(job), meta: { total, page, limit, totalPages: Math.ceil(total / limit) } };
  }
  async function findJob(id: Buffer, consumer: string | undefined) {
    const [row] = await rows(
      `select ${COLUMNS} from jobs j where j.id = ? and j.deleted_at is null and (j.status <> 'draft' or j.created_by_consumer = ?)`,
      [id, consumer ?? null],
    );
    return row && job(row);
  }
  async function createJob(body: Row & { salary?: Row | null }, consumer: string) {
    // A version 7 UUID: the creation time in its first 48 bits, then random bits.
    const id = randomBytes(16);
    const now = Date.now();
    id.writeUIntBE(now, 0, 6);
    id[6] = (id[6]! & 0x0f) | 0x70;
    id[8] = (id[8]! & 0x3f) | 0x80;
    const salary = body.salary ?? null;
    const row: Row = {
      id,
      posting_id: body.postingId ?? null,
      title: body.title,
      department: body.department,
      location: body.location ?? '',
      workplace: body.workplace ?? null,
      state: body.state ?? null,
      type: body.type,
      description: body.description,
      requirements: JSON.stringify(body.requirements ?? []),
      responsibilities: JSON.stringify(body.responsibilities ?? []),
      salary_disclosed: salary !== null,
      salary_min: salary?.min ?? null,
      salary_max: salary?.max ?? null,
      salary_currency: salary?.currency ?? null,
      status: body.status ?? 'draft',
      submission_due_date: body.submissionDueDate ? new Date(body.submissionDueDate as string) : null,
      created_at: new Date(now),
      created_by_consumer: consumer,
    };
    await pool.query('insert into jobs set ?', [row]);
    return findJob(id, consumer);
  }
  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    const text = JSON.stringify(body);
    const tag = status === 200 ? { ETag: `"${createHash('sha256').update(text).digest('base64url')}"` } : undefined;
    if (tag && res.req.headers['if-none-match'] === tag.ETag) return void res.writeHead(304, tag).end();
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      ...(tag && { ...tag, 'Cache-Control': 'private, no-cache' }),
      ...headers,
    });
    res.end(text);
  }
  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://baseline');
    const consumer = req.headers['x-consumer-id'] as string | undefined;
    if (url.pathname === '/healthz') return send(res, 200, { status: 'ok' });
    if (url.pathname === '/api/v1/jobs' && req.method === 'GET')
      return send(res, 200, await listJobs(url.searchParams));
    if (url.pathname === '/api/v1/jobs' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const created = await createJob(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Row, consumer ?? '');
      return send(res, 201, { data: created }, { Location: `/api/v1/jobs/${created!.id}` });
    }
    const byId = /^\/api\/v1\/jobs\/([0-9a-fA-F-]{36})$/.exec(url.pathname);
    if (byId && req.method === 'GET') {
      const found = await findJob(Buffer.from(byId[1]!.replace(/-/g, ''), 'hex'), consumer);
      return found ? send(res, 200, { data: found }) : send(res, 404, { error: 'Job not found' });
    }
    send(res, 404, { error: 'Not found' });
  }
  return http.createServer((req, res) => {
    handle(req, res).catch((error: Error) => send(res, 500, { error: error.message }));
  });
}

if (require.main === module) {
  const pool = mysql.createPool({
    uri: process.env.BASELINE_DATABASE_URL,
    connectionLimit: Number(process.env.DB_POOL_SIZE ?? 10),
    // DATETIME as the stored text: no time zone in play, and the ISO string is one replace away.
    dateStrings: true,
    timezone: 'Z',
  });
  const server = createBaseline(pool);
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT ?? 3100), '127.0.0.1');
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void pool.end().then(() => process.exit(0));
  });
}
