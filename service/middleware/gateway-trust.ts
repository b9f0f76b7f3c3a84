import { hash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { hostTwice, noConsumer, notThroughGateway } from '../errors';

// What the gateway vouches for: one Host, that the request came through it, and who is calling.

/** Who is calling, as the gateway authenticated them. */
export interface Consumer {
  id: string;
  username?: string;
}

declare module 'koa' {
  interface DefaultState {
    consumer?: Consumer;
    requestId?: string;
  }
}

// Kong consumer ids are UUIDs; anything else that fits the column is accepted for local use.
const CONSUMER_ID = /^[A-Za-z0-9._:-]{1,64}$/;

function header(value: string | string[] | undefined): string | undefined {
  // A repeated identity header is not something the gateway sends: ignore it rather than guess.
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** Two Host headers are a 400, as nginx answers them (RFC 9112 §3.2). */
export function singleHost(): Middleware {
  return async (ctx, next) => {
    const raw = ctx.req.rawHeaders;
    let hosts = 0;
    // Only a four-letter name can be Host: the others are not lower-cased.
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++;
    if (hosts > 1) throw hostTwice();
    await next();
  };
}

// One-shot: no Hash object per request.
const digest = (value: string) => hash('sha256', value, 'buffer');

/** With a secret configured, a request that did not come through the gateway is refused before anything else runs. */
export function trustGateway(secret: string | undefined): Middleware {
  const expected = secret ? digest(secret) : undefined;
  return async (ctx, next) => {
    if (expected) {
      const sent = ctx.req.headers['x-gateway-secret'];
      // Comparing digests keeps the comparison constant-time whatever the length sent.
      if (typeof sent !== 'string' || !timingSafeEqual(digest(sent), expected)) {
        throw notThroughGateway();
      }
    }
    const id = header(ctx.req.headers['x-consumer-id']);
    if (id && CONSUMER_ID.test(id)) {
      ctx.state.consumer = { id, username: header(ctx.req.headers['x-consumer-username']) };
    }
    await next();
  };
}

/** For a route that records who called: without the gateway's identity headers it is a 401. */
export const requireConsumer: Middleware = async (ctx, next) => {
  if (!ctx.state.consumer) throw noConsumer();
  await next();
};
