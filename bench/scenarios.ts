/**
 * What the benchmark asks, per table size. Paths and ids are found on the table itself (a
 * department+type pair that exists, random existing ids, a cursor as deep as page 2500), so
 * every scenario reads real rows at any size.
 */
import mysql from 'mysql2/promise';
import type { z } from 'zod';
import { formatUuid } from '../domain/uuid';
import { JOB_EXAMPLE } from '../domain/job';
import type { CreateJobBody } from '../service/jobs/contract/create-body';

export const ALL_SCENARIOS = [
  'A',
  'B',
  'C',
  "C'",
  'D',
  'E',
  'G',
  'H',
  'F-A',
  'F-D',
  'O',
  'S',
  'K',
  'N',
  'N-A',
  'W',
] as const;
export type ScenarioKey = (typeof ALL_SCENARIOS)[number];
/** The scenarios that exercise the data layer: with --before, each also compares this service with another checkout's. */
export const BEFORE_SCENARIOS: readonly ScenarioKey[] = ['D', 'E', 'A', 'B', 'G', 'H'];

/**
 * What a scenario's rows compare, each row one subject against the reference, measured in the
 * same round: direct scenarios the service against the raw baseline; F the local gateway and a
 * bare proxy against the service direct; O the service at its default settings against the same
 * service with an unbounded queue; K real Kong three ways against the service direct; N a service
 * with the Dockerfile's node flags against one with node's defaults, both serving N alone (peak RSS is N's);
 * with --before, the data-layer scenarios also the service against another checkout's service (before).
 */
export type Target =
  | 'before'
  | 'service'
  | 'baseline'
  | 'gateway'
  | 'proxy'
  | 'service-unbounded'
  | 'service-flags'
  | 'service-node-defaults'
  | 'kong-bare'
  | 'kong-key-auth'
  | 'kong-ours';

export interface Comparison {
  subjects: Target[];
  reference: Target;
  /** What a request is counted as: any answer, or only a 2xx (goodput, for overload). */
  counts: 'answers' | 'good';
}

export interface Scenario {
  key: ScenarioKey;
  title: string;
  method: 'GET' | 'POST';
  /** Path and query; for get by id the prefix, an id from `ids` is appended per request. */
  path: string;
  ids?: string[];
  body?: string;
  /** Who calls: a reader or a writer. */
  as: 'reader' | 'writer';
  via: 'direct' | 'gateway';
  comparison: Comparison;
  /** Connections for this scenario, when not the run's --connections (overload). */
  connections?: number;
  /** Why it cannot run at this size or on this API, printed as "n/a". */
  unavailable?: string;
  /** Each target measured alone, on the Dockerfile's node flags exactly: its peak RSS is the deployed process's. */
  deployed?: true;
}

/** The n-th webhook subscriber of scenario W, a reader of its own (the API allows 5 subscriptions a consumer). */
export function subscriberHeaders(n: number, gatewaySecret: string): Record<string, string> {
  const name = `bench-hooks-${n + 1}`;
  return {
    'X-Gateway-Secret': gatewaySecret,
    'X-Consumer-ID': name,
    'X-Consumer-Username': name,
    'X-Consumer-Custom-ID': name,
    'X-Consumer-Groups': 'jobs:read',
  };
}

