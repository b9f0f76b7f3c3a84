/** The local gateway is a development stand-in for Kong: the service and the database code never load it. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support';

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

test('service/ and db/ import nothing from gateway/', () => {
  const offenders = [...sources('service'), ...sources('db')].filter((file) =>
    /from\s+['"][./]*gateway\/|require\(['"][./]*gateway\//.test(readFileSync(file, 'utf8')),
  );
  expect(offenders.map((f) => path.relative(ROOT, f))).toEqual([]);
});
