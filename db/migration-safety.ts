/**
 * Expand/contract, checked on the migration files before any is applied (docs/operations.md,
 * "Upgrades"): a migration that drops or renames a column or table breaks the release still serving
 * while the next one migrates, and the one a rollback returns to, so it is refused unless its file
 * says it is the contract step of an earlier expand:
 *
 *   -- contract-of: 0016_add_new_column (the release after it stopped reading the old column)
 *
 * naming a migration earlier in the journal. Strong_migrations' rule, written for MySQL/MariaDB.
 * A .sql file the journal does not list is refused too: drizzle would skip it without a word.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A migration as drizzle-kit's journal (meta/_journal.json) lists it. */
export interface JournalEntry {
  tag: string;
  when: number;
}

/** The folder's journal as drizzle-kit wrote it, entries oldest first. */
export function readJournal(folder: string): { entries: JournalEntry[] } & Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: JournalEntry[];
  };
}

/** Statements that remove or rename a column or table (comments stripped first). */
const DESTRUCTIVE: Array<[RegExp, string]> = [
  [/\bDROP\s+TABLE\b/i, 'drops a table'],
  [
    /\bDROP\s+(?:COLUMN\s+)?(?!PRIMARY\b|INDEX\b|KEY\b|FOREIGN\b|CONSTRAINT\b|CHECK\b|TRIGGER\b|PARTITION\b|DEFAULT\b)`?\w+`?\s*(?:,|;|$)/im,
    'drops a column',
  ],
  [/\bRENAME\s+(?:TABLE|TO|AS)\b/i, 'renames a table'],
  [/\bALTER\s+TABLE\s+\S+\s+RENAME\s+(?!COLUMN|INDEX|KEY)/i, 'renames a table'],
  [/\bRENAME\s+COLUMN\b/i, 'renames a column'],
  [/\bCHANGE\s+(?:COLUMN\s+)?`?(\w+)`?\s+`?(?!\1\b)\w+`?/i, 'renames a column (CHANGE)'],
];

const MARKER = /^--\s*contract-of:\s*(\S+)/m;

/** A migration that would break the release before it: which, what it does, and the statement that does it. */
export interface UnsafeMigration {
  tag: string;
  what: string;
  statement: string;
  /** What its `-- contract-of:` line named, when it names no earlier migration. */
  marker?: string;
}

/** The statement as one short line: its comments gone, spaces collapsed, at most 120 characters. */
function oneLine(statement: string): string {
  const flat = statement.replace(/\s+/g, ' ').trim();
  return flat.length <= 120 ? flat : `${flat.slice(0, 117)}...`;
}

/** The first statement of a migration that drops or renames a column or table, with what it does. */
function firstDestructive(sql: string): { what: string; statement: string } | undefined {
  for (const raw of sql.split('--> statement-breakpoint')) {
    const code = raw.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
    // Trigger bodies are code, not shape: what they name is not dropped.
    const shape = code.replace(/CREATE\s+TRIGGER[\s\S]*?\bEND\b/gi, '');
    const found = DESTRUCTIVE.find(([pattern]) => pattern.test(shape));
    if (found) return { what: found[1], statement: oneLine(code) };
  }
  return undefined;
}

/** Every migration of the folder's journal that drops or renames without naming its earlier expand; [] when none. */
export function unsafeMigrations(folder: string): UnsafeMigration[] {
  const tags = readJournal(folder).entries.map((entry) => entry.tag);
  return tags.flatMap((tag, index) => {
    const text = readFileSync(path.join(folder, `${tag}.sql`), 'utf8');
    const destructive = firstDestructive(text);
    if (!destructive) return [];
    const marker = MARKER.exec(text)?.[1];
    if (marker === undefined) return [{ tag, ...destructive }];
    const expand = tags.indexOf(marker);
    return expand >= 0 && expand < index ? [] : [{ tag, ...destructive, marker }];
  });
}

/** The folder's .sql files that its journal does not list (drizzle would never apply them). */
export function unjournalledMigrations(folder: string): string[] {
  const tags = new Set(readJournal(folder).entries.map((entry) => `${entry.tag}.sql`));
  return readdirSync(folder)
    .filter((file) => file.endsWith('.sql') && !tags.has(file))
    .sort();
}

/** The files the folder's journal lists that are not there. */
function missingMigrations(folder: string): string[] {
  const files = new Set(readdirSync(folder));
  return readJournal(folder)
    .entries.map((entry) => `${entry.tag}.sql`)
    .filter((file) => !files.has(file));
}

/** Why the migrator refuses the folder, in one line for the operator; undefined when it may migrate. */
export function migrationRefusal(folder: string): string | undefined {
  const [file] = unjournalledMigrations(folder);
  if (file !== undefined)
    return `Refusing to migrate, nothing applied: ${file} is not in meta/_journal.json, so drizzle would skip it; write a migration with npm run db:generate (npx drizzle-kit generate --custom --name <name> for hand-written SQL), or remove the file.`;
  const [missing] = missingMigrations(folder);
  if (missing !== undefined)
    return `Refusing to migrate, nothing applied: meta/_journal.json lists ${missing}, which is not in the migrations folder; deploy the release's db/migrations whole.`;
  const [unsafe] = unsafeMigrations(folder);
  if (unsafe === undefined) return undefined;
  const why =
    unsafe.marker === undefined
      ? 'and has no "-- contract-of:" line'
      : `and its "-- contract-of: ${unsafe.marker}" names no earlier migration`;
  return `Refusing to migrate, nothing applied: ${unsafe.tag} ${unsafe.what} (${unsafe.statement}) ${why}; once the release before it no longer reads what it removes, start its file with "-- contract-of: <the earlier migration that expanded>" (docs/operations.md, "Upgrades").`;
}
