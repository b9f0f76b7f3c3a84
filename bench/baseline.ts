/**
 * The raw baseline: what the benchmark's scenarios cost without the framework. node:http and a
 * mysql2 pool of the service's size, running the service's SQL and writing the service's JSON
 * byte for byte with the contract's ETag (checked before every timed run), with nothing else: no validation, no logging,
 * no middleware, no drizzle. It serves only what the scenarios ask.
 *
 * The SQL: listings take their statements' text from the service's own builders
 * (db/jobs/listing.ts, statementReads: drizzle's toSQL() of the same selects, built once per shape;
 * per request only drizzle's fillPlaceholders puts the values in), so the
 * comparison stays like for like as that SQL improves; a job by id and a create are written out in
 * bench/baseline-sql.ts, and bench/check.ts tells when they drift from the service's.
 *
 *   node dist/bench/baseline.js   (BASELINE_DATABASE_URL, PORT, DB_POOL_SIZE)
 */
import { hash } from 'node:crypto';
import http from 'node:http';
import mysql from 'mysql2/promise';
import { connectionOptions } from '../db/client';
import { formatUuid, uuidToBuffer, uuidv7 } from '../domain/uuid';
import { readListing, statementReads } from '../db/jobs/listing';
import { canonicalFilter, LIST_FILTERS, type Filters, type ListFilter } from '../domain/list-filters';
import { decodeCursor, encodeCursor, filterDigest } from '../service/http/tokens';
import * as SQL from './baseline-sql';

type Row = unknown[];

// As drizzle asks mysql2 (drizzle-orm/mysql2/session.js): rows as arrays, dates as strings.
const typeCast: mysql.TypeCast = (field, next) =>
  field.type === 'TIMESTAMP' || field.type === 'DATETIME' || field.type === 'DATE' ? field.string() : next();

const iso = (value: unknown) => (value === null ? null : `${(value as string).replace(' ', 'T')}Z`);
/** A Date as the driver string drizzle sends for DATETIME(3) (UTC). */
const driverDate = (date: Date) => date.toISOString().replace('T', ' ').replace('Z', '');

/** One selected row as the spec's Job, fields in the spec's order (db/jobs/job-columns.ts). */
function job(row: Row) {
  // JSON_OBJECT comes back as text or, when the server marks it as JSON, already parsed by mysql2.
  const salary = (typeof row[11] === 'string' ? JSON.parse(row[11]) : row[11]) as {
    min: number | null;
    max: number | null;
    currency: string;
  } | null;
  return {
    id: formatUuid(row[0] as Buffer),
    postingId: row[1],
    title: row[2],
    department: row[3],
    location: row[4],
    workplace: row[5] ?? undefined,
    state: row[6],
    type: row[7],
    description: row[8],
    requirements: JSON.parse(row[9] as string),
    responsibilities: JSON.parse(row[10] as string),
    salary: salary && { min: salary.min, max: salary.max, currency: salary.currency },
    status: row[12],
    submissionDueDate: iso(row[13]),
    clientName: row[14],
    vendorName: row[15],
    postedByName: row[16],
    createdAt: iso(row[17]),
    updatedAt: iso(row[18]),
  };
}

const list = (value: string) => [...new Set(value.split(',').map((item) => item.trim()))];

