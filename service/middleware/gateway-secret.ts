import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { HttpError } from '../errors';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * With a secret configured, a request that did not come through the gateway is refused before
 * anything else runs, so forged identity headers never reach a query.
 */
export function requireGatewaySecret(secret: string | undefined): Middleware {
  if (!secret) return (_ctx, next) => next();
  const expected = digest(secret);
  return async (ctx, next) => {
    const sent = ctx.req.headers['x-gateway-secret'];
    // Comparing digests keeps the comparison constant-time whatever the length sent.
    if (typeof sent !== 'string' || !timingSafeEqual(digest(sent), expected)) {
      throw new HttpError(401, 'Requests must come through the API gateway');
    }
    await next();
  };
}
