/**
 * The project's auth-guard plugin (gateway/plugins/auth-guard/handler.lua), step for step:
 * - access (PRIORITY 1260, before key-auth): the client IP's counter for the current clock minute
 *   (key "auth-guard:<ip>:<window start>" in the counters shared with rate-limiting, Kong's
 *   kong_rate_limiting_counters dictionary); once it has reached `limit`, the request goes on only
 *   when the key it carries (found as key-auth finds it: key_names in order, header then query;
 *   missing, empty or duplicate is no key) is a known credential. Kong asks only its cache, which
 *   kong.conf warms with every credential; here every credential of the state files is in memory.
 *   Anything else: 429 {"error":"Too many failed authentication attempts"} with Retry-After =
 *   seconds until the minute ends;
 * - log: when the response was a 401 the gateway answered itself (a plugin's exit: job-scopes'
 *   missing, unknown and duplicate key answers), count it in the window the request arrived in,
 *   60 s ttl. Successful requests, the service's own 401s and every other status do not count.
 * The client IP is kong.client.get_forwarded_ip(), $remote_addr here.
 */
import type { RequestContext } from '../request-context';
import { definePlugin, optNumber, optStringArray, type Exit } from './definition';
import type { RateLimitCounters } from './rate-limiting';

export interface AuthGuardConfig {
  limit: number;
  keyNames: string[];
}

const WINDOW = 60;
const KEY_PREFIX = 'auth-guard:';
const STATE = 'auth-guard';

const TOO_MANY: Exit['body'] = JSON.stringify({ error: 'Too many failed authentication attempts' });

/** The key as key-auth finds it, or null when it is missing, empty or sent twice. */
function presentedKey(ctx: RequestContext, keyNames: readonly string[]): string | null {
  for (const name of keyNames) {
    const v = ctx.getHeader(name) ?? ctx.query.get(name);
    if (typeof v === 'string') return v === '' ? null : v;
    if (Array.isArray(v)) return null;
  }
  return null;
}

export function authGuardPlugin(counters: RateLimitCounters) {
  return definePlugin<AuthGuardConfig>({
    name: 'auth-guard',
    // PRIORITY in gateway/plugins/auth-guard/handler.lua (a test keeps the two equal).
    priority: 1260,
    parseConfig(raw) {
      const limit = optNumber(raw, 'limit', 10) ?? 10;
      if (!Number.isInteger(limit) || limit <= 0) throw new Error('limit: expected an integer greater than 0');
      const keyNames = optStringArray(raw, 'key_names', ['apikey']);
      if (keyNames.length === 0) throw new Error('key_names: at least one name is required');
      return { limit, keyNames };
    },
    access(ctx, conf) {
      const now = counters.time();
      const start = now - (now % WINDOW);
      const key = `${KEY_PREFIX}${ctx.clientIp}:${start}`;
      ctx.pluginState.set(STATE, key);
      if (counters.get(key) < conf.limit) return undefined;
      const apiKey = presentedKey(ctx, conf.keyNames);
      if (apiKey !== null && ctx.config.credentialsByKey.has(apiKey)) return undefined;
      return {
        status: 429,
        body: TOO_MANY,
        headers: { 'Retry-After': String(start + WINDOW - now), 'Content-Type': 'application/json; charset=utf-8' },
      };
    },
    log(ctx) {
      const key = ctx.pluginState.get(STATE) as string | undefined;
      if (!key || ctx.status !== 401 || ctx.source !== 'exit') return;
      counters.increment(key, WINDOW);
    },
  });
}
