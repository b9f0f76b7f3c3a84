/** key-auth as kong.yaml configures it. */
import { z } from 'zod';
import type { RequestContext } from '../request-context';
import type { Consumer, Credential } from '../types';
import { definePlugin, parseWith } from './definition';

const Config = z.strictObject({
  key_names: z.array(z.string()).min(1),
  key_in_header: z.literal(true),
  key_in_query: z.literal(true),
  key_in_body: z.literal(false),
  hide_credentials: z.literal(false),
  anonymous: z.string(),
  run_on_preflight: z.literal(true),
});

/** kong.client.authenticate plus the headers set_consumer sets or clears. */
function setConsumer(ctx: RequestContext, consumer: Consumer, credential: Credential | null): void {
  ctx.consumer = consumer;
  ctx.credential = credential;
  const set = (name: string, value: string | undefined): void =>
    value !== undefined ? ctx.setHeader(name, value) : ctx.clearHeader(name);
  set('X-Consumer-ID', consumer.id);
  set('X-Consumer-Custom-ID', consumer.custom_id);
  set('X-Consumer-Username', consumer.username);
  set('X-Credential-Identifier', credential?.id);
  set('X-Anonymous-Consumer', credential ? undefined : 'true');
}

/** The key as key-auth finds it (per key name, the header, then the query): null when missing or empty, false when sent twice. */
export function presentedKey(ctx: RequestContext, keyNames: readonly string[]): string | null | false {
  for (const name of keyNames) {
    const v = ctx.getHeader(name) ?? ctx.query.args.get(name);
    if (Array.isArray(v)) return false;
    if (typeof v === 'string') return v || null;
  }
  return null;
}

export const keyAuth = definePlugin<z.infer<typeof Config>>({
  name: 'key-auth',
  priority: 1250,
  parseConfig: parseWith(Config),
  access(ctx, conf) {
    const key = presentedKey(ctx, conf.key_names);
    const credential = key ? ctx.config.credentialsByKey.get(key) : undefined;
    if (credential) {
      setConsumer(ctx, credential.consumer, credential);
      return undefined;
    }
    const anonymous = ctx.config.consumersByIdOrUsername.get(conf.anonymous);
    // 3.9.1 passes the nil it found to kong.client.authenticate, which raises: Kong's generic 500.
    if (!anonymous) return ctx.error(500, 'An unexpected error occurred');
    setConsumer(ctx, anonymous, null);
    return undefined;
  },
});
