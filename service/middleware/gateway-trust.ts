import { hash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Config } from '../config';
import { hostTwice, noConsumer, notThroughGateway, tooManyHeaders } from '../errors';
import type { Logger } from '../logger';
import type { GatewaySecretRejection, ServiceMetrics } from '../metrics';

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
  'x-consumer-id',
  'x-consumer-username',
  'x-consumer-custom-id',
  'x-consumer-groups',
  'x-credential-identifier',
  'x-anonymous-consumer',
  'x-gateway-secret',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-proto',
  'x-forwarded-path',
  'x-forwarded-prefix',
  'x-real-ip',
  'x-kong-request-id',
  'x-request-id',
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
    if (raw.length / 2 > HEADER_COUNT_LIMIT && clientHeaderCount(raw) > HEADER_COUNT_LIMIT)
      throw tooManyHeaders(HEADER_COUNT_LIMIT);
    let hosts = 0;
    // Only a four-letter name can be Host: the others are not lower-cased.
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++;
    if (hosts > 1) throw hostTwice();
    return next();
  };
}

// One-shot: no Hash object per request.
const digest = (value: string) => hash('sha256', value, 'buffer');

/** Once a minute at most for each reason: a misconfigured gateway sends every request wrong. */
const REJECTION_LOG_INTERVAL_MS = 60_000;

const REJECTION_MESSAGES: Record<GatewaySecretRejection, string> = {
  missing:
    'request refused: no X-Gateway-Secret (it did not come through the gateway, or the gateway has no secret configured)',
  mismatch:
    'request refused: X-Gateway-Secret matches no configured secret (the gateway and the service hold different secrets)',
};

export interface GatewayTrustOptions {
  logger?: Logger;
  metrics?: ServiceMetrics;
  /** The clock the log's once-a-minute limit reads (tests move it). */
  now?: () => number;
}

/**
 * With a secret configured, a request that did not come through the gateway is refused before anything else runs.
 * GATEWAY_SECRET_NEXT is accepted beside GATEWAY_SECRET, so the gateway can be switched to it with no request refused.
 */
export function trustGateway(
  secrets: Pick<Config, 'gatewaySecret' | 'gatewaySecretNext'>,
  { logger, metrics, now = Date.now }: GatewayTrustOptions = {},
): Middleware {
  const expected = [secrets.gatewaySecret, secrets.gatewaySecretNext]
    .filter((secret): secret is string => Boolean(secret))
    .map(digest);
  const lastLogged: Record<GatewaySecretRejection, number> = { missing: -Infinity, mismatch: -Infinity };
  const suppressed: Record<GatewaySecretRejection, number> = { missing: 0, mismatch: 0 };
  const refuse = (reason: GatewaySecretRejection, path: string, from: string | undefined) => {
    metrics?.observeGatewaySecretRejection(reason);
    const at = now();
    if (at - lastLogged[reason] < REJECTION_LOG_INTERVAL_MS) {
      suppressed[reason]++;
    } else {
      // Never the value sent: a near miss would tell whoever sent it how near.
      logger?.warn({ reason, path, from, refusedSinceLastLine: suppressed[reason] }, REJECTION_MESSAGES[reason]);
      lastLogged[reason] = at;
      suppressed[reason] = 0;
    }
    return notThroughGateway();
  };
  return (ctx, next) => {
    if (expected.length > 0) {
      const sent = ctx.req.headers['x-gateway-secret'];
      if (typeof sent !== 'string' || sent === '') throw refuse('missing', ctx.path, ctx.req.socket.remoteAddress);
      // Comparing digests keeps each comparison constant-time whatever the length sent, and every
      // configured secret is compared, so the time taken does not say which one matched.
      const sentDigest = digest(sent);
      let matched = false;
      for (const candidate of expected) matched = timingSafeEqual(sentDigest, candidate) || matched;
      if (!matched) throw refuse('mismatch', ctx.path, ctx.req.socket.remoteAddress);
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
