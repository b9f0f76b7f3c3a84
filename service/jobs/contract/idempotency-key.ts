import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { badRequest, MESSAGES } from '../../errors';

// Stripe's limit is 255 characters; visible ASCII keeps keys unambiguous in logs and headers.
export const KEY_LENGTH = 255;
export const KEY = new RegExp(`^[\\x21-\\x7E]{1,${KEY_LENGTH}}$`);

/** The Idempotency-Key a request sent, if any; several, or one not of the key's form, is a 400. */
export function idempotencyKey(ctx: Context): string | undefined {
  // headersDistinct builds an array for every header: only a keyed request needs it.
  if (ctx.req.headers['idempotency-key'] === undefined) return undefined;
  const sent = ctx.req.headersDistinct['idempotency-key']!;
  if (sent.length > 1) throw badRequest(MESSAGES.keyTwice);
  const key = sent[0]!;
  if (!KEY.test(key)) throw badRequest(MESSAGES.keyForm);
  return key;
}

/** Method, path and the body as canonical JSON: what "the same request" means for a key. */
export function requestHash(ctx: Context): string {
  return createHash('sha256')
    .update(`${ctx.method} ${ctx.path}\n${canonicalJson(ctx.request.body)}`)
    .digest('hex');
}

/** Text written as is while serialising (brackets, commas, "key":). */
class Literal {
  constructor(readonly text: string) {}
}

/** JSON.stringify with object keys sorted at every level, so two bodies that differ only in key order or whitespace give the same text. */
export function canonicalJson(root: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item instanceof Literal) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      stack.push(new Literal(']'));
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i], new Literal(i === 0 ? '' : ','));
      stack.push(new Literal('['));
    } else if (item !== null && typeof item === 'object') {
      // Keys are unique, so the default sort (by UTF-16 code units) orders them completely.
      const keys = Object.keys(item).sort();
      stack.push(new Literal('}'));
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        stack.push((item as Record<string, unknown>)[key], new Literal(`${i === 0 ? '' : ','}${JSON.stringify(key)}:`));
      }
      stack.push(new Literal('{'));
    } else {
      out.push(JSON.stringify(item));
    }
  }
  return out.join('');
}
