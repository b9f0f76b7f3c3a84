/** Reading and writing a decK state file as a yaml Document. */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument, type Document, type ToStringOptions } from 'yaml';
import type { z } from 'zod';
import { Failure } from '../cli/errors';

/** The style of the committed files; a file read and written back unchanged keeps its bytes. */
const FORMAT: ToStringOptions = { lineWidth: 0, flowCollectionPadding: false, indentSeq: true };

export interface StateDocument {
  path: string;
  /** As read; compared again just before writing. */
  original: string;
  doc: Document;
}

export function readDocument(file: string): StateDocument {
  if (!existsSync(file)) throw new Failure(`${file}: no such file (use --file / --keys-file to point at another one)`);
  const original = readFileSync(file, 'utf8');
  const doc = parseDocument(original, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) throw new Failure(`${file}: not valid YAML: ${doc.errors[0]?.message ?? 'parse error'}`);
  return { path: file, original, doc };
}

/** "consumers[2].acls[0].group" from zod's path. */
function where(issuePath: PropertyKey[]): string {
  return (
    issuePath.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('') ||
    '(top level)'
  );
}

/** The document's data checked against `schema`; the first problem named with its place in the file. */
export function checked<T>(state: StateDocument, schema: z.ZodType<T>): T {
  const result = schema.safeParse(state.doc.toJS());
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Failure(`${state.path}: ${issue ? `${where(issue.path)}: ${issue.message}` : 'invalid'}`);
  }
  return result.data;
}

export function render(state: StateDocument): string {
  return state.doc.toString(FORMAT);
}

/** Writes the documents that changed: each to a temporary file beside it, then renamed over it (a reader never sees half a file). */
export function writeDocuments(states: StateDocument[]): string[] {
  const changed = states.filter((s) => render(s) !== s.original);
  for (const s of changed) {
    if (readFileSync(s.path, 'utf8') !== s.original)
      throw new Failure(`${s.path} changed while this command ran; it was not overwritten`);
  }
  const temps = changed.map((s) => {
    const temp = path.join(path.dirname(s.path), `.${path.basename(s.path)}.${process.pid}.tmp`);
    writeFileSync(temp, render(s));
    return temp;
  });
  changed.forEach((s, i) => renameSync(temps[i] as string, s.path));
  return changed.map((s) => s.path);
}