/** demo.yaml's consumers, as the gateway would identify them to the service. */
export const DEMO_READER = { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01', username: 'demo-reader', groups: 'jobs:read' };
const BENCH_WRITER = { id: 'bench-writer', username: 'bench-writer', groups: 'jobs:read, jobs:write' };
export const BENCH_WRITER_ID = BENCH_WRITER.id;
export const DEMO_READER_KEY = 'demo-reader-2f6c1a9e';

/**
 * The headers a request to a target carries: identity headers where nothing in front adds them
 * (the servers themselves, Kong with no plugin), an API key through a gateway, and for Kong's
 * key-auth + acl the gateway secret too (nothing standard in Kong adds it).
 */
export function headersForTarget(
  scenario: Pick<Scenario, 'as' | 'method'>,
  target: Target,
  gatewaySecret: string,
): Record<string, string> {
  const direct =
    target === 'service' ||
    target === 'baseline' ||
    target === 'before' ||
    target === 'service-unbounded' ||
    target === 'service-flags' ||
    target === 'service-node-defaults' ||
    target === 'kong-bare';
  const headers = headersFor({ ...scenario, via: direct ? 'direct' : 'gateway' }, gatewaySecret);
  return target === 'kong-key-auth' ? { ...headers, 'X-Gateway-Secret': gatewaySecret } : headers;
}

export function headersFor(
  scenario: Pick<Scenario, 'as' | 'via' | 'method'>,
  gatewaySecret: string,
): Record<string, string> {
  const json: Record<string, string> = scenario.method === 'POST' ? { 'Content-Type': 'application/json' } : {};
  if (scenario.via === 'gateway') return { 'X-API-Key': DEMO_READER_KEY, ...json };
  const who = scenario.as === 'writer' ? BENCH_WRITER : DEMO_READER;
  return {
    'X-Gateway-Secret': gatewaySecret,
    'X-Consumer-ID': who.id,
    'X-Consumer-Username': who.username,
    'X-Consumer-Custom-ID': who.username,
    'X-Consumer-Groups': who.groups,
    ...json,
  };
}

// The contract's documented job as a create body, under a title of its own; no postingId, since
// each create is a new posting.
const { department, location, workplace, type, description, requirements, responsibilities, salary, status } =
  JOB_EXAMPLE;
export const CREATE_BODY = JSON.stringify({
  title: 'Benchmark Platform Engineer',
  department,
  location,
  workplace,
  type,
  description,
  requirements,
  responsibilities,
  salary,
  status,
} satisfies z.input<typeof CreateJobBody>);

const PAGE = 2500;
const LIMIT = 20;
const DEPTH = (PAGE - 1) * LIMIT;

/**
 * A cursor that resumes exactly where page 2500 starts, walked on the service (not timed):
 * 100 rows a page, then 20; or why there is none (an API without cursors, a shallower table).
 */
async function cursorAtDepth(
  serviceUrl: string,
  headers: Record<string, string>,
): Promise<{ cursor: string } | { unavailable: string }> {
  const first = await fetch(`${serviceUrl}/api/v1/jobs?limit=100&cursor=`, { headers });
  const body = (await first.json()) as { meta?: { nextCursor?: string | null } };
  if (first.status !== 200 || !body.meta || !('nextCursor' in body.meta))
    return { unavailable: 'the API has no cursor (meta.nextCursor)' };
  let cursor = body.meta.nextCursor ?? null;
  let depth = 100;
  while (cursor !== null && depth < DEPTH) {
    const limit = DEPTH - depth >= 100 ? 100 : LIMIT;
    const response = await fetch(`${serviceUrl}/api/v1/jobs?limit=${limit}&cursor=${encodeURIComponent(cursor)}`, {
      headers,
    });
    const page = (await response.json()) as { meta: { nextCursor: string | null } };
    if (response.status !== 200) return { unavailable: `walking the cursor answered ${response.status}` };
    cursor = page.meta.nextCursor;
    depth += limit;
  }
  return cursor === null ? { unavailable: `fewer than ${DEPTH} listed jobs` } : { cursor };
}

export async function scenariosFor(
  connection: mysql.Connection,
  serviceUrl: string,
  gatewaySecret: string,
  wanted: readonly ScenarioKey[],
  { overloadConnections, kongUnavailable }: { overloadConnections: number; kongUnavailable?: string },
): Promise<Scenario[]> {
  const [[newest]] = await connection.query<mysql.RowDataPacket[]>(
    'SELECT department, type, state FROM jobs WHERE listed AND state IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT 1',
  );
  const [sample] = await connection.query<mysql.RowDataPacket[]>(
    'SELECT id FROM jobs WHERE listed ORDER BY RAND() LIMIT 2000',
  );
  const ids = sample.map((row) => formatUuid(row.id as Buffer));
  const deep = await cursorAtDepth(
    serviceUrl,
    headersFor({ as: 'reader', via: 'direct', method: 'GET' }, gatewaySecret),
  );
  const department = encodeURIComponent(String(newest?.department ?? 'Engineering').toLowerCase());
  const state = String(newest?.state ?? 'CA');

  const direct: Comparison = { subjects: ['service'], reference: 'baseline', counts: 'answers' };
  const proxied: Comparison = { subjects: ['gateway', 'proxy'], reference: 'service', counts: 'answers' };
  const all: Scenario[] = [
    {
      key: 'A',
      title: 'default list',
      method: 'GET',
      path: '/api/v1/jobs',
      as: 'reader',
      via: 'direct',
      comparison: direct,
    },
    {
      key: 'B',
      title: 'department + type',
      method: 'GET',
      path: `/api/v1/jobs?department=${department}&type=${newest?.type ?? 'full-time'}`,
      as: 'reader',
      via: 'direct',
      comparison: direct,
    },
    {
      key: 'C',
      title: `page=${PAGE}`,
      method: 'GET',
      path: `/api/v1/jobs?page=${PAGE}`,
      as: 'reader',
      via: 'direct',
      comparison: direct,
    },
    'cursor' in deep
      ? {
          key: "C'",
          title: `page ${PAGE}'s depth by cursor`,
          method: 'GET',
          path: `/api/v1/jobs?limit=${LIMIT}&cursor=${encodeURIComponent(deep.cursor)}`,
          as: 'reader',
          via: 'direct',
          comparison: direct,
        }
      : {
          key: "C'",
          title: `page ${PAGE}'s depth by cursor`,
          method: 'GET',
          path: '',
          as: 'reader',
          via: 'direct',
          comparison: direct,
          unavailable: deep.unavailable,
        },
    {
      key: 'D',
      title: 'get by id (random)',
      method: 'GET',
      path: '/api/v1/jobs/',
      ids,
      as: 'reader',
      via: 'direct',
      comparison: direct,
    },
    {
      key: 'E',
      title: 'create',
      method: 'POST',
      path: '/api/v1/jobs',
      body: CREATE_BODY,
      as: 'writer',
      via: 'direct',
      comparison: direct,
    },
    {
      key: 'G',
      title: 'status=active,paused',
      method: 'GET',
      path: '/api/v1/jobs?status=active,paused',
      as: 'reader',
      via: 'direct',
      comparison: direct,
    },
    {
      key: 'H',
      title: `state=${state}`,
      method: 'GET',
      path: `/api/v1/jobs?state=${state}`,
      as: 'reader',
      via: 'direct',
      comparison: direct,
    },
    {
      key: 'F-A',
      title: 'A through the local gateway',
      method: 'GET',
      path: '/api/v1/jobs',
      as: 'reader',
      via: 'gateway',
      comparison: proxied,
    },
    {
      key: 'F-D',
      title: 'D through the local gateway',
      method: 'GET',
      path: '/api/v1/jobs/',
      ids,
      as: 'reader',
      via: 'gateway',
      comparison: proxied,
    },
    {
      key: 'O',
      title: 'overload: A at many connections, default queue vs unbounded',
      method: 'GET',
      path: '/api/v1/jobs',
      as: 'reader',
      via: 'direct',
      comparison: { subjects: ['service'], reference: 'service-unbounded', counts: 'good' },
      connections: overloadConnections,
    },
    {
      key: 'K',
      title: 'D through real Kong',
      method: 'GET',
      path: '/api/v1/jobs/',
      ids,
      as: 'reader',
      via: 'gateway',
      comparison: { subjects: ['kong-bare', 'kong-key-auth', 'kong-ours'], reference: 'service', counts: 'answers' },
      ...(kongUnavailable ? { unavailable: kongUnavailable } : {}),
    },
    {
      key: 'N',
      title: "get by id: the Dockerfile's node flags vs node's defaults",
      method: 'GET',
      path: '/api/v1/jobs/',
      ids,
      as: 'reader',
      via: 'direct',
      comparison: { subjects: ['service-flags'], reference: 'service-node-defaults', counts: 'answers' },
      deployed: true,
    },
    {
      key: 'N-A',
      title: "default list: the Dockerfile's node flags vs node's defaults",
      method: 'GET',
      path: '/api/v1/jobs',
      as: 'reader',
      via: 'direct',
      comparison: { subjects: ['service-flags'], reference: 'service-node-defaults', counts: 'answers' },
      deployed: true,
    },
  ];
  // S, the full sync, and W, webhook delivery, are not request mixes: bench/sync.ts and bench/webhooks.ts measure them.
  return all.filter((scenario) => wanted.includes(scenario.key));
}

/**
 * The scenarios with, after each data-layer one, its twin comparing the service with the before
 * checkout's service (same path, ids and body): a row of its own, measured as a pair.
 */
export function withBefore(scenarios: Scenario[]): Scenario[] {
  return scenarios.flatMap((scenario) =>
    BEFORE_SCENARIOS.includes(scenario.key) && scenario.comparison.reference === 'baseline'
      ? [
          scenario,
          {
            ...scenario,
            comparison: { subjects: ['service'], reference: 'before', counts: 'answers' } satisfies Comparison,
          },
        ]
      : [scenario],
  );
}

/** The path of one request of a scenario (get by id: the first sampled id). */
export function samplePath(scenario: Scenario, index = 0): string {
  return scenario.ids ? `${scenario.path}${scenario.ids[index % scenario.ids.length]}` : scenario.path;
}
