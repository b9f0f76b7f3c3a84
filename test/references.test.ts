/**
 * Every path of this repository named in a comment, a string or a document exists: a reference
 * to a file that was moved or deleted sends a reader nowhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
// The top-level entries a reference may start with; anything else (Kong's or Node's own sources, URLs) is not ours to check.
const TOP = new Set(
  readdirSync(ROOT)
    .filter((name) => !name.startsWith('.') || name === '.ci')
    .filter((name) => name !== 'node_modules' && name !== 'dist'),
);
const SKIP_DIRS = new Set([
  'node_modules',
  'dist',
  '.git',
  'migrations',
  'results',
  'reports',
  'coverage',
  '.stryker-tmp',
]);
const TEXT = /\.(ts|js|cjs|mjs|lua|sh|md|yaml|yml|conf|json)$|^Dockerfile$|^run$/;

function files(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : files(rel);
    return TEXT.test(entry.name) && !entry.name.endsWith('openapi.json') && !entry.name.endsWith('package-lock.json')
      ? [rel]
      : [];
  });
}

// A path with a directory and a file name with an extension, not part of a URL or a longer path.
const PATH = /(?<![\w./:@-])((?:[\w.-]+\/)+[\w.-]+\.[a-z]{1,5})(?![\w/])/g;

// In code, the comments: a `//`, `#` or `--` comment, or a line of a block comment.
const COMMENT = /(?:^|\s)(?:\/\/|#|--)\s.*$|^\s*(?:\/\*+|\*).*$/gm;

/** The paths a file names: anywhere in a document, in the comments of code. */
function references(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const read = /\.(md|json)$/.test(file) ? text : (text.match(COMMENT) ?? []).join('\n');
  return [...read.matchAll(PATH)].map((match) => match[1]!).filter((ref) => !ref.startsWith('bench/results/'));
}

// A compiled file is named by its .js; its source is the .ts beside it.
const exists = (place: string) =>
  existsSync(path.join(ROOT, place)) ||
  (place.endsWith('.js') && existsSync(path.join(ROOT, place.replace(/\.js$/, '.ts'))));

const SOURCES = [...TOP].filter((name) => statSync(path.join(ROOT, name)).isDirectory()).flatMap(files);
const ROOT_FILES = [...TOP].filter(
  (name) => statSync(path.join(ROOT, name)).isFile() && TEXT.test(name) && name !== 'package-lock.json',
);

test('the scan reads the documents and the code', () => {
  expect(SOURCES).toEqual(
    expect.arrayContaining(['docs/decisions.md', 'service/app.ts', 'gateway/plugins/job-scopes/handler.lua']),
  );
  expect(ROOT_FILES).toEqual(expect.arrayContaining(['README.md', 'Dockerfile']));
});

// Every folder of ours by its name: `middleware/json-body.ts` may be written from inside service/.
const DIRS = new Map<string, string[]>();
for (const file of SOURCES) {
  for (let dir = path.dirname(file); dir !== '.'; dir = path.dirname(dir))
    DIRS.set(path.basename(dir), [...new Set([...(DIRS.get(path.basename(dir)) ?? []), dir])]);
}
// Kong's own source tree is cited as kong/...: not ours, though gateway/kong/ is.
const FOREIGN = new Set(['kong']);

/** Where a reference may point: from the root when it starts with a top-level name, else under a folder of ours of its first name. */
function candidates(ref: string): string[] | undefined {
  const [first, ...rest] = ref.split('/');
  if (TOP.has(first!)) return [ref];
  if (FOREIGN.has(first!)) return undefined;
  return DIRS.get(first!)?.map((dir) => path.join(dir, ...rest));
}

test('no document or source names a file of this repository that does not exist', () => {
  const dangling = [...SOURCES, ...ROOT_FILES].flatMap((file) =>
    references(file)
      .filter((ref) => {
        const places = candidates(ref);
        return places !== undefined && !places.some(exists);
      })
      .map((ref) => `${file} -> ${ref}`),
  );
  expect([...new Set(dangling)]).toEqual([]);
});
