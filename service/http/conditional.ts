import { hash } from 'node:crypto';
import type { Middleware } from 'koa';
import { CONDITIONAL_HEADERS, type HeaderValues } from '../headers';

/** Conditional GETs: the ETag is a SHA-256 of the exact body, so it changes exactly when what a reader sees changes. */
export const conditional: Middleware = async (ctx, next) => {
  await next();
  // GET and HEAD only (the router sends nothing else here); errors keep their own bodies.
  if (ctx.status !== 200 || ctx.body === null || typeof ctx.body !== 'object') return;
  const text = JSON.stringify(ctx.body);
  const tag = `"${hash('sha256', text, 'base64url')}"`;
  // Node's own setHeader: Koa's set() builds arrays per call, and these names and values are ours.
  // The type goes first: set after the string body, Koa would look up text/plain, then this.
  ctx.res.setHeader('Content-Type', 'application/json; charset=utf-8');
  ctx.body = text;
  const sent: HeaderValues<typeof CONDITIONAL_HEADERS> = { ETag: tag, 'Cache-Control': 'private, no-cache' };
  for (const name in sent) ctx.res.setHeader(name, sent[name as keyof typeof sent]);
  if (noneMatch(ctx.req.headers['if-none-match'] ?? '', tag)) ctx.status = 304;
};

/** If-None-Match as RFC 9110 13.1.2 evaluates it: `*`, or any listed tag equal to ours by weak comparison (W/ ignored). */
function noneMatch(header: string, tag: string): boolean {
  // Node has already trimmed the value's surrounding whitespace.
  if (header === '*') return true;
  const listed = header.match(/(?:W\/)?"[^"]*"/g);
  return listed !== null && listed.some((one) => one.replace(/^W\//, '') === tag);
}
