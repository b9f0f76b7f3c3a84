/**
 * Shared by the local-gateway and e2e tests: temp copies of kong.yaml (pointed at a test upstream)
 * and demo.yaml, a gateway started on both, a recording stub upstream, and a raw HTTP client that
 * can send a header twice (fetch would merge the two into one line).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { parse, stringify } from 'yaml';
import { startLocalGateway, type LocalGateway, type ReloadResult } from '../../gateway/local';
import type { Parsed } from '../helpers/parsed';

export const ROOT = path.resolve(__dirname, '..', '..');
export const KONG_YAML = path.join(ROOT, 'kong.yaml');
export const DEMO_YAML = path.join(ROOT, 'demo.yaml');

export const DEMO = {
  reader: 'demo-reader-2f6c1a9e',
  writer: 'demo-writer-7b3d8e41',
  writer2: 'demo-writer2-c94e0f57',
  disabled: 'demo-disabled-5a0b6d23',
};

/** A state file as data. */
export type KongState = Parsed;

/** A state file of the repository as data (its decK comments dropped). */
export function repoState(file: string): KongState {
  return parse(readFileSync(file, 'utf8').replace(/^\s*#.*$/gm, ''), { merge: true });
}

/** Every service pointed at the one test service on `upstreamPort`: kong.yaml's upstream of two instances left out. */
function pointAt(state: KongState, upstreamPort: number): KongState {
  delete state.upstreams;
  for (const service of state.services ?? []) service.url = `http://jobs-service:${upstreamPort}`;
  return state;
}

/** kong.yaml as data, with the service pointed at `upstreamPort`. */
export function kongState(upstreamPort: number): KongState {
  return pointAt(repoState(KONG_YAML), upstreamPort);
}

export interface StateFile {
  path: string;
  state: KongState;
  /** Rewrites the file; `edit` changes `state` in place first. */
  write(edit?: (state: KongState) => void): void;
  writeRaw(text: string): void;
}

function stateFile(file: string, state: KongState): StateFile {
  const sf: StateFile = {
    path: file,
    state,
    write(change) {
      change?.(state);
      writeFileSync(file, stringify(state));
    },
    writeRaw(text) {
      writeFileSync(file, text);
    },
  };
  sf.write();
  return sf;
}

/**
 * Temp copies of the two state files npm start serves: kong.yaml (pointed at a test upstream)
 * and demo.yaml. `path`, `state`, `write` and `writeRaw` are kong.yaml's; `demo` is demo.yaml.
 */
export interface ConfigFile extends StateFile {
  /** [kong.yaml, demo.yaml], what the gateway is started on. */
  paths: string[];
  demo: StateFile;
  remove(): void;
}

export function configFile(upstreamPort: number, edit?: (state: KongState, demo: KongState) => void): ConfigFile {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'local-gateway-'));
  const kong = stateFile(path.join(dir, 'kong.yaml'), kongState(upstreamPort));
  const demo = stateFile(path.join(dir, 'demo.yaml'), repoState(DEMO_YAML));
  if (edit) {
    edit(kong.state, demo.state);
    kong.write();
    demo.write();
  }
  return {
    ...kong,
    paths: [kong.path, demo.path],
    demo,
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Temp copies of state files of the repository (paths relative to it), each under its own name,
 * with every service pointed at `upstreamPort`, for a gateway to serve; `remove` deletes them.
 */
export function stateFileCopies(upstreamPort: number, files: string[]): { paths: string[]; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'local-gateway-'));
  const paths = files.map((file) => {
    const state = pointAt(repoState(path.join(ROOT, file)), upstreamPort);
    const copy = path.join(dir, path.basename(file));
    writeFileSync(copy, stringify(state));
    return copy;
  });
  return { paths, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface GatewayLogLine {
  msg: string;
  route?: string | null;
  consumer?: string | null;
  request_id?: string;
  status?: number;
  path?: string;
  [key: string]: unknown;
}

export interface TestGateway extends LocalGateway {
  logs: GatewayLogLine[];
  rawLogs: string[];
  /** Resolves with the next reload attempt (file watcher, or reload()). */
  nextReload(): Promise<ReloadResult>;
}

/** What npm start gives the gateway: the secret, the hosts file, the error template. */
export function gatewayEnv(secret: string | undefined, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...(secret !== undefined ? { JOBS_GATEWAY_SECRET: secret } : {}),
    KONG_DNS_HOSTSFILE: path.join(ROOT, 'gateway/local/hosts'),
    KONG_ERROR_TEMPLATE_JSON: path.join(ROOT, 'gateway/kong/error-template.json'),
    ...extra,
  };
}

export async function startGateway(
  configPaths: string | string[],
  env: NodeJS.ProcessEnv,
  options: { upstreamConnections?: number } = {},
): Promise<TestGateway> {
  const rawLogs: string[] = [];
  const logs: GatewayLogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        rawLogs.push(line);
        logs.push(JSON.parse(line) as GatewayLogLine);
      }
      done();
    },
  });
  const waiters: Array<(r: ReloadResult) => void> = [];
  const gateway = await startLocalGateway({
    configPaths: typeof configPaths === 'string' ? [configPaths] : configPaths,
    port: 0,
    host: '127.0.0.1',
    env,
    logger: pino({ level: 'info' }, sink),
    onReload: (r) => waiters.splice(0).forEach((w) => w(r)),
    ...options,
  });
  return {
    ...gateway,
    logs,
    rawLogs,
    nextReload: () => new Promise((resolve) => waiters.push(resolve)),
  };
}

