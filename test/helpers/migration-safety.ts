/**
 * Expand/contract, checked on the migration files (docs/operations.md, "Upgrades"): a migration that
 * drops or renames a column or table breaks the release still serving while the next one migrates,
 * so it is refused unless its file says it is the contract step of an earlier expand:
 *
 *   -- contract-of: 0016_add_new_column (the release after it stopped reading the old column)
 *
 * naming a migration earlier in the journal. Strong_migrations' rule, written for MySQL/MariaDB.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

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

/** Every migration of the folder's journal that would break the release before it, with why; [] when none. */
export function unsafeMigrations(folder: string): string[] {
  const journal = JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string }>;
  };
  const tags = journal.entries.map((entry) => entry.tag);
  return tags.flatMap((tag, index) => {
    const text = readFileSync(path.join(folder, `${tag}.sql`), 'utf8');
    const code = text.replace(/--[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');
    // Trigger bodies are code, not shape: what they name is not dropped.
    const shape = code.replace(/CREATE\s+TRIGGER[\s\S]*?\bEND\b/gi, '');
    const found = DESTRUCTIVE.filter(([pattern]) => pattern.test(shape)).map(([, what]) => what);
    if (found.length === 0) return [];
    const expand = MARKER.exec(text)?.[1];
    if (expand && tags.indexOf(expand) >= 0 && tags.indexOf(expand) < index) return [];
    const why = expand
      ? `its contract-of names ${expand}, which is not an earlier migration`
      : 'it has no "-- contract-of: <earlier migration>" line';
    return [`${tag} ${[...new Set(found)].join(' and ')}, and ${why}`];
  });
}
