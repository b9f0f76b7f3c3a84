/**
 * The documents are the stack: the secrets a compose start needs, the ports it publishes, and the
 * dispatcher's health check, each read from docker-compose.yml and checked against what the
 * documents say or against a running process.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Registry } from 'prom-client';
import { parse } from 'yaml';
import { DATABASE_UP_GAUGES, watchDatabase } from '../db/reachability';
import { createLogger } from '../service/logger';
import { serveMetrics } from '../service/metrics-server';
import { dispatcherHealthCheck } from './helpers/dispatcher-health';
import { testServerUrl } from './helpers/server';

const ROOT = path.join(__dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const composeText = read('docker-compose.yml');
const compose = parse(composeText, { merge: true });

/** Every variable compose refuses to start without: the `${VAR:?...}` forms. */
const requiredSecrets = () => new Set([...composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((m) => m[1]!));

/** The secrets docs/operations.md's compose section exports: `X="$(openssl rand ...)"`. */
function exportedIn(text: string): Set<string> {
  return new Set([...text.matchAll(/\b([A-Z][A-Z0-9_]*)="\$\(openssl rand/g)].map((m) => m[1]!));
}

/** The secrets gateway/README.md lists after "Compose refuses to start without any of these N:". */
function listedInGatewayReadme(text: string): { count: string; names: Set<string> } {
  const match = /Compose refuses to\s+start without any of these (\w+):([^.]*)\./.exec(text);
  if (!match) return { count: '', names: new Set() };
  return { count: match[1]!, names: new Set([...match[2]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!)) };
}

const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

describe('the secrets a compose start needs', () => {
  test('compose requires six, WEBHOOK_SECRETS_KEY among them', () => {
    expect([...requiredSecrets()].sort()).toEqual([
      'GATEWAY_SECRET',
      'KONG_PG_PASSWORD',
      'MARIADB_PASSWORD',
      'MARIADB_ROOT_PASSWORD',
      'REDIS_PASSWORD',
      'WEBHOOK_SECRETS_KEY',
    ]);
  });

  test.each([
    ['docs/operations.md', () => exportedIn(read('docs/operations.md'))],
    ["docker-compose.yml's own header", () => exportedIn(composeText)],
    ['gateway/README.md', () => listedInGatewayReadme(read('gateway/README.md')).names],
  ])('%s names exactly those', (_doc, named) => {
    expect([...named()].sort()).toEqual([...requiredSecrets()].sort());
  });

  test('the counts in words agree', () => {
    const count = WORDS[requiredSecrets().size];
    expect(listedInGatewayReadme(read('gateway/README.md')).count).toBe(count);
    expect(read('docs/operations.md')).toContain(`${count} secrets exported`);
  });

  test('the check fails when compose gains a secret the documents lack', () => {
    const grown = `${composeText}\n  x:\n    environment:\n      NEW_SECRET: \${NEW_SECRET:?set NEW_SECRET}\n`;
    const required = new Set([...grown.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((m) => m[1]!));
    expect([...exportedIn(read('docs/operations.md'))].sort()).not.toEqual([...required].sort());
  });
});

test("every port compose publishes is in gateway/README.md's list, and none else is", () => {
  const published: string[] = Object.values(compose.services as Record<string, { ports?: string[] }>).flatMap(
    (service) => (service.ports ?? []).map((port) => port.replace(/\/tcp$/, '').replace(/:\d+$/, '')),
  );
  const sentence = /Ports on the host:([\s\S]*?)Nothing else is published\./.exec(read('gateway/README.md'))![1]!;
  const listed = [...sentence.matchAll(/`((?:127\.0\.0\.1:)?\d+)`/g)].map((m) => m[1]!);
  expect(listed.sort()).toEqual(published.sort());
});

test('PUBLIC_URL reaches the service in compose', () => {
  expect(compose.services['jobs-service-1'].environment.PUBLIC_URL).toBe('${PUBLIC_URL:-http://127.0.0.1:8000}');
});

describe("the dispatcher's compose health check", () => {
  test.each([
    ['passes while the database answers', () => testServerUrl(), 0],
    ['fails while it cannot be reached', () => 'mysql://root@127.0.0.1:9/jobs', 1],
  ])('%s', async (_what, url, expected) => {
    const registry = new Registry();
    const tracker = watchDatabase({
      url: url(),
      logger: createLogger('silent'),
      registry,
      gauge: DATABASE_UP_GAUGES.dispatcher,
    });
    const server = await serveMetrics(registry, 0, '127.0.0.1');
    try {
      // The first scrape asks the database; the check reads what it found.
      await (await fetch(server.url)).text();
      expect(await dispatcherHealthCheck(server.url)).toBe(expected);
    } finally {
      tracker.stop();
      await server.close();
    }
  });
});