/** The gateway's access-log line for a response (found by X-Kong-Request-Id). */
export async function logLineFor(
  gateway: TestGateway,
  requestId: string | undefined,
): Promise<GatewayLogLine | undefined> {
  for (let i = 0; i < 100; i++) {
    const line = gateway.logs.find((l) => l.msg === 'request' && l.request_id === requestId);
    if (line) return line;
    await new Promise((r) => setImmediate(r));
  }
  return undefined;
}

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  socketId: number;
}

export interface StubUpstream {
  port: number;
  received: Received[];
  /** What the stub answers; default 200 with a small JSON body. */
  respond: (req: Received, res: http.ServerResponse) => void;
  close(): Promise<void>;
}

export async function stubUpstream(): Promise<StubUpstream> {
  let sockets = 0;
  const stub: StubUpstream = {
    port: 0,
    received: [],
    respond: (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}');
    },
    close: () => Promise.resolve(),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
        socketId: (req.socket as unknown as { stubId: number }).stubId,
      };
      stub.received.push(r);
      stub.respond(r, res);
    });
  });
  server.on('connection', (socket) => {
    sockets += 1;
    (socket as unknown as { stubId: number }).stubId = sockets;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.port = (server.address() as AddressInfo).port;
  stub.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return stub;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: Parsed;
}

export type QueryInput = Record<string, string | string[]>;

export function queryString(query: QueryInput | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const value of Array.isArray(v) ? v : [v]) params.append(k, value);
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** One HTTP/1.1 request; a header given as a list is sent as that many header lines. */
export function send(
  baseUrl: string,
  opts: {
    method?: string;
    path: string;
    query?: QueryInput;
    /** The query string exactly as sent (instead of `query`). */
    rawQuery?: string;
    headers?: Record<string, string | string[]>;
    body?: string | Buffer;
    chunked?: boolean;
    /** The client's address (any 127.x.y.z works on loopback), to act as several clients. */
    localAddress?: string;
  },
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { ...(opts.headers ?? {}) };
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: opts.method ?? 'GET',
        path: opts.path + (opts.rawQuery !== undefined ? `?${opts.rawQuery}` : queryString(opts.query)),
        headers,
        agent: false,
        ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) {
      if (opts.chunked) {
        const body = Buffer.from(opts.body);
        for (let i = 0; i < body.length; i += 16 * 1024) req.write(body.subarray(i, i + 16 * 1024));
        req.end();
      } else {
        req.end(opts.body);
      }
    } else {
      req.end();
    }
  });
}

/**
 * For one test: a stub upstream, a temp kong.yaml pointed at it, and the gateways `starts` make
 * over that file, one after the other; `use` runs with them, and all are stopped after it.
 */
export async function overOneStub<G extends TestGateway[]>(
  starts: [...{ [K in keyof G]: (cf: ConfigFile) => Promise<G[K]> }],
  use: (gateways: G, upstream: StubUpstream) => Promise<void>,
): Promise<void> {
  const upstream = await stubUpstream();
  const cf = configFile(upstream.port);
  const gateways: TestGateway[] = [];
  try {
    for (const start of starts as Array<(cf: ConfigFile) => Promise<TestGateway>>) gateways.push(await start(cf));
    await use(gateways as G, upstream);
  } finally {
    for (const gateway of gateways) await gateway.close();
    await upstream.close();
    cf.remove();
  }
}

export interface StubFixture {
  upstream: StubUpstream;
  cf: ConfigFile;
  gateway: TestGateway;
}

/**
 * The usual set-up of a describe block: a stub upstream, a temp kong.yaml pointed at it (edited
 * when `edit` is given) and a gateway serving it, started in beforeAll and stopped in afterAll.
 * Read the parts inside tests (they exist once beforeAll has run).
 */
export function gatewayOverStub(
  opts: {
    secret?: string;
    edit?: (state: KongState, demo: KongState) => void;
    /** How the stub answers, instead of its default 200. */
    respond?: StubUpstream['respond'];
    gateway?: Parameters<typeof startGateway>[2];
  } = {},
): StubFixture {
  const fixture = {} as StubFixture;
  beforeAll(async () => {
    fixture.upstream = await stubUpstream();
    if (opts.respond) fixture.upstream.respond = opts.respond;
    fixture.cf = configFile(fixture.upstream.port, opts.edit);
    fixture.gateway = await startGateway(fixture.cf.paths, gatewayEnv(opts.secret ?? 'x'), opts.gateway);
  });
  afterAll(async () => {
    await fixture.gateway.close();
    await fixture.upstream.close();
    fixture.cf.remove();
  });
  return fixture;
}
