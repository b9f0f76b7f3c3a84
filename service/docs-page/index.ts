import type { Middleware } from 'koa';
import { methodNotAllowed, notFound } from '../errors';
import { docsAssets } from './assets';

/** The public API reference under /docs. */

// Same-origin only: the page never loads or sends anything to another host.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const accepts = (header: string, coding: string) =>
  header.split(',').some((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    return name === coding && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
  });

/** `document`: the OpenAPI document the page renders (the app's, with its public address). */
export function docsPage(document: () => unknown): Middleware {
  const assets = docsAssets(document);
  return async (ctx, next) => {
    if (ctx.path !== '/docs' && !ctx.path.startsWith('/docs/')) {
      await next();
      return;
    }
    const found = assets.get(ctx.path);
    if (!found) throw notFound();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw methodNotAllowed(['GET', 'HEAD']);
    const file = found();
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', file.cacheControl);
    ctx.set('ETag', file.etag);
    ctx.vary('Accept-Encoding');
    const tags = ctx.get('If-None-Match').match(/(?:W\/)?"[^"]*"/g) ?? [];
    if (tags.some((t) => t.replace(/^W\//, '') === file.etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = file.type;
    if (file.gzipped && accepts(ctx.get('Accept-Encoding'), 'gzip')) {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = file.gzipped;
    } else {
      ctx.body = file.body;
    }
  };
}
