import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Middleware } from 'koa';
import { badRequest, bodyTooLarge, duplicateField, HttpError, MESSAGES, notJson, unsupportedEncoding } from '../errors';
import { Config } from '../config';
import { BODY_LIMIT_BYTES, declaresBody, readBody } from './read-body';

declare module 'koa' {
  interface Request {
    /** The parsed JSON object, set by jsonBody(): never an array, null or a scalar. */
    body?: Record<string, unknown>;
  }
}

// For an app without readBodyFirst() in front (a body not read yet).
const FALLBACK_READ_TIMEOUT_MS = Config.parse({}).bodyReadTimeoutMs;

const inflate = promisify(gunzip);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The content coding of the body: none or gzip. */
function contentCoding(header: string | undefined): 'gzip' | undefined {
  const codings = (header ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return undefined;
  if (codings.length === 1 && (codings[0] === 'gzip' || codings[0] === 'x-gzip')) return 'gzip';
  // Node has already trimmed the value.
  throw unsupportedEncoding(header!);
}

async function decode(bytes: Buffer): Promise<Buffer> {
  try {
    // maxOutputLength stops inflating as soon as the output passes the limit.
    return await inflate(bytes, { maxOutputLength: BODY_LIMIT_BYTES });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw bodyTooLarge();
    // Not gzip, truncated, or trailing bytes that are not another gzip member.
    throw badRequest(MESSAGES.notGzip);
  }
}

interface Frame {
  path: string;
  /** The keys seen so far in an object; undefined for an array. */
  keys?: Set<string>;
  /** Object: the key whose value comes next. Array: the index of the current item. */
  current: string | number;
  /** Object: the next string is a key (after `{` or `,`), not a value. */
  expectingKey?: boolean;
}

// The characters the scan looks for, as char codes.
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** Where the string opening at `start` closes. */
function closingQuote(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

const join = (path: string, step: string | number) => (path === '' ? String(step) : `${path}.${step}`);

/** The path (`salary.currency`, `requirements.0.x`) of the first key that appears twice in one object of a JSON text, or undefined. */
export function firstDuplicateKey(text: string): string | undefined {
  const stack: Frame[] = [];
  const childPath = () => {
    const parent = stack[stack.length - 1];
    return parent ? join(parent.path, parent.current) : '';
  };
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (char === QUOTE) {
      const end = closingQuote(text, i);
      if (top?.keys && top.expectingKey) {
        // Only a key with an escape needs decoding; the text has passed JSON.parse, so any other is its characters.
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys.has(key)) return join(top.path, key);
        top.keys.add(key);
        top.current = key;
        top.expectingKey = false;
      }
      i = end;
    } else if (char === OPEN_BRACE) {
      // `current` is set by the first key before any child path is built.
      stack.push({ path: childPath(), keys: new Set(), current: Number.NaN, expectingKey: true });
    } else if (char === OPEN_BRACKET) {
      stack.push({ path: childPath(), current: 0 });
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
      stack.pop();
    } else if (char === COMMA && top) {
      if (top.keys) top.expectingKey = true;
      else top.current = (top.current as number) + 1;
    }
  }
  return undefined;
}

/** The JSON object in a body; throws the 400 that says what is wrong with it. */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  let text: string;
  try {
    // RFC 8259 §8.1: JSON between systems is UTF-8. A leading BOM is dropped by the decoder.
    text = utf8.decode(bytes);
  } catch {
    throw badRequest(MESSAGES.notUtf8);
  }
  if (text.trim() === '') throw badRequest(MESSAGES.emptyBody);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(MESSAGES.malformedJson);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest(MESSAGES.notAnObject);
  }
  const duplicate = firstDuplicateKey(text);
  if (duplicate !== undefined) throw duplicateField(duplicate);
  return value as Record<string, unknown>;
}

/** Reads a JSON request body into ctx.request.body; an `optional` one left out reads as `{}`. */
export function jsonBody(optional = false): Middleware {
  return async (ctx, next) => {
    if (optional && !declaresBody(ctx.req)) {
      ctx.request.body = {};
      await next();
      return;
    }
    // JSON only; anything else is refused before the body is read.
    if (!ctx.is('application/json')) {
      // type-is sees no type when there is no body: a JSON create without one is empty, not mistyped.
      if (ctx.request.type.toLowerCase() === 'application/json') throw badRequest(MESSAGES.emptyBody);
      throw notJson();
    }
    const charset = ctx.request.charset.toLowerCase();
    if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new HttpError(415, MESSAGES.notUtf8Charset);
    }
    const coding = contentCoding(ctx.get('Content-Encoding') || undefined);
    const bytes = ctx.request.rawBody ?? (await readBody(ctx.req, FALLBACK_READ_TIMEOUT_MS));
    ctx.request.body = parseJsonObject(coding === 'gzip' ? await decode(bytes) : bytes);
    await next();
  };
}
