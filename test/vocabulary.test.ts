/**
 * One vocabulary of errors: every fixed sentence the service answers a client with is written once,
 * in service/errors.ts, and each is used by the code that answers it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MESSAGES } from '../service/errors';

const ROOT = path.join(__dirname, '..');
const sources = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(path.join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [path.join(dir, entry.name)]
        : [],
  );
const FILES = ['domain', 'db', 'service']
  .flatMap(sources)
  .map((file) => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }));
// As a TypeScript string literal spells it.
const spelled = (message: string) => [`'${message.replace(/'/g, "\\'")}'`, `"${message}"`, `\`${message}\``];

test.each(Object.entries(MESSAGES))('%s is written once, in service/errors.ts', (_name, message) => {
  const writtenIn = FILES.filter(({ text }) => spelled(message).some((literal) => text.includes(literal))).map(
    ({ file }) => file,
  );
  expect(writtenIn).toEqual([path.join('service', 'errors.ts')]);
});

test.each(Object.keys(MESSAGES))('MESSAGES.%s is used outside service/errors.ts', (name) => {
  const users = FILES.filter(
    ({ file, text }) => file !== path.join('service', 'errors.ts') && text.includes(`MESSAGES.${name}`),
  );
  const inErrors = readFileSync(path.join(ROOT, 'service', 'errors.ts'), 'utf8').split(`MESSAGES.${name}`).length - 1;
  expect(users.length + inErrors).toBeGreaterThan(0);
});
