/**
 * No dead exports: every name a source file exports is used, by another file (source, bench, tools or
 * tests) or by its own (a type in an exported signature). An export nothing uses is code nobody runs,
 * or a second copy waiting to drift.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const SOURCES = ['domain', 'db', 'service', 'gateway/local', 'scripts', 'tools', 'bench', 'harness', 'examples'];
const USERS = [...SOURCES, 'test'];

function files(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'results' ? [] : files(rel);
    return /\.ts$/.test(entry.name) ? [rel] : [];
  });
}

const EXPORT = /^export\s+(?:declare\s+)?(?:async\s+)?(?:const|let|function\*?|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;
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
