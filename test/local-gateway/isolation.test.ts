/**
 * The local gateway is a development stand-in for Kong: the service and the database code never
 * load it or its HTTP client, and its client is not a production dependency (the service image
 * runs `npm prune --omit=dev`; .dockerignore and the Dockerfile keep gateway/local out).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support';

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

test('service/ and db/ import nothing from gateway/ and never undici', () => {
  const offenders = [...sources('service'), ...sources('db')].filter((file) =>
    /from\s+['"](?:[./]*gateway\/|undici)|require\(['"](?:[./]*gateway\/|undici)/.test(readFileSync(file, 'utf8')),
  );
  expect(offenders.map((f) => path.relative(ROOT, f))).toEqual([]);
});

test('undici (the local gateway\'s upstream client) is a development dependency only', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
  expect(pkg.dependencies?.undici).toBeUndefined();
  expect(pkg.devDependencies?.undici).toBeDefined();
});
