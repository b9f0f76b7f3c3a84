/**
 * decK renders a state file as a Go text/template (delimiters `${{` and `}}`) over the raw text,
 * before any YAML parsing, so a reference inside a YAML comment is rendered too. Its `env`
 * function only reads variables whose name starts with DECK_ and fails when one is unset
 * (Kong/deck file/readfile.go: getPrefixedEnvVar). This module reproduces the subset decK state
 * files use: `env "DECK_NAME"`, optionally piped to toBool, toInt or toFloat, and `-` trim markers.
 */

export class DeckTemplateError extends Error {}

const ENV_PREFIX = 'DECK_';

/** Go's text/template names this template "state"; errors cite state:line:column (column 0-based, in bytes). */
function location(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = Buffer.byteLength(before.slice(lineStart), 'utf8');
  return `state:${line}:${column}`;
}

function lookupEnv(name: string, env: NodeJS.ProcessEnv): string {
  if (!name.startsWith(ENV_PREFIX)) {
    throw new Error(`environment variables in the state file must be prefixed with 'DECK_', found: '${name}'`);
  }
  const value = env[name];
  if (value === undefined) {
    throw new Error(`environment variable '${name}' present in state file but not set`);
  }
  return value;
}

function convert(fn: string, value: string): string {
  switch (fn) {
    case 'toBool': {
      // strconv.ParseBool
      if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return 'true';
      if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return 'false';
      throw new Error(`strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
    }
    case 'toInt':
      if (!/^[+-]?\d+$/.test(value)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(value)}: invalid syntax`);
      return String(Number.parseInt(value, 10));
    case 'toFloat': {
      const n = Number(value);
      if (value.trim() === '' || Number.isNaN(n)) {
        throw new Error(`strconv.ParseFloat: parsing ${JSON.stringify(value)}: invalid syntax`);
      }
      return String(n);
    }
    default:
      throw new Error(`function "${fn}" not defined`);
  }
}

const ACTION = /^\s*env\s+"([^"\\]*)"\s*(?:\|\s*(\w+)\s*)?$/;

/** Renders every `${{ ... }}` action of `text`; throws DeckTemplateError with decK's wording. */
export function renderDeckTemplate(text: string, env: NodeJS.ProcessEnv): string {
  let out = '';
  let cursor = 0;
  for (;;) {
    const open = text.indexOf('${{', cursor);
    if (open === -1) break;
    const close = text.indexOf('}}', open + 3);
    if (close === -1) {
      throw new DeckTemplateError(`template: ${location(text, open).replace(/:\d+$/, '')}: unclosed action`);
    }
    let inner = text.slice(open + 3, close);
    let chunk = text.slice(cursor, open);
    let innerOffset = open + 3;
    if (inner.startsWith('- ')) {
      chunk = chunk.replace(/\s+$/, '');
      inner = inner.slice(1);
      innerOffset += 1;
    }
    let next = close + 2;
    if (inner.endsWith(' -')) {
      inner = inner.slice(0, -1);
      const rest = /^\s*/.exec(text.slice(next));
      next += rest ? rest[0].length : 0;
    }
    const match = ACTION.exec(inner);
    if (!match) {
      throw new DeckTemplateError(
        `template: ${location(text, open)}: the local gateway renders only env "DECK_..." (optionally | toBool, toInt, toFloat), found: ${inner.trim()}`,
      );
    }
    const name = match[1] ?? '';
    const command = `env "${name}"`;
    const commandOffset = innerOffset + (inner.length - inner.trimStart().length);
    let value: string;
    try {
      value = lookupEnv(name, env);
    } catch (err) {
      throw new DeckTemplateError(
        `template: ${location(text, commandOffset)}: executing "state" at <${command}>: error calling env: ${(err as Error).message}`,
      );
    }
    if (match[2]) {
      try {
        value = convert(match[2], value);
      } catch (err) {
        throw new DeckTemplateError(
          `template: ${location(text, commandOffset)}: executing "state" at <${match[2]}>: error calling ${match[2]}: ${(err as Error).message}`,
        );
      }
    }
    out += chunk + value;
    cursor = next;
  }
  return out + text.slice(cursor);
}
