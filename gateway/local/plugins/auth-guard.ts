/**
 * The project's auth-guard plugin (gateway/plugins/auth-guard/handler.lua), step for step:
 * - access (PRIORITY 1260, before key-auth): the client IP's counter for the current clock minute
 *   (key "auth-guard:<ip>:<window start>" in the counters shared with rate-limiting, Kong's
 *   kong_rate_limiting_counters dictionary); once it has reached `limit`, answer
 *   429 {"error":"Too many failed authentication attempts"} with Retry-After = seconds until the
 *   minute ends, before any key is looked up;
 * - log: when the response was a 401 the gateway answered itself (a plugin's exit: job-scopes'
 *   missing, unknown and duplicate key answers), count it in the window the request arrived in,
 *   60 s ttl. Successful requests, the service's own 401s and every other status do not count.
 * The client IP is kong.client.get_forwarded_ip(), $remote_addr here.
 */
import { definePlugin, optNumber, type Exit } from './definition';
import type { RateLimitCounters } from './rate-limiting';

export interface AuthGuardConfig {
  limit: number;
}

const WINDOW = 60;
const KEY_PREFIX = 'auth-guard:';
const STATE = 'auth-guard';

const TOO_MANY: Exit['body'] = JSON.stringify({ error: 'Too many failed authentication attempts' });

export function authGuardPlugin(counters: RateLimitCounters) {
  return definePlugin<AuthGuardConfig>({
    name: 'auth-guard',
    // PRIORITY in gateway/plugins/auth-guard/handler.lua (a test keeps the two equal).
    priority: 1260,
    parseConfig(raw) {
      const limit = optNumber(raw, 'limit', 10) ?? 10;
      if (!Number.isInteger(limit) || limit <= 0) throw new Error('limit: expected an integer greater than 0');
      return { limit };
    },
    access(ctx, conf) {
      const now = counters.time();
      const start = now - (now % WINDOW);
      const key = `${KEY_PREFIX}${ctx.clientIp}:${start}`;
      ctx.pluginState.set(STATE, key);
      if (counters.get(key) >= conf.limit) {
        return {
          status: 429,
          body: TOO_MANY,
          headers: { 'Retry-After': String(start + WINDOW - now), 'Content-Type': 'application/json; charset=utf-8' },
        };
      }
      return undefined;
    },
    log(ctx) {
      const key = ctx.pluginState.get(STATE) as string | undefined;
      if (!key || ctx.status !== 401 || ctx.source !== 'exit') return;
      counters.increment(key, WINDOW);
    },
  });
}
