import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const COMPOSE = path.resolve(__dirname, '..', '..', 'docker-compose.yml');

/** Runs compose's webhook-dispatcher health check (its node -e script, after compose's $$ unescaping) against `metricsUrl`: 0 passes. */
export function dispatcherHealthCheck(metricsUrl: string): Promise<number | null> {
  const test: string[] = parse(readFileSync(COMPOSE, 'utf8')).services['webhook-dispatcher'].healthcheck.test;
  if (test.slice(0, 3).join(' ') !== 'CMD node -e')
    throw new Error(`compose's dispatcher health check is not a node -e script: ${JSON.stringify(test)}`);
  const script = test[3]!.replaceAll('$$', '$').replace('http://127.0.0.1:9465/metrics', metricsUrl);
  if (!script.includes(metricsUrl)) throw new Error('the health check does not read http://127.0.0.1:9465/metrics');
  // Not spawnSync: the metrics server answering it may run in the calling process.
  return new Promise((resolve) =>
    execFile(process.execPath, ['-e', script], { timeout: 10_000 }, (error) =>
      resolve(error ? ((error as { code?: number }).code ?? null) : 0),
    ),
  );
}
