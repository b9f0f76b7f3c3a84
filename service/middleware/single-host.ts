import type { Middleware } from 'koa';
import { HttpError } from '../errors';

/**
 * Two Host headers are a 400, as nginx answers them (RFC 9112 §3.2): Node keeps the first and
 * drops the other, so the service and a proxy in front could each read a different host.
 */
export function singleHost(): Middleware {
  return async (ctx, next) => {
    const raw = ctx.req.rawHeaders;
    let hosts = 0;
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'host') hosts++;
    if (hosts > 1) throw new HttpError(400, 'Malformed HTTP request: Host sent more than once', {}, { Connection: 'close' });
    await next();
  };
}
