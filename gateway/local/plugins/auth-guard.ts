/** The project's auth-guard plugin (gateway/plugins/auth-guard/handler.lua), step for step. */
import { z } from 'zod';
import { definePlugin, parseWith, type Exit } from './definition';
import { presentedKey } from './key-auth';
import type { RateLimitCounters } from './job-rate-limits';

// schema.lua: limit > 0 (default 10), key_names at least one (default apikey)
const Config = z
  .strictObject({
    limit: z.number().int().positive().default(10),
    key_names: z.array(z.string()).min(1).default(['apikey']),
  })
  .transform((c) => ({ limit: c.limit, keyNames: c.key_names }));

export type AuthGuardConfig = z.infer<typeof Config>;

const WINDOW = 60;
const STATE = 'auth-guard';

export function authGuardPlugin(counters: RateLimitCounters) {
  return definePlugin<AuthGuardConfig>({
    name: 'auth-guard',
    // PRIORITY in gateway/plugins/auth-guard/handler.lua (a test keeps the two equal).
    priority: 1260,
    parseConfig: parseWith(Config),
    access(ctx, conf) {
      const now = counters.time();
      const start = now - (now % WINDOW);
      const key = `${STATE}:${ctx.clientIp}:${start}`;
      ctx.pluginState.set(STATE, key);
      if (counters.get(key) < conf.limit) return undefined;
      const apiKey = presentedKey(ctx, conf.keyNames);
      if (apiKey && ctx.config.credentialsByKey.has(apiKey)) return undefined;
      const headers = {
        'Retry-After': String(start + WINDOW - now),
        'Content-Type': 'application/json; charset=utf-8',
      };
      return {
        status: 429,
        body: JSON.stringify({ error: 'Too many failed authentication attempts' }),
        headers,
      } satisfies Exit;
    },
    log(ctx) {
      const key = ctx.pluginState.get(STATE) as string | undefined;
      if (!key || ctx.status !== 401 || ctx.source !== 'exit') return;
      counters.increment(key, WINDOW);
    },
  });
}
