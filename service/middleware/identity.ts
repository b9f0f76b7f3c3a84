import type { Middleware } from 'koa';

/**
 * Who is calling, as the gateway authenticated them. Scopes (X-Consumer-Groups) are enforced by
 * the gateway's job-scopes plugin; the service needs only the caller's id and, for logs, name.
 */
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

/**
 * Reads the identity headers the gateway sets (and strips from client requests). The service
 * trusts them because only the gateway can reach it (and, with GATEWAY_SECRET, proves it).
 */
export function identity(): Middleware {
  return async (ctx, next) => {
    const id = header(ctx.req.headers['x-consumer-id']);
    if (id && CONSUMER_ID.test(id)) {
      ctx.state.consumer = { id, username: header(ctx.req.headers['x-consumer-username']) };
    }
    await next();
  };
}
