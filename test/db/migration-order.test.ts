/**
 * drizzle-kit can write a changed primary key before the column it names (ALTER TABLE ... ADD
 * PRIMARY KEY, then ADD COLUMN): such a migration fails as generated. This refuses one in
 * db/migrations before it is ever applied; put both in one ALTER TABLE instead (see 0009).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const DIR = path.join(__dirname, '..', '..', 'db', 'migrations');

/** The primary keys a migration's statement adds, and the columns it adds, per table. */
function changes(statement: string): { table: string; keys: string[]; added: string[] } | undefined {
  const table = /alter\s+table\s+`(\w+)`/i.exec(statement)?.[1];
  if (!table) return undefined;
  const keys = [...statement.matchAll(/add\s+primary\s+key\s*\(([^)]*)\)/gi)].flatMap((m) =>
    m[1]!.split(',').map((c) => c.trim().replace(/`/g, '')),
  );
  const added = [...statement.matchAll(/add\s+(?:column\s+)?`(\w+)`\s+\w/gi)].map((m) => m[1]!);
  return { table, keys, added };
}

/** Each statement's position and what it adds; a key may only name columns added before it or by its own statement. */
function keysBeforeColumns(sql: string): string[] {
  const statements = sql.split('--> statement-breakpoint').map(changes);
  const problems: string[] = [];
  statements.forEach((change, i) => {
    if (!change) return;
    for (const later of statements.slice(i + 1)) {
      if (later?.table !== change.table) continue;
      for (const column of later.added.filter((added) => change.keys.includes(added)))
        problems.push(`${change.table}: PRIMARY KEY names ${column} before it is added`);
    }
  });
  return problems;
}

test('no migration adds a primary key before a column it names', () => {
  const problems = readdirSync(DIR)
    .filter((file) => file.endsWith('.sql'))
    .flatMap((file) =>
      keysBeforeColumns(readFileSync(path.join(DIR, file), 'utf8')).map((problem) => `${file}: ${problem}`),
    );
  expect(problems).toEqual([]);
});

test("the check finds drizzle-kit's order, and passes the one-statement form", () => {
  const generated = [
    'ALTER TABLE `job_counts` DROP PRIMARY KEY;',
    'ALTER TABLE `job_counts` ADD PRIMARY KEY(`by_department`,`slot`);',
    'ALTER TABLE `job_counts` ADD `slot` bigint unsigned DEFAULT 0 NOT NULL;',
  ].join('--> statement-breakpoint\n');
  expect(keysBeforeColumns(generated)).toEqual(['job_counts: PRIMARY KEY names slot before it is added']);
  expect(keysBeforeColumns(readFileSync(path.join(DIR, '0009_job_counts_slots.sql'), 'utf8'))).toEqual([]);
});
