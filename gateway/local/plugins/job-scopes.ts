/**
 * The project's job-scopes plugin (gateway/plugins/job-scopes/handler.lua), step for step:
 * 1. repeat key-auth's key search on the live request (header, then query, per key name) to tell
 *    a missing key (none, or empty) from a sent or duplicated one;
 * 2. strip every key name from the upstream headers (also with `_`/`-` swapped) and the query
 *    (clear_query_arg, only for names the query holds); clear client copies of X-Consumer-Groups
 *    and X-Gateway-Secret;
 * 3. no credential: 401 missing or invalid (WWW-Authenticate: Key realm="kong"); group `disabled`:
 *    403; no ACL group equal to required_scope (a consumer with no group at all included, which
 *    Kong's acl groups module returns as nil): 403 with requiredScope;
 * 4. success: X-Consumer-Groups = the consumer's jobs:* groups, sorted, joined by ", " (when any),
 *    X-Gateway-Secret = gateway_secret (when set and not empty).
 * Its answers are kong.response.exit bodies (JSON), not error-template bodies.
 */
import type { RequestContext } from '../request-context';
import { definePlugin, oneOf, optString, optStringArray, type Exit } from './definition';

export interface JobScopesConfig {
  requiredScope: 'jobs:read' | 'jobs:write';
  gatewaySecret: string | null;
  keyNames: string[];
}

const REALM = { 'WWW-Authenticate': 'Key realm="kong"' };

function exit(status: number, body: Record<string, string>, headers: Record<string, string> = {}): Exit {
  return { status, body: JSON.stringify(body), headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' } };
}

type KeyState = 'missing' | 'sent' | 'duplicate';

function findKey(ctx: RequestContext, keyNames: string[]): KeyState {
  for (const name of keyNames) {
    const v = ctx.getHeader(name) ?? ctx.query.get(name);
    if (typeof v === 'string') return v === '' ? 'missing' : 'sent';
    if (Array.isArray(v)) return 'duplicate';
  }
  return 'missing';
}

/**
 * clear_query_arg re-encodes the rest of a non-empty query (query.ts), so, as in handler.lua, it
 * runs only for a name the query holds, or for every name when the query had more than 100
 * arguments (a key past that limit is invisible to the search but must not be forwarded).
 */
function stripKeys(ctx: RequestContext, keyNames: string[]): void {
  const query = ctx.query;
  const truncated = ctx.queryTruncated;
  for (const name of keyNames) {
    ctx.clearHeader(name);
    ctx.clearHeader(name.replace(/_/g, '-'));
    ctx.clearHeader(name.replace(/-/g, '_'));
    if (truncated || query.has(name)) ctx.clearQueryArg(name);
  }
}

export const jobScopes = definePlugin<JobScopesConfig>({
  name: 'job-scopes',
  // PRIORITY in gateway/plugins/job-scopes/handler.lua (a test keeps the two equal).
  priority: 990,
  parseConfig(raw) {
    const keyNames = optStringArray(raw, 'key_names', ['X-API-Key', 'api_key']);
    if (keyNames.length === 0) throw new Error('key_names: at least one name is required');
    return {
      requiredScope: oneOf(optString(raw, 'required_scope', null), 'required_scope', ['jobs:read', 'jobs:write'] as const, 'is not allowed'),
      gatewaySecret: optString(raw, 'gateway_secret', null),
      keyNames,
    };
  },
  access(ctx, conf) {
    const keyState = findKey(ctx, conf.keyNames);
    stripKeys(ctx, conf.keyNames);
    // Stryker disable next-line StringLiteral: a request that passes always gets X-Consumer-Groups set below (never empty) and one that fails is not proxied; cleared first as handler.lua does
    ctx.clearHeader('X-Consumer-Groups');
    ctx.clearHeader('X-Gateway-Secret');

    const consumer = ctx.consumer;
    if (!ctx.credential || !consumer) {
      return keyState === 'missing'
        ? exit(401, { error: 'Missing API key. Pass your key in the X-API-Key header.' }, REALM)
        : exit(401, { error: 'Invalid API key' }, REALM);
    }
    if (consumer.groups.includes('disabled')) return exit(403, { error: 'API key disabled' });
    if (!consumer.groups.includes(conf.requiredScope)) {
      return exit(403, { error: `Missing scope ${conf.requiredScope}`, requiredScope: conf.requiredScope });
    }
    const scopes = consumer.groups.filter((g) => g.startsWith('jobs:')).sort();
    // Stryker disable next-line ConditionalExpression,EqualityOperator: here the consumer holds required_scope, a jobs:* group, so scopes is never empty (handler.lua keeps the same guard)
    if (scopes.length > 0) ctx.setHeader('X-Consumer-Groups', scopes.join(', '));
    if (conf.gatewaySecret) ctx.setHeader('X-Gateway-Secret', conf.gatewaySecret);
    return undefined;
  },
});
