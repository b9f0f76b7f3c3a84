/**
 * Before anything is timed: the baseline must answer exactly what the service answers (same
 * status, same bytes, same ETag on a GET) and send the same SQL, or its figures compare nothing. Mismatches are
 * printed and recorded, never hidden; the run goes on.
 */
import { performance } from 'node:perf_hooks';
import { drizzle } from 'drizzle-orm/mysql2';
import mysql from 'mysql2/promise';
import { connectionOptions } from '../db/client';
import * as schema from '../db/schema';
import { findJob } from '../db/jobs/job-store';
import { signingKey } from '../db/signing-key';
import { LIST_QUERY } from '../service/jobs/contract/queries';
import { queryReader } from '../service/http/validate';
import { listPage } from '../service/jobs/routes/list-jobs';
import { headersFor, samplePath, type Scenario } from './scenarios';
import type { Server } from './servers';

const parseListQuery = queryReader(LIST_QUERY);

export interface ScenarioCheck {
  /** "identical", or what differs. */
  body: string;
  /** "same", "not checked (...)", or what differs. */
  sql: string;
  /** The slower of the two answers, in ms: a scenario slower than SLOW_MS is timed one request at a time. */
  ms: number;
}

interface Answer {
  status: number;
  text: string;
  etag: string | null;
  ms: number;
}

async function ask(server: Server, scenario: Scenario, path: string, gatewaySecret: string): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${server.url}${path}`, {
    method: scenario.method,
    headers: headersFor(scenario, gatewaySecret),
    body: scenario.body,
  });
  const text = await response.text();
  return { status: response.status, text, etag: response.headers.get('etag'), ms: performance.now() - started };
}

/** A create's id and createdAt differ by nature: compared as placeholders. */
function withoutNewIdentity(text: string): string {
  try {
    const { id, createdAt } = (JSON.parse(text) as { data?: { id?: string; createdAt?: string } }).data ?? {};
    return id && createdAt ? text.split(id).join('<id>').split(createdAt).join('<createdAt>') : text;
  } catch {
    return text;
  }
}

function describeDifference(service: Answer, baseline: Answer, other = 'baseline', word = 'MISMATCH'): string {
  if (service.status !== baseline.status)
    return `${word}: service answered ${service.status}, ${other} ${baseline.status}`;
  if (service.text === baseline.text && service.etag !== baseline.etag)
    return `${word}: ETag ${service.etag ?? 'none'} from the service, ${baseline.etag ?? 'none'} from the ${other}`;
  let at = 0;
  while (at < service.text.length && service.text[at] === baseline.text[at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 40), at + 40));
  return `${word} at byte ${at} (service ${service.text.length} bytes, ${other} ${baseline.text.length}): service ${around(service.text)} ${other} ${around(baseline.text)}`;
}

/** The statements the service's own code sends for a scenario, captured at the pool (drizzle's and db/sql.ts's driverRows alike). */
async function serviceStatements(databaseUrl: string, scenario: Scenario): Promise<string[] | undefined> {
  const pool = mysql.createPool(connectionOptions(databaseUrl, { connectionLimit: 2 }));
  const logged: string[] = [];
  const recording = Object.assign(Object.create(pool) as typeof pool, {
    query: (options: string | { sql: string }, values?: unknown) => {
      logged.push(typeof options === 'string' ? options : options.sql);
      return pool.query(options as never, values as never);
    },
  });
  const db = drizzle(recording, { schema, mode: 'default' });
  try {
    const url = new URL(samplePath(scenario), 'http://bench');
    if (scenario.ids) {
      await findJob(db, url.pathname.split('/').pop()!, headersFor(scenario, '')['X-Consumer-ID']);
    } else {
      const key = await signingKey(db);
      logged.length = 0;
      await listPage(db, key, parseListQuery(Object.fromEntries(url.searchParams)));
    }
    // A background fold of job_counts (db/jobs/counters.ts) may have started meanwhile: not the request's SQL.
    return logged.filter((sql) => !/ for update|^(insert|delete|update|begin|commit|rollback|set)\b/i.test(sql)).sort();
  } finally {
    await pool.end();
  }
}

export async function checkScenario(
  scenario: Scenario,
  service: Server,
  baseline: Server,
  context: { databaseUrl: string; gatewaySecret: string },
): Promise<ScenarioCheck> {
  const paths = scenario.ids ? [0, 1, 2].map((i) => samplePath(scenario, i)) : [scenario.path];
  let body = 'identical';
  let ms = 0;
  for (const path of paths) {
    await fetch(`${baseline.url}/__bench/sql`, { method: 'DELETE' });
    const fromService = await ask(service, scenario, path, context.gatewaySecret);
    const fromBaseline = await ask(baseline, scenario, path, context.gatewaySecret);
    ms = Math.max(ms, fromService.ms, fromBaseline.ms);
    const same =
      fromService.status === fromBaseline.status &&
      (scenario.method === 'POST'
        ? withoutNewIdentity(fromService.text) === withoutNewIdentity(fromBaseline.text)
        : fromService.text === fromBaseline.text && fromService.etag === fromBaseline.etag);
    if (!same) {
      body = describeDifference(fromService, fromBaseline);
      break;
    }
  }
  if (scenario.method === 'POST')
    return {
      body: body === 'identical' ? 'identical (new id and createdAt aside)' : body,
      sql: 'not checked (the INSERT is hand-written)',
      ms,
    };

  const fromBaseline = ((await (await fetch(`${baseline.url}/__bench/sql`)).json()) as string[]).sort();
  let sql: string;
  try {
    const fromService = await serviceStatements(context.databaseUrl, scenario);
    sql =
      JSON.stringify(fromService) === JSON.stringify(fromBaseline)
        ? 'same'
        : `DIFFERS: service ${JSON.stringify(fromService)} baseline ${JSON.stringify(fromBaseline)} (update bench/baseline-sql.ts)`;
  } catch (error) {
    sql = `not checked (${(error as Error).message})`;
  }
  return { body, sql, ms };
}

/**
 * --before: the before checkout's service asked what this one is asked. Another commit may answer
 * differently (its own signing key, fields it lacks), so a difference is recorded, not a fault;
 * a refusal (an older commit without the scenario's filter) makes its row not applicable.
 */
export async function checkBefore(
  scenario: Scenario,
  service: Server,
  before: Server,
  gatewaySecret: string,
): Promise<ScenarioCheck | { unavailable: string }> {
  const path = samplePath(scenario);
  const fromService = await ask(service, scenario, path, gatewaySecret);
  const fromBefore = await ask(before, scenario, path, gatewaySecret);
  const ms = Math.max(fromService.ms, fromBefore.ms);
  if (fromBefore.status >= 300 && fromService.status < 300)
    return {
      unavailable: `not applicable: the before service answers ${fromBefore.status} ${fromBefore.text.slice(0, 160)}`,
    };
  const same =
    fromService.status === fromBefore.status &&
    (scenario.method === 'POST'
      ? withoutNewIdentity(fromService.text) === withoutNewIdentity(fromBefore.text)
      : fromService.text === fromBefore.text && fromService.etag === fromBefore.etag);
  const body = same
    ? 'identical'
    : describeDifference(fromService, fromBefore, 'before', 'differs from the before service');
  return { body, sql: "not checked (the before checkout's own code)", ms };
}
