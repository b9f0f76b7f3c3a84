/**
 * No dead exports: every name a source file exports is used, by another file (source, bench, tools or
 * tests) or by its own (a type in an exported signature). An export nothing uses is code nobody runs,
 * or a second copy waiting to drift. The same of the members of exported interfaces and classes: each
 * is read somewhere (`.name`, `['name']`, or a destructuring).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const SOURCES = [
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
const USERS = [...SOURCES, 'test'];

function files(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'results' ? [] : files(rel);
    return /\.ts$/.test(entry.name) ? [rel] : [];
  });
}

const EXPORT =
  /^export\s+(?:declare\s+)?(?:async\s+)?(?:const|let|function\*?|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;
const text = new Map(USERS.flatMap(files).map((file) => [file, readFileSync(path.join(ROOT, file), 'utf8')]));

/** Every exported name with the file that declares it. */
export function exportsOf(sources: string[]): Array<{ file: string; name: string }> {
  return sources.flatMap((file) => [...text.get(file)!.matchAll(EXPORT)].map((match) => ({ file, name: match[1]! })));
}

test('the scan sees exports and their users', () => {
  expect(exportsOf(['service/errors.ts']).map(({ name }) => name)).toContain('MESSAGES');
});

test('every exported name is used somewhere besides its declaration', () => {
  const all = [...text.values()];
  const dead = exportsOf(SOURCES.flatMap(files)).filter(({ file, name }) => {
    const word = new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g');
    const own = text.get(file)!;
    const once = new RegExp(word.source);
    return (own.match(word) ?? []).length < 2 && !all.some((other) => other !== own && once.test(other));
  });
  expect(dead.map(({ file, name }) => `${file}: ${name}`)).toEqual([]);
});

// Members read without being named: written out whole as JSON.
const READ_WHOLE = new Set([
  'bench/measure.ts: Measurement.good', // a field of the bench's results file
]);

const BLOCK = /^export\s+(?:interface|class)\s+(\w+)[^{]*\{\n([\s\S]*?)^\}/gm;
const MEMBER = /^ {2}(?:(?:readonly|private|public|protected|static|async|override)\s+)*(\w+)\??(?:\(|:|<| =)/gm;
// Template literals' ${...} as parentheses, so a destructuring with a template default still reads as one.
const code = [...text.values()].join('\n').replace(/\$\{([^{}]*)\}/g, ' ($1) ');

/** Every member of an exported interface or class, with its file. */
export function membersOf(sources: string[]): Array<{ file: string; owner: string; name: string }> {
  return sources.flatMap((file) =>
    [...text.get(file)!.matchAll(BLOCK)].flatMap(([, owner, body]) =>
      [...body!.matchAll(MEMBER)]
        .map((match) => ({ file, owner: owner!, name: match[1]! }))
        .filter(({ name }) => name !== 'constructor'),
    ),
  );
}

test("the member scan sees interfaces' and classes' members", () => {
  expect(membersOf(['service/http/route.ts']).map(({ owner, name }) => `${owner}.${name}`)).toEqual(
    expect.arrayContaining(['Route.operationId', 'ResponseSpec.headers']),
  );
});

test('every member of an exported interface or class is read somewhere', () => {
  const dead = membersOf(SOURCES.flatMap(files)).filter(({ file, owner, name }) => {
    const read = new RegExp(
      `\\??\\.${name}(?![\\w$])|\\[['"]${name}['"]\\]|\\{[^{}]*(?<![\\w$])${name}(?![\\w$])[^{}]*\\}\\s*(?:=[^=>]|:|\\))`,
    );
    return !READ_WHOLE.has(`${file}: ${owner}.${name}`) && !read.test(code);
  });
  expect(dead.map(({ file, owner, name }) => `${file}: ${owner}.${name}`)).toEqual([]);
});
