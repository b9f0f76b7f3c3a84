/**
 * The house's floors: domain/ imports nothing of ours, db/ only domain/, service/ only those two;
 * and no import circle anywhere in the code, type-only imports included.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const CODE = ['domain', 'db', 'service', 'gateway/local', 'scripts', 'tools', 'bench', 'examples'];

function files(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'results' ? [] : files(rel);
    return /\.ts$/.test(entry.name) ? [rel] : [];
  });
}

const IMPORT = /(?:from\s+|import\s*\(\s*|require\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The files of ours a file imports, resolved as TypeScript resolves them. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].flatMap((match) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1]!));
    const found = [`${target}.ts`, target, `${target}/index.ts`].find((candidate) => existsSync(path.join(ROOT, candidate)) && statSync(path.join(ROOT, candidate)).isFile());
    return found ? [found] : [];
  });
}

const GRAPH = new Map(CODE.flatMap(files).map((file) => [file, importsOf(file)]));
const layer = (file: string) => CODE.find((dir) => file.startsWith(`${dir}/`)) ?? file.split('/')[0]!;

test('the graph is read', () => {
  expect(GRAPH.get('service/app.ts')).toEqual(expect.arrayContaining(['service/jobs/http/router.ts', 'db/client.ts']));
});

test.each([
  ['domain', ['domain']],
  ['db', ['domain', 'db']],
  ['service', ['domain', 'db', 'service']],
])('%s/ imports only from %j', (dir, allowed) => {
  const upward = [...GRAPH]
    .filter(([file]) => layer(file) === dir)
    .flatMap(([file, imports]) => imports.filter((target) => !allowed.includes(layer(target))).map((target) => `${file} -> ${target}`));
  expect(upward).toEqual([]);
});

test('no import circle', () => {
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') {
      circles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
      return;
    }
    state.set(file, 'open');
    for (const target of GRAPH.get(file) ?? []) visit(target, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of GRAPH.keys()) visit(file, []);
  expect(circles).toEqual([]);
});
