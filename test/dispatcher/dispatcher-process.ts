/**
 * A dispatcher as production runs it (dispatcher/main.ts in its own process), with its
 * log lines kept and its metrics URL read from its start-up line; stop() is SIGTERM, as a restart sends.
 * startDispatcherProcess where a test restarts dispatchers with new settings (a sealing key rotation);
 * spawnDispatcher where a test kills one outright mid-work.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const ROOT = path.resolve(__dirname, '..', '..');
const REGISTER_TS = path.join(ROOT, 'test', 'helpers', 'register-ts.js');

export interface DispatcherProcess {
  /** Its JSON log lines, parsed, in order. */
  lines: Array<Record<string, unknown> & { msg?: string }>;
  metricsUrl?: string;
  /** Resolves with its exit code: a refused start exits 1 with its reason logged. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * Starts one and waits for its "running" line, or for its exit when it refuses to start. `built`: the
 * compiled dist/ (test/helpers/built.ts builds it), as production runs it and in a second instead of several.
 */
export async function startDispatcherProcess(
  env: NodeJS.ProcessEnv,
  { built = false } = {},
): Promise<DispatcherProcess> {
  const argv = built
    ? [path.join(ROOT, 'dist', 'dispatcher', 'main.js')]
    : ['-r', REGISTER_TS, path.join(ROOT, 'dispatcher', 'main.ts')];
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', WEBHOOK_METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: DispatcherProcess['lines'] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const running = new Promise<void>((resolve) => {
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        let parsed: DispatcherProcess['lines'][number];
        try {
          parsed = JSON.parse(line) as DispatcherProcess['lines'][number];
        } catch {
          parsed = { msg: line };
        }
        lines.push(parsed);
        if (parsed.msg === 'webhook dispatcher running') resolve();
      });
    }
  });
  await Promise.race([running, exited]);
  const started = lines.find((line) => line.msg === 'webhook dispatcher running');
  return {
    lines,
    metricsUrl: started?.metrics as string | undefined,
    exited,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The settings a test's dispatcher runs with: fast polls and retries, plain HTTP to the loopback receiver. */
export interface TestDispatcherSettings {
  databaseUrl: string;
  secretsKey: Buffer;
  leaseMs: number;
  timeoutMs: number;
}

/**
 * dispatcher/main.ts in a process of its own, started without waiting (stderr shown), for tests that
 * kill it outright (SIGKILL) mid-work; `children` collects it for the test's clean-up.
 */
export function spawnDispatcher(settings: TestDispatcherSettings, children: ChildProcess[]): ChildProcess {
  const child = spawn(process.execPath, ['-r', REGISTER_TS, path.join(ROOT, 'dispatcher', 'main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: settings.databaseUrl,
      LOG_LEVEL: 'warn',
      WEBHOOK_SECRETS_KEY: settings.secretsKey.toString('base64'),
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32',
      WEBHOOK_LEASE_MS: String(settings.leaseMs),
      WEBHOOK_TIMEOUT_MS: String(settings.timeoutMs),
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_RETRY_FIRST_MS: '100',
      WEBHOOK_RETRY_MAX_MS: '400',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}
