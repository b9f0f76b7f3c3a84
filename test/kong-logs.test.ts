/**
 * No API key in any Kong log line, proved with canary keys on real nginx (the server inside Kong):
 * nginx runs with our log format (gateway/kong/nginx-http-jobs.conf, included the way kong.conf's
 * nginx_http_include includes it into Kong's http block), Kong's error_page routing
 * (kong/templates/nginx_kong.lua), a dead upstream, and the container's entrypoint wrapper
 * (gateway/kong/entrypoint.sh) with the redaction filter (gateway/kong/redact-keys.lua) on its
 * stdout and stderr. A raw copy of both logs shows what nginx itself writes.
 *
 * Kong's own Lua (plugins, router, Kong.handle_error) is not in this nginx: test/kong/logs.test.ts
 * sends the same canaries through a real Kong run as the image runs it. This test keeps what only
 * plain nginx can show: the raw lines, key included, that the filter has to clean.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../harness/real-kong';
import { rawText } from './helpers/raw-text';

const ROOT = path.resolve(__dirname, '..');
const NGINX = '/usr/sbin/nginx';
const CANARY = 'CANARYKEY';

const raw = (port: number, request: string) => rawText(port, request, 5000);

async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not listen on ${port}`);
}

const readLines = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 60 && !condition(); i++) await new Promise((r) => setTimeout(r, 50));
}

interface Run {
  stdout: string;
  stderr: string;
  rawAccess: string;
  rawError: string;
  answers: Record<string, string>;
}

async function runNginxThroughEntrypoint(): Promise<Run> {
  const prefix = mkdtempSync(path.join(os.tmpdir(), 'kong-logs-'));
  const port = await freePort();
  const deadPort = await freePort();
  const runAs = os.userInfo().username;
  writeFileSync(
    path.join(prefix, 'nginx.conf'),
    `
${runAs === 'root' ? 'user root root;' : ''}
daemon off;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/raw-error.log info;
error_log /dev/stderr info;
events { worker_connections 64; }
http {
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  # Kong's lua-kong-nginx-module provides $kong_request_id; plain nginx has $request_id.
  map $request_id $kong_request_id { default $request_id; }
  include ${ROOT}/gateway/kong/nginx-http-jobs.conf;
  server {
    listen 127.0.0.1:${port};
    server_name kong;
    # As kong/templates/nginx_kong.lua routes nginx's own errors to Kong's error handler.
    error_page 400 404 405 408 411 412 413 414 417 /kong_error_handler;
    error_page 494 =494                            /kong_error_handler;
    error_page 500 502 503 504                     /kong_error_handler;
    access_log ${prefix}/raw-access.log jobs_safe;
    access_log /dev/stdout jobs_safe;
    client_max_body_size 1k;
    location / {
      proxy_pass http://127.0.0.1:${deadPort};
    }
    location = /kong_error_handler {
      internal;
      return 200 "kong error handler\\n";
    }
  }
}
`,
  );

  const child: ChildProcess = spawn(
    'bash',
    [
      path.join(ROOT, 'gateway/kong/entrypoint.sh'),
      NGINX,
      '-p',
      prefix,
      '-e',
      '/dev/stderr',
      '-c',
      path.join(prefix, 'nginx.conf'),
    ],
    {
      env: {
        ...process.env,
        KONG_REDACT_NEXT: '/usr/bin/env',
        KONG_REDACT_LUA: 'lua5.1',
        KONG_REDACT_FILTER: path.join(ROOT, 'gateway/kong/redact-keys.lua'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const closed = new Promise<void>((resolve) => {
    let open = 2;
    const done = () => --open === 0 && resolve();
    child.stdout!.on('close', done);
    child.stderr!.on('close', done);
  });

  const answers: Record<string, string> = {};
  try {
    await waitForPort(port);
    const host = `Host: 127.0.0.1:${port}\r\nConnection: close\r\n`;
    answers.query = await raw(port, `GET /api/v1/jobs?status=active&api_key=${CANARY}-query HTTP/1.1\r\n${host}\r\n`);
    answers.encoded = await raw(port, `GET /api/v1/jobs?page=2&api%5Fkey=${CANARY}-encoded HTTP/1.1\r\n${host}\r\n`);
    answers.header = await raw(port, `GET /api/v1/jobs/42 HTTP/1.1\r\n${host}X-API-Key: ${CANARY}-header\r\n\r\n`);
    answers.referrer = await raw(
      port,
      `GET /api/v1/jobs HTTP/1.1\r\n${host}Referer: https://partner.example/search?api_key=${CANARY}-referrer\r\n\r\n`,
    );
    answers.trace = await raw(port, `TRACE /api/v1/jobs?api_key=${CANARY}-trace HTTP/1.1\r\n${host}\r\n`);
    answers.tooLarge = await raw(
      port,
      `POST /api/v1/jobs?api_key=${CANARY}-large HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n${'x'.repeat(4096)}`,
    );
    answers.malformed = await raw(port, `GET /api/v1/jobs?api_key=${CANARY}-bad line HTTP/1.1\r\n${host}\r\n`);
    // nginx writes a request's access log line after its lingering close: wait for all seven.
    await waitFor(() => readLines(path.join(prefix, 'raw-access.log')).length >= 7);
  } finally {
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, 10000)))]);
    clearTimeout(timer);
  }
  const run: Run = {
    stdout,
    stderr,
    rawAccess: readFileSync(path.join(prefix, 'raw-access.log'), 'utf8'),
    rawError: readFileSync(path.join(prefix, 'raw-error.log'), 'utf8'),
    answers,
  };
  rmSync(prefix, { recursive: true, force: true });
  return run;
}

const status = (answer: string | undefined) => /^HTTP\/1\.1 (\d{3})/.exec(answer ?? '')?.[1];

describe('Kong logs never hold an API key (real nginx, canary keys)', () => {
  let run: Run;

  beforeAll(async () => {
    const version = spawnSync(NGINX, ['-v'], { encoding: 'utf8' });
    if (version.status !== 0) throw new Error(`${NGINX} is missing: install the nginx-light package (see README)`);
    run = await runNginxThroughEntrypoint();
  }, 30000);

  test('nginx answered each canary request as expected (502 dead upstream, 405 TRACE, 413, 400)', () => {
    expect(status(run.answers.query)).toBe('502');
    expect(status(run.answers.encoded)).toBe('502');
    expect(status(run.answers.header)).toBe('502');
    expect(status(run.answers.referrer)).toBe('502');
    // nginx refuses TRACE itself, before any location (and so before Kong's Lua), with 405; the
    // error_page sends it to Kong's error handler like any other nginx error.
    expect(status(run.answers.trace)).toBe('405');
    expect(status(run.answers.tooLarge)).toBe('413');
    expect(status(run.answers.malformed)).toBe('400');
  });

  test("nginx's own error log quotes the raw request line, key included (the threat)", () => {
    expect(run.rawError).toContain(`request: "GET /api/v1/jobs?status=active&api_key=${CANARY}-query HTTP/1.1"`);
    expect(run.rawError).toContain(`${CANARY}-large`);
    expect(run.rawError).toContain(`${CANARY}-referrer`);
  });

  test('the jobs_safe access log format never writes the query string or a key header', () => {
    expect(run.rawAccess).not.toContain(CANARY);
    const lines = run.rawAccess
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(7);
    for (const line of lines) {
      // An unparsable request line (the 400) has no path at all.
      expect(line.path).toMatch(line.status === 400 ? /^$/ : /^\/api\/v1\/jobs(\/42)?$/);
      expect(line.request_id).toMatch(/^[0-9a-f]{32}$/);
    }
    // Kong's own errors are served through /kong_error_handler (a GET redirect); the log keeps the
    // path and the method the client sent.
    expect(lines.map((l) => [l.method, l.status])).toEqual(
      expect.arrayContaining([
        ['GET', 502],
        ['TRACE', 405],
        ['POST', 413],
        ['GET', 400],
      ]),
    );
  });

  test('through the entrypoint, neither stdout nor stderr carries a canary key', () => {
    expect(run.stdout).not.toContain(CANARY);
    expect(run.stderr).not.toContain(CANARY);
  });

  test('the redacted logs keep what an operator needs: paths, statuses, request ids, the error itself', () => {
    expect(run.stderr).toContain('request: "GET /api/v1/jobs?[REDACTED] HTTP/1.1"');
    expect(run.stderr).toContain('connect() failed');
    expect(run.stderr).toContain('client intended to send too large body');
    const access = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(access.map((l) => l.path)).toEqual(expect.arrayContaining(['/api/v1/jobs', '/api/v1/jobs/42']));
    expect(access.every((l) => typeof l.request_id === 'string' && l.request_id.length === 32)).toBe(true);
  });
});
