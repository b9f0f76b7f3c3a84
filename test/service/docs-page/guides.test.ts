/**
 * The guides partners read on /docs are docs/guides/*.md, and nothing else holds a copy: the
 * OpenAPI description is made of them, docs/partners.md links them, their numbers are kong.yaml's,
 * their shell loop runs as shown, the image carries them, and no project document links outside
 * the repository.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { GUIDES, GUIDES_DIR } from '../../../service/api/guides';
import { openApiDocument } from '../../../service/api/openapi';
import { ROUTES } from '../../../service/api/routes';
import { loadConfig } from '../../../service/config';
import { renderOpenApi } from '../../../scripts/openapi';
import { startStack, type Stack } from '../../e2e/support';
import type { Parsed } from '../../helpers/parsed';

const ROOT = path.join(__dirname, '..', '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const committed = JSON.parse(read('docs/openapi.json'));

// What a partner needs before the first request, in the order the page shows it.
const HEADINGS = [
  'Authentication',
  'Scopes',
  'Errors',
  'Rate limits',
  'Pagination',
  'Keeping a mirror',
  'Webhooks: changes pushed to you',
  'Idempotent creates',
  'Compression',
  'Versioning',
];

describe('one source', () => {
  test("the document's description is the guide files, whole and in order, after one paragraph (their facts at the default settings)", () => {
    expect(GUIDES.map((g) => g.title)).toEqual(HEADINGS);
    const description: string = committed.info.description;
    const parts = description.split('\n\n## ');
    expect(parts).toHaveLength(HEADINGS.length + 1);
    expect(parts[0]).toContain('`X-API-Key`');
    const files = GUIDES.map((g) => readFileSync(path.join(GUIDES_DIR, g.file), 'utf8').trimEnd()).join('\n\n');
    expect(description.slice(parts[0]!.length + 2)).toBe(files.replace(/<!--fact:\w+-->(.*?)<!--\/fact-->/g, '$1'));
  });

  test('docs/partners.md links every guide and repeats none of their lines', () => {
    const partners = read('docs/partners.md');
    for (const guide of GUIDES) expect(partners).toContain(`(guides/${guide.file})`);
    const partnerLines = new Set(partners.split('\n').map((l) => l.trim()));
    const copied = GUIDES.flatMap((g) =>
      g.text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.length > 50 && partnerLines.has(l)),
    );
    expect(copied).toEqual([]);
  });

  test("production's served document lists the configured public address first", () => {
    const servers = openApiDocument(ROUTES, {
      webhooks: loadConfig({}).webhooks,
      publicUrl: 'https://jobs-api.example.org',
    }).servers;
    expect(servers.map((s) => s.url)).toEqual(['https://jobs-api.example.org', 'http://127.0.0.1:8000']);
    // Generated without PUBLIC_URL: a placeholder for the production host, then npm start's gateway.
    expect(committed.servers.map((s: { url: string }) => s.url)).toEqual([
      'https://{gateway}',
      'http://127.0.0.1:8000',
    ]);
    expect(committed.servers[0].variables.gateway.default).toBe('jobs-api.example.org');
    expect(renderOpenApi('https://jobs.example.net')).toContain('"url": "https://jobs.example.net"');
    // npm start's own document (PUBLIC_URL is its gateway): that gateway alone, where "Try it out" works.
    const local = openApiDocument(ROUTES, { webhooks: loadConfig({}).webhooks, publicUrl: 'http://127.0.0.1:8000' });
    expect(local.servers.map((s) => s.url)).toEqual(['http://127.0.0.1:8000']);
  });
});

test("the Rate limits guide states kong.yaml's limits", () => {
  const state = parse(read('kong.yaml'));
  const limits = (route: string) => {
    const r = state.services.flatMap((s: Parsed) => s.routes).find((x: Parsed) => x.name === route);
    const { minute, hour } = r.plugins.find((p: Parsed) => p.name === 'job-rate-limits').config;
    return [minute, hour ?? null];
  };
  const guide = GUIDES.find((g) => g.title === 'Rate limits')!.text;
  const row = (start: string) => {
    const line = guide.split('\n').find((l) => l.startsWith(`| ${start}`));
    if (!line) throw new Error(`no row starting "${start}"`);
    return line
      .split('|')
      .slice(2, 4)
      .map((cell) => (cell.trim() === '' ? null : Number(cell.trim())));
  };
  expect(row('reads')).toEqual(limits('jobs-read'));
  expect(row('creates')).toEqual(limits('jobs-write'));
  expect(row('any other method')).toEqual(limits('jobs-other-methods'));
  expect(row('reading your webhook')).toEqual(limits('webhooks-read'));
  expect(row('managing them')).toEqual(limits('webhooks-manage'));
  expect(row('this page')).toEqual(limits('jobs-docs'));
  const authGuard = state.services[0].plugins.find((p: Parsed) => p.name === 'auth-guard').config.limit;
  expect(GUIDES.find((g) => g.title === 'Authentication')!.text).toContain(
    `After ${authGuard} failed keys in one clock minute`,
  );
});

test('the service image carries the guides the document is built from', () => {
  expect(read('Dockerfile')).toMatch(/^COPY docs\/guides \.\/docs\/guides$/m);
  const ignore = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim());
  expect(ignore.indexOf('!docs/guides/*.md')).toBeGreaterThan(ignore.indexOf('**/*.md'));
});