export function createBaseline(pool: mysql.Pool, signingKey: Buffer) {
  let recorded: Set<string> | undefined;

  async function run(statement: SQL.Statement): Promise<Row[]> {
    recorded?.add(statement.sql);
    const [rows] = await pool.query({ sql: statement.sql, rowsAsArray: true, typeCast }, statement.params);
    return rows as Row[];
  }

  // The service's listing statements (drizzle's text of them), run here on the raw pool.
  const reads = statementReads(run, job);

  const inListingOrder = (a: ReturnType<typeof job>, b: ReturnType<typeof job>) =>
    a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt! < b.createdAt! ? 1 : -1;

  async function listJobs(params: URLSearchParams) {
    // Each declared filter as the query parser reads it (lists split and trimmed, codes in upper case, text trimmed).
    const parsed: Record<string, string | string[]> = {};
    const filter = parsed as ListFilter;
    for (const [name, declared] of Object.entries(LIST_FILTERS as Filters)) {
      const raw = params.get(name);
      if (raw === null) continue;
      parsed[name] = declared.kind === 'text' ? raw.trim() : list(declared.kind === 'codes' ? raw.toUpperCase() : raw);
    }
    const limit = Number(params.get('limit') ?? 20);
    const cursor = params.get('cursor');
    if (cursor === null) {
      const page = Number(params.get('page') ?? 1);
      const { rows, total } = await readListing(reads, filter, limit, { page }, inListingOrder);
      return { data: rows, meta: { total, page, limit, totalPages: Math.ceil(total / limit) } };
    }
    const digest = filterDigest(canonicalFilter(filter));
    const position = cursor === '' ? null : decodeCursor(signingKey, digest, cursor);
    const page = position?.page ?? 1;
    const after = position && { createdAt: position.createdAt, id: position.id };
    const { rows: jobs, total, hasMore } = await readListing(reads, filter, limit, { after }, inListingOrder);
    const last = hasMore ? jobs.at(-1) : undefined;
    const nextCursor = last
      ? encodeCursor(signingKey, digest, { createdAt: new Date(last.createdAt!), id: last.id, page: page + 1 })
      : null;
    return { data: jobs, meta: { total, page, limit, totalPages: Math.ceil(total / limit), nextCursor } };
  }

  async function findJob(id: string, consumerId: string | undefined) {
    const [row] = await run(SQL.findJob(uuidToBuffer(id), consumerId));
    return row && job(row);
  }

  async function createJob(body: Record<string, any>, consumerId: string) {
    const id = uuidv7();
    const salary = body.salary ?? null;
    await run(
      SQL.insertJob({
        id: uuidToBuffer(id),
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
        submission_due_date: null,
        created_at: driverDate(new Date(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16))),
        created_by_consumer: consumerId,
      }),
    );
    return findJob(id, consumerId);
  }

  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  }

  /** A 200 to a GET as the contract has it (issue 9): an ETag of the exact body, 304 when it matches. */
  function sendConditional(req: http.IncomingMessage, res: http.ServerResponse, body: unknown) {
    const text = JSON.stringify(body);
    const tag = `"${hash('sha256', text, 'base64url')}"`;
    const cache = { ETag: tag, 'Cache-Control': 'private, no-cache' };
    if (req.headers['if-none-match']?.includes(tag)) {
      res.writeHead(304, cache);
      res.end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      ...cache,
    });
    res.end(text);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://baseline');
    const consumerId = req.headers['x-consumer-id'] as string | undefined;
    if (url.pathname === '/healthz') return send(res, 200, { status: 'ok' });
    if (url.pathname === '/api/v1/jobs' && req.method === 'GET')
      return sendConditional(req, res, await listJobs(url.searchParams));
    if (url.pathname === '/api/v1/jobs' && req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const created = await createJob(JSON.parse(Buffer.concat(chunks).toString('utf8')), consumerId!);
      return send(res, 201, { data: created }, { Location: `/api/v1/jobs/${created!.id}` });
    }
    const byId = /^\/api\/v1\/jobs\/([0-9a-fA-F-]{36})$/.exec(url.pathname);
    if (byId && req.method === 'GET') {
      const found = await findJob(byId[1]!.toLowerCase(), consumerId);
      return found ? sendConditional(req, res, { data: found }) : send(res, 404, { error: 'Job not found' });
    }
    // For bench/run.ts's check that these statements are the service's: the SQL run since the last DELETE.
    if (url.pathname === '/__bench/sql') {
      if (req.method === 'DELETE') recorded = new Set();
      return send(res, 200, [...(recorded ?? [])]);
    }
    return send(res, 404, { error: 'Not found' });
  }

  return http.createServer((req, res) => {
    handle(req, res).catch((error: Error) => send(res, 500, { error: error.message }));
  });
}

async function main(): Promise<void> {
  const url = process.env.BASELINE_DATABASE_URL;
  if (!url) throw new Error('BASELINE_DATABASE_URL is required');
  const pool = mysql.createPool(connectionOptions(url, { connectionLimit: Number(process.env.DB_POOL_SIZE ?? 10) }));
  const [[key]] = await pool.query<mysql.RowDataPacket[]>(
    "select `secret` from `service_secrets` where `name` = 'token-signing'",
  );
  const server = createBaseline(pool, (key?.secret as Buffer | undefined) ?? Buffer.alloc(32));
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT ?? 3100), '127.0.0.1', () =>
    console.log(`baseline listening on ${process.env.PORT}`),
  );
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void pool.end().then(() => process.exit(0));
  });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
