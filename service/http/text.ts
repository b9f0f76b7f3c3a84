import { z } from 'zod';

/** One field of text as every body takes it: a string, trimmed, well-formed, without control characters. */

// C0 controls (NUL, ESC, line breaks...), DEL, C1 controls and the Unicode line/paragraph separators.
// eslint-disable-next-line no-control-regex -- control characters are what these refuse
const SINGLE_LINE_FORBIDDEN = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/;
// eslint-disable-next-line no-control-regex -- control characters are what these refuse
const MULTI_LINE_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
// The same rules as the document's patterns: only allowed characters, and (for a required text) one that is not a space.
const allowed = (forbidden: RegExp) => `[^${forbidden.source.slice(1, -1)}]*`;
const pattern = (multiLine: boolean, nonEmpty: boolean) =>
  `^${nonEmpty ? '(?=[\\s\\S]*\\S)' : ''}${allowed(multiLine ? MULTI_LINE_FORBIDDEN : SINGLE_LINE_FORBIDDEN)}$`;
// A lone UTF-16 surrogate ("\ud800" in JSON) cannot be stored as UTF-8; it would come back as U+FFFD.
const wellFormed = (value: string) => (value as string & { isWellFormed(): boolean }).isWellFormed();

export const plainText = (field: string, multiLine = false) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    // Trimmed first: a trailing newline pasted into a title is whitespace, not content.
    .trim()
    .refine(wellFormed, `${field} must be valid Unicode text (it holds a lone surrogate)`)
    .refine(
      (value) => !(multiLine ? MULTI_LINE_FORBIDDEN : SINGLE_LINE_FORBIDDEN).test(value),
      multiLine
        ? `${field} must not contain control characters other than tab and line breaks`
        : `${field} must not contain control characters or line breaks`,
    )
    .meta({ pattern: pattern(multiLine, false) });

export const text = (field: string, max: number, multiLine = false) =>
  plainText(field, multiLine)
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`)
    .meta({ pattern: pattern(multiLine, true) });