test('no project document links outside the repository; what partners and newcomers read names no path outside it', () => {
  const documents = execFileSync('git', ['ls-files', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  const outside: string[] = [];
  for (const doc of documents) {
    const text = read(doc);
    if (/^(README\.md|docs\/partners\.md|docs\/guides\/)/.test(doc) && text.includes('../')) {
      outside.push(
        ...text
          .split('\n')
          .filter((l) => /\.\.\/(?!examples\/)/.test(l))
          .map((l) => `${doc}: ${l.trim()}`),
      );
    }
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|#|mailto:)/.test(target!)) continue;
      const resolved = path.resolve(ROOT, path.dirname(doc), target!.split('#')[0]!);
      if (!resolved.startsWith(`${ROOT}${path.sep}`) || !existsSync(resolved)) outside.push(`${doc}: ${target}`);
    }
  }
  expect(outside).toEqual([]);
});

describe("the Keeping a mirror guide's shell loop", () => {
  let stack: Stack;
  let dir: string;
  beforeAll(async () => {
    // Webhooks as npm start has them: a secrets key, and http to loopback for the guide's receiver.
    stack = await startStack('docs_guides_loop', {
      webhooks: {
        ...loadConfig({
          WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
          WEBHOOK_ALLOW_HTTP: 'true',
          WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32',
          WEBHOOK_TIMEOUT_MS: '1000',
          WEBHOOK_LEASE_MS: '2000',
        }).webhooks,
      },
    });
    dir = mkdtempSync(path.join(os.tmpdir(), 'guide-loop-'));
  }, 60000);
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('runs under set -euo pipefail: a full sync, then an incremental poll', async () => {
    const guide = GUIDES.find((g) => g.title === 'Keeping a mirror')!.text;
    const script = /```sh\n([\s\S]*?)```/.exec(guide)![1]!;
    expect(script).toContain('set -euo pipefail');
    // Asynchronously: the stack answers from this process.
    const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn('bash', ['-c', script.replace('http://127.0.0.1:8000', stack.url)], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('close', (status) => resolve({ status, stderr }));
    });
    expect([run.status, run.stderr]).toEqual([0, '']);
    const lines = readFileSync(path.join(dir, 'mirror-updates.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const listed = await fetch(`${stack.url}/api/v1/jobs?status=active,open,paused,closed&limit=1`, {
      headers: { 'X-API-Key': 'demo-reader-2f6c1a9e' },
    });
    expect(new Set(lines.map((j) => j.id)).size).toBe(((await listed.json()) as Parsed).meta.total);
    // The incremental request was made and answered (its headers saved).
    expect(readFileSync(path.join(dir, 'head.txt'), 'utf8')).toMatch(/^HTTP\/1\.1 200/);
  }, 90000);

  test('every other command the guides show runs as shown, each request answered 2xx', async () => {
    const blocks = GUIDES.flatMap((g) =>
      [...g.text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => [g.title, m[1]!] as const),
    ).filter(([title]) => title !== 'Keeping a mirror');
    expect(blocks.map(([title]) => title)).toEqual([
      'Authentication',
      'Pagination',
      'Webhooks: changes pushed to you',
      'Idempotent creates',
    ]);
    for (const [title, block] of blocks) {
      // curl fails on a 4xx or 5xx here, so a command that only prints an error body fails the test.
      const script = `set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n${block.replaceAll('http://127.0.0.1:8000', stack.url)}`;
      const run = await new Promise<{ status: number | null; out: string; err: string }>((resolve) => {
        const child = spawn('bash', ['-c', script], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.once('close', (status) => resolve({ status, out, err }));
      });
      expect([title, run.status, run.err]).toEqual([title, 0, '']);
      // Each prints JSON: a job, a page, a created job, or the subscription as changed.
      expect([title, typeof JSON.parse(run.out.trim().split('\n').at(-1)!)]).toEqual([title, 'object']);
    }
    // The guide's subscription: at the position given, tested (the attempt listed), its event types changed.
    const [webhook] = (
      (await (
        await fetch(`${stack.url}/api/v1/webhooks`, { headers: { 'X-API-Key': 'demo-reader-2f6c1a9e' } })
      ).json()) as Parsed
    ).data;
    expect(webhook).toMatchObject({ url: 'http://127.0.0.1:9000/hooks', eventTypes: ['job.removed'] });
    expect(readFileSync(path.join(dir, 'webhook-secret.txt'), 'utf8')).toMatch(/^whsec_/);
    const attempts = (
      (await (
        await fetch(`${stack.url}/api/v1/webhooks/${webhook.id}/attempts`, {
          headers: { 'X-API-Key': 'demo-reader-2f6c1a9e' },
        })
      ).json()) as Parsed
    ).data;
    expect(attempts).toHaveLength(1);
  }, 90000);
});
