/**
 * The house's floors: domain/ imports nothing of ours, db/ only domain/, service/ only those two,
 * dispatcher/ (a process beside the service) those three; and no import circle anywhere in the code,
 * type-only imports included.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const CODE = [
  'domain',
  'db',
  'service',
  'dispatcher',
  'gateway/local',
  'scripts',
  'tools',
  'bench',
  'harness',
  'examples',
];

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
    const found = [`${target}.ts`, target, `${target}/index.ts`].find(
      (candidate) => existsSync(path.join(ROOT, candidate)) && statSync(path.join(ROOT, candidate)).isFile(),
    );
    return found ? [found] : [];
  });
}

const GRAPH = new Map(CODE.flatMap(files).map((file) => [file, importsOf(file)]));
const layer = (file: string) => CODE.find((dir) => file.startsWith(`${dir}/`)) ?? file.split('/')[0]!;

test('the graph is read', () => {
  expect(GRAPH.get('service/app.ts')).toEqual(expect.arrayContaining(['service/http/router.ts', 'db/client.ts']));
  expect(GRAPH.get('service/webhooks/routes/create-webhook.ts')).toEqual(
    expect.arrayContaining(['service/http/route.ts', 'service/webhooks/contract.ts']),
  );
});

test.each([
  ['domain', ['domain']],
  ['db', ['domain', 'db']],
  ['service', ['domain', 'db', 'service']],
  ['dispatcher', ['domain', 'db', 'service', 'dispatcher']],
])('%s/ imports only from %j', (dir, allowed) => {
  const upward = [...GRAPH]
    .filter(([file]) => layer(file) === dir)
    .flatMap(([file, imports]) =>
      imports.filter((target) => !allowed.includes(layer(target))).map((target) => `${file} -> ${target}`),
    );
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

// Inside service/: the features are siblings over one HTTP core; what assembles the API (api/, app, server) sits above both.
const FEATURES = ['service/jobs/', 'service/webhooks/'];
// What lies below both features: the HTTP core and the service's leaf modules.
const BELOW_FEATURES = [
  'service/http/',
  'service/errors.ts',
  'service/headers.ts',
  'service/logger.ts',
  'service/config.ts',
  'service/metrics-server.ts',
  'service/process.ts',
  'service/feed-history.ts',
];
const below = (target: string) =>
  ['domain', 'db'].includes(layer(target)) || BELOW_FEATURES.some((place) => target.startsWith(place));

test.each(FEATURES)(
  '%s imports only its own files, the HTTP core, the leaf modules, db/ and domain/: never the other feature, never what assembles the API',
  (feature) => {
    const wrong = [...GRAPH]
      .filter(([file]) => file.startsWith(feature))
      .flatMap(([file, imports]) =>
        imports
          .filter((target) => !target.startsWith(feature) && !below(target))
          .map((target) => `${file} -> ${target}`),
      );
    expect(wrong).toEqual([]);
  },
);

test('service/http/ (the HTTP core) imports neither feature nor what assembles the API', () => {
  const wrong = [...GRAPH]
    .filter(([file]) => file.startsWith('service/http/'))
    .flatMap(([file, imports]) =>
      imports
        .filter(
          (target) =>
            layer(target) === 'service' &&
            (FEATURES.some((feature) => target.startsWith(feature)) ||
              target.startsWith('service/api/') ||
              ['service/app.ts', 'service/server.ts'].includes(target)),
        )
        .map((target) => `${file} -> ${target}`),
    );
  expect(wrong).toEqual([]);
});

test('bench/ imports nothing from test/', () => {
  const wrong = [...GRAPH]
    .filter(([file]) => file.startsWith('bench/'))
    .flatMap(([file]) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      return [...text.matchAll(IMPORT)]
        .filter((match) =>
          path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1]!)).startsWith('test/'),
        )
        .map((match) => `${file} -> ${match[1]}`);
    });
  expect(wrong).toEqual([]);
});

// The bench measures the service as a process it starts: were it to import the service's code, that code could not change freely.
test('bench/ imports nothing from service/ or db/', () => {
  const wrong = [...GRAPH]
    .filter(([file]) => file.startsWith('bench/'))
    .flatMap(([file, imports]) =>
      imports.filter((target) => ['service', 'db'].includes(layer(target))).map((target) => `${file} -> ${target}`),
    );
  expect(wrong).toEqual([]);
});
