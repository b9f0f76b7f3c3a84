/** npm run bench's command line: what it takes, its defaults, and the one-line message a wrong argument gets. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ALL_SCENARIOS, BEFORE_SCENARIOS, type ScenarioKey } from './scenarios';

/** The whole-number options and their defaults (and least values). */
const NUMBERS = {
  rounds: [3, 1],
  'max-rounds': [10, 1],
  spread: [5, 1],
  duration: [5, 1],
  warmup: [10, 0],
  connections: [16, 1],
  pool: [10, 1],
  'sync-rounds': [2, 1],
  'webhook-seconds': [30, 1],
} as const;

export type Options = ReturnType<typeof parseOptions>;

export const USAGE =
  'npm run bench -- [--sizes 10000,100000] [--scenarios A,D,...] [--rounds 3] [--max-rounds 10] [--spread 5] [--duration 5] [--warmup 10] ' +
  '[--connections 16] [--pool 10] [--sync-rounds 2] [--webhook-seconds 30] [--link-rate 100mbit|none] [--reseed] [--note text] ' +
  '[--node /path/to/bin/node] [--before /path/to/another/checkout (built with npx tsc -b tsconfig.build.json, node_modules present)]';

/** An argument as a shell would need it quoted, so the recorded command line can be pasted back. */
const quoted = (arg: string) => (/^[\w.,=:/-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`);

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  const strings = Object.fromEntries(
    [...Object.keys(NUMBERS), 'sizes', 'scenarios', 'link-rate', 'note', 'node', 'before'].map((name) => [
      name,
      { type: 'string' as const },
    ]),
  );
  const flags = { ...strings, reseed: { type: 'boolean' as const } };
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options: flags, strict: true }).values;
  } catch (error) {
    throw new Error(`${(error as Error).message}. Usage: ${USAGE}`, { cause: error });
  }
  const text = (name: string) => values[name] as string | undefined;
  const whole = (name: string, value: string | undefined, min: number) => {
    if (!value || !/^\d+$/.test(value) || Number(value) < min)
      throw new Error(`--${name} takes a whole number >= ${min} (got "${value ?? ''}")`);
    return Number(value);
  };
  const number = (name: keyof typeof NUMBERS) => {
    const [fallback, min] = NUMBERS[name];
    return text(name) === undefined ? fallback : whole(name, text(name), min);
  };
  const scenarios = (text('scenarios')?.split(',') ?? [...ALL_SCENARIOS]).map((key) => key.trim());
  const unknown = scenarios.filter((key) => !ALL_SCENARIOS.includes(key as ScenarioKey));
  if (unknown.length)
    throw new Error(`--scenarios takes a comma list of ${ALL_SCENARIOS.join(', ')} (got ${unknown.join(', ')})`);
  const rate = (text('link-rate') ?? '100mbit').trim().toLowerCase();
  if (rate !== 'none' && !/^\d+(?:\.\d+)?[kmg]?bit$/.test(rate))
    throw new Error(`--link-rate takes a rate as tc writes it (1gbit, 100mbit) or none (got "${text('link-rate')}")`);
  const node = text('node') ?? process.execPath;
  if (!node.trim()) throw new Error('--node takes the path of a node binary (e.g. "$(bash scripts/node-runtime.sh)")');
  const before = text('before') === undefined ? '' : path.resolve(text('before')!);
  if (before && (!text('before')!.trim() || !existsSync(path.join(before, 'dist/service/server.js'))))
    throw new Error(
      `--before takes a checkout built with npx tsc -b tsconfig.build.json (no dist/service/server.js in "${before}")`,
    );
  if (text('before') !== undefined && !scenarios.some((key) => BEFORE_SCENARIOS.includes(key as ScenarioKey)))
    throw new Error(`--before compares ${BEFORE_SCENARIOS.join(', ')}: --scenarios names none of them`);
  return {
    sizes: (text('sizes') ?? '10000,100000').split(',').map((size) => whole('sizes', size.trim(), 1)),
    scenarios: scenarios as ScenarioKey[],
    rounds: number('rounds'),
    maxRounds: Math.max(number('max-rounds'), number('rounds')),
    spread: number('spread'),
    duration: number('duration'),
    warmup: number('warmup'),
    connections: number('connections'),
    threads: 1,
    pool: number('pool'),
    syncRounds: number('sync-rounds'),
    webhookSeconds: number('webhook-seconds'),
    linkRate: rate === 'none' ? '' : rate,
    reseed: values.reseed === true,
    note: text('note') ?? env.BENCH_NOTE ?? '',
    serverUrl: env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306',
    node,
    before,
    argv: argv.map(quoted).join(' '),
  };
}

/** --before's checkout as the run's header names it: its commit, and whether tracked files differ from it. */
export interface BeforeCheckout {
  dir: string;
  /** git rev-parse HEAD there, or why there is none. */
  commit: string;
  /** Tracked files there differ from its commit: the service is not that commit's alone. */
  changes: boolean;
}

export function describeCheckout(dir: string): BeforeCheckout {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  try {
    return {
      dir,
      commit: git('rev-parse', 'HEAD'),
      changes: git('status', '--porcelain', '--untracked-files=no') !== '',
    };
  } catch (error) {
    return { dir, commit: `unknown (${(error as Error).message.split('\n')[0]})`, changes: false };
  }
}

/** The checkout as the run's header names it. */
export function checkoutLine(checkout: BeforeCheckout): string {
  return `${checkout.dir} at ${checkout.commit}${checkout.changes ? ' with uncommitted changes' : ''}`;
}
