// `npm start` (scripts/start.ts) serving partners.yaml and partner-keys.yaml beside kong.yaml and
// demo.yaml, with the keys tool's printed key in the environment as decK reads it: a key issued
// a moment ago answers on this machine, with its scope, before any Kong has it.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { stateFileCopies } from '../local-gateway/support';
import { keys, printedKey, ROOT, workspace, type Workspace } from './support';

const REGISTER_TS = path.join(ROOT, 'test/helpers/register-ts.js');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Started {
  child: ChildProcess;
  /** The gateway's URL from the banner, or the exit code and stderr of a start that failed. */
  ready: Promise<{ url: string } | { code: number | null; stderr: string }>;
  stop(): Promise<void>;
}

function npmStart(env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, ['-r', REGISTER_TS, path.join(ROOT, 'scripts/start.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const ready = new Promise<{ url: string } | { code: number | null; stderr: string }>((resolve) => {
    child.stdout.on('data', (c) => {
      out += c;
      const m = /Job Listings API on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]! });
    });
    void closed.then((code) => resolve({ code, stderr: err }));
  });
  return {
    child,
    ready,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await closed;
      clearTimeout(timer);
    },
  };
}

let database: TestDatabase;
let ws: Workspace;
let copies: { paths: string[]; remove(): void };
let port: number;
let issued: { variable: string; key: string };

beforeAll(async () => {
  database = await freshDatabase('npm_start');
  ws = workspace();
  const r = await keys(ws, ['issue', 'acme', '--scope', 'read']);
  expect(r.code).toBe(0);
  issued = printedKey(r);
  port = await freePort();
  copies = stateFileCopies(port, ['kong.yaml', 'demo.yaml']);
});
afterAll(async () => {
  copies?.remove();
  ws?.remove();
  await database?.close();
});

/** What `LOCAL_GATEWAY_STATE=kong.yaml,demo.yaml,partners.yaml,partner-keys.yaml npm start` runs with. */
function environment(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { GATEWAY_SECRET: _secret, ...rest } = process.env;
  return {
    ...rest,
    DATABASE_URL: database.url,
    HOST: '127.0.0.1',
    PORT: String(port),
    KONG_PROXY_LISTEN: '127.0.0.1:0',
    LOCAL_GATEWAY_STATE: [...copies.paths, ws.partners, ws.keys].join(','),
    KONG_DNS_HOSTSFILE: path.join(ROOT, 'gateway/local/hosts'),
    KONG_ERROR_TEMPLATE_JSON: path.join(ROOT, 'gateway/kong/error-template.json'),
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

test('a key the keys tool just issued answers through npm start, with its scope', async () => {
  const started = npmStart(environment({ [issued.variable]: issued.key }));
  try {
    const ready = await started.ready;
    if (!('url' in ready)) throw new Error(`npm start exited ${ready.code}: ${ready.stderr}`);
    const list = await fetch(`${ready.url}/api/v1/jobs?limit=1`, { headers: { 'X-API-Key': issued.key } });
    expect(list.status).toBe(200);
    const create = await fetch(`${ready.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'X-API-Key': issued.key, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect({ status: create.status, body: await create.json() }).toEqual({
      status: 403,
      body: { error: 'Missing scope jobs:write', requiredScope: 'jobs:write' },
    });
    // The demo keys are still served beside it.
    expect(
      (await fetch(`${ready.url}/api/v1/jobs?limit=1`, { headers: { 'X-API-Key': 'demo-reader-2f6c1a9e' } })).status,
    ).toBe(200);
    expect(
      (await fetch(`${ready.url}/api/v1/jobs?limit=1`, { headers: { 'X-API-Key': `${issued.key}x` } })).status,
    ).toBe(401);
  } finally {
    await started.stop();
  }
}, 60_000);

test("without the key's variable npm start stops at once, naming it as decK would", async () => {
  const started = npmStart(environment({}));
  try {
    const ready = await started.ready;
    expect(ready).toEqual({
      code: 1,
      stderr: expect.stringContaining(`environment variable '${issued.variable}' present in state file but not set`),
    });
  } finally {
    await started.stop();
  }
}, 60_000);
