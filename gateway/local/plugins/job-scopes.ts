/** The project's job-scopes plugin (gateway/plugins/job-scopes/handler.lua) step for step. */
import type { RequestContext } from '../request-context';
import { z } from 'zod';
import type { CHALLENGE_HEADERS, HeaderValues } from '../../../service/headers';
import { definePlugin, parseWith, type Exit } from './definition';
import { presentedKey } from './key-auth';

const Config = z.strictObject({
  required_scope: z.enum(['jobs:read', 'jobs:write']),
  // Unset when its vault reference does not resolve.
  gateway_secret: z.string().optional(),
});

/** schema.lua's default key_names, what kong.yaml's key-auth uses. */
const KEY_NAMES = ['X-API-Key', 'api_key'];

const REALM: HeaderValues<typeof CHALLENGE_HEADERS> = { 'WWW-Authenticate': 'Key realm="kong"' };

function exit(status: number, body: Record<string, string>, headers: Record<string, string> = {}): Exit {
  return {
    status,
    body: JSON.stringify(body),
    headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' },
  };
}

/** clear_query_arg re-encodes the query, so only for a name it holds (or past 100 arguments, where a key hides). */
function stripKeys(ctx: RequestContext, keyNames: string[]): void {
  const { args: query, truncated } = ctx.query;
  for (const name of keyNames) {
    ctx.clearHeader(name);
    ctx.clearHeader(name.replace(/_/g, '-'));
    ctx.clearHeader(name.replace(/-/g, '_'));
    if (truncated || query.has(name)) ctx.clearQueryArg(name);
  }
}

export const jobScopes = definePlugin<z.infer<typeof Config>>({
  name: 'job-scopes',
  // PRIORITY in gateway/plugins/job-scopes/handler.lua.
  priority: 990,
  parseConfig: parseWith(Config),
  access(ctx, conf) {
    const sent = presentedKey(ctx, KEY_NAMES);
    stripKeys(ctx, KEY_NAMES);
    ctx.clearHeader('X-Consumer-Groups');
    ctx.clearHeader('X-Gateway-Secret');

    const consumer = ctx.consumer;
    if (!ctx.credential || !consumer) {
      return sent === null
        ? exit(401, { error: 'Missing API key. Pass your key in the X-API-Key header.' }, REALM)
        : exit(401, { error: 'Invalid API key' }, REALM);
    }
    if (consumer.groups.includes('disabled')) return exit(403, { error: 'API key disabled' });
    if (!consumer.groups.includes(conf.required_scope)) {
      return exit(403, { error: `Missing scope ${conf.required_scope}`, requiredScope: conf.required_scope });
    }
    ctx.setHeader(
      'X-Consumer-Groups',
      consumer.groups
        .filter((g) => g.startsWith('jobs:'))
        .sort()
        .join(', '),
    );
    if (conf.gateway_secret) ctx.setHeader('X-Gateway-Secret', conf.gateway_secret);
    return undefined;
  },
});
