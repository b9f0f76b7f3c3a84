/**
 * The service image keeps only `dependencies` (the Dockerfile prunes dev ones) and runs the compiled
 * domain/, service/, dispatcher/ and db/: every package their code loads must be a production dependency.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const IMAGE_SOURCES = ['domain', 'service', 'dispatcher', 'db'];

/** The packages a file loads at run time: value imports, re-exports and requires (type-only imports are erased). */
function packagesLoadedBy(source: string): string[] {
  const specifiers = [
    ...[...source.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[\s\S]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)].map(
      (m) => m[1]!,
    ),
    ...[...source.matchAll(/\brequire\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!),
  ];
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s.split('/')[0]!))
    .map((s) =>
      s
        .split('/')
        .slice(0, s.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

test("every package the image's code loads is a production dependency", () => {
  const { dependencies } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const missing = new Set<string>();
  for (const dir of IMAGE_SOURCES) {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = path.join(entry.parentPath, entry.name);
      for (const name of packagesLoadedBy(readFileSync(file, 'utf8')))
        if (!(name in dependencies)) missing.add(`${name} (${path.relative(ROOT, file)})`);
    }
  }
  expect([...missing]).toEqual([]);
});

test('type-only imports are not counted; value imports, subpaths and scoped names are', () => {
  const source = [
    "import type { Context } from 'koa';",
    "import { Agent, type Dispatcher } from 'undici';",
    "import {\n  eq,\n} from 'drizzle-orm/mysql2';",
    "import Router from '@koa/router';",
    "import { x } from './local';",
    "import http from 'node:http';",
  ].join('\n');
  expect(packagesLoadedBy(source)).toEqual(['undici', 'drizzle-orm', '@koa/router']);
});
