/** What the benchmark asks, per table size: paths and ids found on the table itself, so every scenario reads real rows. */
import type mysql from 'mysql2/promise';
import { JOB_EXAMPLE } from '../domain/job';

export const ALL_SCENARIOS = ['A', 'B', 'C', 'D', 'E', 'G', 'H', 'K', 'M', 'S', 'W'] as const;
export type ScenarioKey = (typeof ALL_SCENARIOS)[number];
/** The scenarios that exercise the data layer: with --before, each also compares this service with another checkout's. */
export const BEFORE_SCENARIOS: readonly ScenarioKey[] = ['D', 'E', 'A', 'B', 'G', 'H'];

/** A row compares each subject with the reference in the same rounds: the service with the baseline (or before), Kong with the service. */
export type Target = 'service' | 'baseline' | 'before' | 'kong-bare' | 'kong-key-auth' | 'kong-bundled' | 'kong-ours';
export type Comparison = { subjects: Target[]; reference: Target };

export interface Scenario {
  key: ScenarioKey;
  title: string;
  method: 'GET' | 'POST';
  /** Path and query; for get by id the prefix, an id from `ids` appended per request. */
  path: string;
  ids?: string[];
  body?: string;
  as: 'reader' | 'writer';
  comparison: Comparison;
  /** Why it cannot run here, printed as "n/a". */
  unavailable?: string;
}

/** demo.yaml's reader, as the gateway identifies it to the service, and its API key. */
export const DEMO_READER = { id: '6a1f3c2e-4b7d-4e21-9a3b-0d5e8f7c1a01', groups: 'jobs:read' };
export const DEMO_READER_KEY = 'demo-reader-2f6c1a9e';
const BENCH_WRITER = { id: 'bench-writer', groups: 'jobs:read, jobs:write' };
export const BENCH_WRITER_ID = BENCH_WRITER.id;

/** The identity headers the gateway would send for a consumer. */
export const identity = ({ id, groups }: { id: string; groups: string }, secret: string) => ({
  ...{ 'X-Gateway-Secret': secret, 'X-Consumer-ID': id, 'X-Consumer-Username': id, 'X-Consumer-Groups': groups },
});

/**
 * A request's headers to a target: identity headers where nothing in front adds them (the servers,
 * Kong with no plugin), the API key through a Kong (its request-transformer or ours adds the secret).
 */
export function headersForTarget(scenario: Pick<Scenario, 'as' | 'method'>, target: Target, secret: string) {
  const json: Record<string, string> = scenario.method === 'POST' ? { 'Content-Type': 'application/json' } : {};
  if (target !== 'kong-bare' && target.startsWith('kong-')) return { 'X-API-Key': DEMO_READER_KEY, ...json };
  return { ...identity(scenario.as === 'writer' ? BENCH_WRITER : DEMO_READER, secret), ...json };
}

// The contract's documented job as a create body, with no postingId: each create is a new posting.
const FIELDS = 'department location workplace type description requirements responsibilities salary status'.split(' ');
export const CREATE_BODY = JSON.stringify({
  title: 'Benchmark Platform Engineer',
  ...Object.fromEntries(FIELDS.map((field) => [field, JOB_EXAMPLE[field as keyof typeof JOB_EXAMPLE]])),
});
export const uuidOf = (id: Buffer) => id.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');

export async function scenariosFor(
  connection: mysql.Connection,
  wanted: readonly ScenarioKey[],
  kongUnavailable?: string,
): Promise<Scenario[]> {
  const [[newest]] = await connection.query<mysql.RowDataPacket[]>(
    'select department, type, state from jobs where listed and state is not null order by created_at desc, id desc limit 1',
  );
  const [sample] = await connection.query<mysql.RowDataPacket[]>(
    'select id from jobs where listed order by rand() limit 2000',
  );
  const ids = sample.map((row) => uuidOf(row.id as Buffer));
  const dept = encodeURIComponent(String(newest?.department ?? 'Engineering').toLowerCase());
  const state = String(newest?.state ?? 'CA');
  const comparison: Comparison = { subjects: ['service'], reference: 'baseline' };
  const reader = { method: 'GET', as: 'reader' } as const;
  const get = (key: ScenarioKey, title: string, path: string) => ({ key, title, path, comparison, ...reader });
  const byId = { path: '/api/v1/jobs/', ids };
  const all: Scenario[] = [
    get('A', 'default list', '/api/v1/jobs'),
    get('B', 'department + type', `/api/v1/jobs?department=${dept}&type=${String(newest?.type ?? 'full-time')}`),
    get('C', 'page=2500', '/api/v1/jobs?page=2500'),
    { ...get('D', 'get by id (random)', ''), ...byId },
    { ...get('E', 'create', '/api/v1/jobs'), method: 'POST', body: CREATE_BODY, as: 'writer' },
    get('G', 'status=active,paused', '/api/v1/jobs?status=active,paused'),
    get('H', `state=${state}`, `/api/v1/jobs?state=${state}`),
    // No reference serves the mirror check: its row is the service's own cost, which must not grow with the table.
    {
      ...get('M', 'mirror check', '/api/v1/jobs/changes/digest'),
      comparison: { subjects: ['service'], reference: 'service' },
    },
    {
      ...get('K', 'D through real Kong', ''),
      ...byId,
      comparison: { subjects: ['kong-bare', 'kong-key-auth', 'kong-bundled', 'kong-ours'], reference: 'service' },
      ...(kongUnavailable ? { unavailable: kongUnavailable } : {}),
    },
  ];
  // S, the full sync, and W, webhook delivery, are not request mixes: bench/sync.ts and bench/webhooks.ts measure them.
  return all.filter((scenario) => wanted.includes(scenario.key));
}

/** After each data-layer scenario, its twin comparing the service with the before checkout's (same requests). */
export function withBefore(scenarios: Scenario[]): Scenario[] {
  return scenarios.flatMap((scenario) =>
    BEFORE_SCENARIOS.includes(scenario.key)
      ? [scenario, { ...scenario, comparison: { subjects: ['service'], reference: 'before' } satisfies Comparison }]
      : [scenario],
  );
}

/** The path of one request of a scenario (get by id: the index-th sampled id). */
export function samplePath(scenario: Scenario, index = 0): string {
  return scenario.ids ? `${scenario.path}${scenario.ids[index % scenario.ids.length]}` : scenario.path;
}
