/**
 * npm run bench's command line: what it takes, its defaults, and the one-line message a wrong
 * argument gets.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ALL_SCENARIOS, BEFORE_SCENARIOS, type ScenarioKey } from './scenarios';

export interface Options {
  sizes: number[];
  /** Rounds every scenario gets at least, and at most (it stops between them once stable). */
  rounds: number;
  maxRounds: number;
  /** The spread of a ratio, in percent, under which a scenario counts as stable. */
  spread: number;
  duration: number;
  warmup: number;
  connections: number;
  /** wrk threads; one is enough for tens of thousands of requests a second. */
  threads: number;
  pool: number;
  /** The overload scenario's connections and seconds per measurement. */
  overloadConnections: number;
  overloadSeconds: number;
  /** Timed full syncs per way (plain, gzip), in ABBA order after one warm-up pass each way. */
  syncRounds: number;
  /** Seconds of W's latency window (creates at 50 a second). */
  webhookSeconds: number;
  /** The partner link S also syncs across (tc's rate, bench/link.ts); '' for loopback only. */
  linkRate: string;
  scenarios: ScenarioKey[];
  reseed: boolean;
  /** Measure every comparison's targets one after the other, never at once on a shared core. */
  inTurn: boolean;
  /** Whether docs/performance.md's latest section is replaced (--no-docs: bench/results/ only). */
  docs: boolean;
  note: string;
  serverUrl: string;
  /** The node binary the service and the baseline run on (--node; default: the one running the bench). */
  node: string;
  /** A built checkout of another commit (--before): its service is each data-layer scenario's second reference; '' for none. */
  before: string;
  argv: string;
}

const FLAGS = {
  sizes: { type: 'string' },
  rounds: { type: 'string' },
  'max-rounds': { type: 'string' },
  spread: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  connections: { type: 'string' },
  threads: { type: 'string' },
  pool: { type: 'string' },
  'overload-connections': { type: 'string' },
  'overload-seconds': { type: 'string' },
  'sync-rounds': { type: 'string' },
  'link-rate': { type: 'string' },
  'webhook-seconds': { type: 'string' },
  scenarios: { type: 'string' },
  reseed: { type: 'boolean' },
  'in-turn': { type: 'boolean' },
  'no-docs': { type: 'boolean' },
  note: { type: 'string' },
  node: { type: 'string' },
  before: { type: 'string' },
} as const;

export const USAGE =
  'npm run bench -- [--sizes 10000,100000] [--scenarios A,D,...] [--rounds 3] [--max-rounds 10] [--spread 5] [--duration 5] [--warmup 10] ' +
  '[--connections 16] [--threads 1] [--pool 10] [--overload-connections 200] [--overload-seconds 10] [--sync-rounds 2] [--webhook-seconds 30] [--link-rate 100mbit|none] [--reseed] [--in-turn] [--no-docs] [--note text] [--node /path/to/bin/node] ' +
  '[--before /path/to/another/checkout (built with npx tsc -b tsconfig.build.json, node_modules present): D, E, A, B, G and H also measure this service against that one, on a copy of the same jobs migrated by its own migrations]';

