import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';

/**
 * Conditional GETs. The ETag is a SHA-256 of the exact JSON body sent, so it changes the moment
 * anything a reader can see changes (a field, a job joining or leaving the page, a total, the
 * next cursor or feed position) and never otherwise; a matching If-None-Match is answered 304
 * with no body. The query still runs: the saving is the body and the partner's processing, and
 * the tag can never be stale. `private`: a response depends on who asks (their drafts).
 */
export const conditional: Middleware = async (ctx, next) => {
  await next();
  if (ctx.status !== 200 || ctx.body === null || typeof ctx.body !== 'object') return;
  const text = JSON.stringify(ctx.body);
  ctx.body = text;
  ctx.type = 'application/json; charset=utf-8';
  ctx.set('ETag', `"${createHash('sha256').update(text).digest('base64url')}"`);
  ctx.set('Cache-Control', 'private, no-cache');
  // Koa's `fresh` compares If-None-Match (lists, W/ prefixes, *) for GET and HEAD.
  if (ctx.fresh) ctx.status = 304;
};
