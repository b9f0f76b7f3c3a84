import { hash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { hostTwice, noConsumer, notThroughGateway, tooManyHeaders } from '../errors';

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

/** The most headers a client may send, as both gateways count them (gateway/kong/nginx-proxy-jobs.conf). */
export const HEADER_COUNT_LIMIT = 100;

// What a gateway adds to the request it passes on: not the client's, so not counted against it.
const GATEWAY_HEADERS = new Set([
  'x-consumer-id', 'x-consumer-username', 'x-consumer-custom-id', 'x-consumer-groups', 'x-credential-identifier',
  'x-anonymous-consumer', 'x-gateway-secret', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-port',
  'x-forwarded-proto', 'x-forwarded-path', 'x-forwarded-prefix', 'x-real-ip', 'x-kong-request-id', 'x-request-id',
]);

/** How many of `raw`'s headers the client sent: the gateway's own are not counted. */
function clientHeaderCount(raw: string[]): number {
  const added = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (GATEWAY_HEADERS.has(name)) added.add(name);
  }
  return raw.length / 2 - added.size;
}

/**
 * The header block as the gateways take it: more than HEADER_COUNT_LIMIT client headers is a JSON
 * 431 (gateway headers not counted), and two Host headers a 400, as nginx answers them (RFC 9112 §3.2).
 */
export function headerBlock(): Middleware {
  return (ctx, next) => {
    const raw = ctx.req.rawHeaders;
    if (raw.length / 2 > HEADER_COUNT_LIMIT && clientHeaderCount(raw) > HEADER_COUNT_LIMIT) throw tooManyHeaders(HEADER_COUNT_LIMIT);
    let hosts = 0;
    // Only a four-letter name can be Host: the others are not lower-cased.
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++;
    if (hosts > 1) throw hostTwice();
    return next();
  };
}

// One-shot: no Hash object per request.
const digest = (value: string) => hash('sha256', value, 'buffer');

/** With a secret configured, a request that did not come through the gateway is refused before anything else runs. */
export function trustGateway(secret: string | undefined): Middleware {
  const expected = secret ? digest(secret) : undefined;
  return (ctx, next) => {
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
    return next();
  };
}

/** For a route that records who called: without the gateway's identity headers it is a 401. */
export const requireConsumer: Middleware = (ctx, next) => {
  if (!ctx.state.consumer) throw noConsumer();
  return next();
};
