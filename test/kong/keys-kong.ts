/**
 * A real Kong 3.9 with PostgreSQL in front of the real service, and the keys tool driven against its
 * Admin API, for the keys tests in this folder: call keysOnKong() at the top of a test file.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startRealKong, type RealKong } from '../../harness/real-kong';
import { run } from '../../tools/keys/run';
import { startTestService, type TestService } from '../helpers/service';
import type { Parsed } from '../helpers/parsed';

export interface KeysOnKong {
  readonly kong: RealKong;
  readonly service: TestService;
  /** Where the state files are (kong.yaml pointed at the test service, partners.yaml, partner-keys.yaml). */
  readonly dir: string;
  /** What the secret manager holds: every key the tool printed, by variable. */
  secrets: Record<string, string>;
  /** `keys <args>` in `dir`, with PATH and HOME and `env` only; a printed VARIABLE=key goes into `secrets`. */
  keys(args: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }>;
  /** --apply --admin-url <this Kong> */
  apply(): string[];
  /** `deck <args> --kong-addr <this Kong>` in `dir`, with `secrets` in its environment. */
  deck(args: string[]): { code: number | null; text: string };
  /** GET /api/v1/jobs?limit=1 through Kong's proxy with the key. */
  get(key: string): Promise<{ status: number; body: Parsed }>;
  /** POST /api/v1/jobs through Kong's proxy with the key. */
  post(key: string): Promise<number>;
  /** GET on the Admin API, parsed. */
  admin(p: string): Promise<Parsed>;
}

export function keysOnKong(name: string, secret: string): KeysOnKong {
  let kong: RealKong;
  let service: TestService;
  let dir: string;
  const ctx: KeysOnKong = {
    get kong() {
      return kong;
    },
    get service() {
      return service;
    },
    get dir() {
      return dir;
    },
    secrets: {},
    async keys(args, env = {}) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await run(args, {
        out: (t) => out.push(t),
        err: (t) => err.push(t),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
        cwd: dir,
      });
      for (const line of out) {
        const m = /^(DECK_[A-Z0-9_]+)=(\S+)$/.exec(line.trim());
        if (m) ctx.secrets[m[1]!] = m[2]!;
      }
      return { code, out: out.join('\n'), err: err.join('\n') };
    },
    apply: () => ['--apply', '--admin-url', kong.adminUrl],
    deck(args) {
      const out = spawnSync('deck', [...args, '--kong-addr', kong.adminUrl], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, ...ctx.secrets },
      });
      return { code: out.status, text: `${out.stdout}${out.stderr}` };
    },
    async get(key) {
      const res = await fetch(`${kong.proxyUrl}/api/v1/jobs?limit=1`, { headers: { 'X-API-Key': key } });
      return { status: res.status, body: await res.json() };
    },
    async post(key) {
      const res = await fetch(`${kong.proxyUrl}/api/v1/jobs`, {
        method: 'POST',
        headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: 'Lifecycle', department: 'Engineering', type: 'contract', description: 'd' }),
      });
      await res.arrayBuffer();
      return res.status;
    },
    admin: async (p) => (await fetch(`${kong.adminUrl}${p}`)).json(),
  };
  beforeAll(async () => {
    service = await startTestService({ name, gatewaySecret: secret, seed: true });
    kong = await startRealKong({ postgres: true, gatewaySecret: secret });
    dir = mkdtempSync(path.join(os.tmpdir(), `${name}-`));
    // kong.yaml as committed, both services (the API and its reference page) pointed at the test service, and this Kong's Redis.
    writeFileSync(
      path.join(dir, 'kong.yaml'),
      readFileSync(path.join(ROOT, 'kong.yaml'), 'utf8')
        .replaceAll('http://jobs-service:3000', service.url)
        .replace(/host: redis\n(\s+)port: 6379/g, `host: ${kong.redis.host}\n$1port: ${kong.redis.port}`),
    );
    for (const file of ['partners.yaml', 'partner-keys.yaml'])
      copyFileSync(path.join(ROOT, file), path.join(dir, file));
  }, 120_000);
  afterAll(async () => {
    await kong?.stop();
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return ctx;
}

/** Milliseconds until `check` holds (polled every 50 ms), or throws after `limitMs`. */
export async function msUntil(what: string, limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - start;
}