/** An argument as a shell would need it quoted, so the recorded command line can be pasted back. */
const quoted = (arg: string) =>
  /^[\w.,=:/'-]+$/.test(arg) && !arg.includes("'") ? arg : `'${arg.replace(/'/g, "'\\''")}'`;

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): Options {
  const options: Options = {
    sizes: [10_000, 100_000],
    rounds: 3,
    maxRounds: 10,
    spread: 5,
    duration: 5,
    warmup: 10,
    connections: 16,
    threads: 1,
    pool: 10,
    overloadConnections: 200,
    overloadSeconds: 10,
    syncRounds: 2,
    webhookSeconds: 30,
    linkRate: '100mbit',
    scenarios: [...ALL_SCENARIOS],
    reseed: false,
    inTurn: false,
    docs: true,
    note: env.BENCH_NOTE ?? '',
    serverUrl: env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306',
    node: process.execPath,
    before: '',
    argv: argv.map(quoted).join(' '),
  };
  const whole = (name: string, value: string | undefined, min: number) => {
    if (!value || !/^\d+$/.test(value) || Number(value) < min)
      throw new Error(`${name} takes a whole number >= ${min} (got "${value ?? ''}")`);
    return Number(value);
  };
  let parsed: ReturnType<typeof parseArgs<{ options: typeof FLAGS; strict: true }>>['values'];
  try {
    parsed = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new Error(`${(error as Error).message}. Usage: ${USAGE}`);
  }
  if (parsed.sizes !== undefined)
    options.sizes = parsed.sizes.split(',').map((size) => whole('--sizes', size.trim(), 1));
  if (parsed.rounds !== undefined) options.rounds = whole('--rounds', parsed.rounds, 1);
  if (parsed['max-rounds'] !== undefined) options.maxRounds = whole('--max-rounds', parsed['max-rounds'], 1);
  options.maxRounds = Math.max(options.maxRounds, options.rounds);
  if (parsed.spread !== undefined) options.spread = whole('--spread', parsed.spread, 1);
  if (parsed.duration !== undefined) options.duration = whole('--duration', parsed.duration, 1);
  if (parsed.warmup !== undefined) options.warmup = whole('--warmup', parsed.warmup, 0);
  if (parsed.connections !== undefined) options.connections = whole('--connections', parsed.connections, 1);
  if (parsed.threads !== undefined) options.threads = whole('--threads', parsed.threads, 1);
  if (parsed.pool !== undefined) options.pool = whole('--pool', parsed.pool, 1);
  if (parsed['overload-connections'] !== undefined)
    options.overloadConnections = whole('--overload-connections', parsed['overload-connections'], 1);
  if (parsed['overload-seconds'] !== undefined)
    options.overloadSeconds = whole('--overload-seconds', parsed['overload-seconds'], 1);
  if (parsed['sync-rounds'] !== undefined) options.syncRounds = whole('--sync-rounds', parsed['sync-rounds'], 1);
  if (parsed['webhook-seconds'] !== undefined)
    options.webhookSeconds = whole('--webhook-seconds', parsed['webhook-seconds'], 1);
  if (parsed['link-rate'] !== undefined) {
    const rate = parsed['link-rate'].trim().toLowerCase();
    if (rate !== 'none' && !/^\d+(?:\.\d+)?[kmg]?bit$/.test(rate))
      throw new Error(
        `--link-rate takes a rate as tc writes it (1gbit, 100mbit) or none (got "${parsed['link-rate']}")`,
      );
    options.linkRate = rate === 'none' ? '' : rate;
  }
  if (parsed.scenarios !== undefined) {
    const keys = parsed.scenarios.split(',').map((key) => key.trim());
    const unknown = keys.filter((key) => !ALL_SCENARIOS.includes(key as ScenarioKey));
    if (unknown.length)
      throw new Error(`--scenarios takes a comma list of ${ALL_SCENARIOS.join(', ')} (got ${unknown.join(', ')})`);
    options.scenarios = keys as ScenarioKey[];
  }
  if (parsed.reseed) options.reseed = true;
  if (parsed['in-turn']) options.inTurn = true;
  if (parsed['no-docs']) options.docs = false;
  if (parsed.note !== undefined) options.note = parsed.note;
  if (parsed.node !== undefined) {
    if (!parsed.node.trim())
      throw new Error('--node takes the path of a node binary (e.g. "$(bash scripts/node-runtime.sh)")');
    options.node = parsed.node;
  }
  if (parsed.before !== undefined) {
    const dir = path.resolve(parsed.before);
    if (!parsed.before.trim() || !existsSync(path.join(dir, 'dist/service/server.js'))) {
      throw new Error(
        `--before takes a checkout built with npx tsc -b tsconfig.build.json (no dist/service/server.js in "${dir}")`,
      );
    }
    if (!options.scenarios.some((key) => BEFORE_SCENARIOS.includes(key)))
      throw new Error(`--before compares ${BEFORE_SCENARIOS.join(', ')}: --scenarios names none of them`);
    options.before = dir;
  }
  return options;
}
