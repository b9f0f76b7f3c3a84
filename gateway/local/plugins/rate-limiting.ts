/** rate-limiting as kong.yaml configures it (Kong 3.9 handler.lua). */
import { z } from 'zod';
import { definePlugin, parseWith, type Exit } from './definition';

/** The counters of a running gateway, shared with auth-guard. They survive configuration reloads. */
export class RateLimitCounters {
  private readonly counts = new Map<string, { value: number; expiresAt: number }>();
  constructor(private readonly now: () => number = Date.now) {}

  /** ngx.time(): whole seconds. */
  time(): number {
    return Math.floor(this.now() / 1000);
  }

  get(key: string): number {
    const entry = this.counts.get(key);
    return entry && entry.expiresAt > this.now() ? entry.value : 0;
  }

  increment(key: string, ttlSeconds: number): void {
    const now = this.now();
    const entry = this.counts.get(key);
    const live = entry !== undefined && entry.expiresAt > now;
    this.counts.set(key, { value: live ? entry.value + 1 : 1, expiresAt: live ? entry.expiresAt : now + ttlSeconds * 1000 });
    // Expired counters are dropped once there are many, so the map stays bounded.
    if (this.counts.size > 10000) for (const [k, e] of this.counts) if (e.expiresAt <= now) this.counts.delete(k);
  }
}

const Config = z.strictObject({
  second: z.number().int().positive().optional(),
  minute: z.number().int().positive().optional(),
  hour: z.number().int().positive().optional(),
  limit_by: z.enum(['consumer', 'ip']),
  policy: z.enum(['local', 'redis']),
  fault_tolerant: z.boolean(),
  error_code: z.number().int(),
  error_message: z.string(),
});

const WINDOWS = [['second', 'Second', 1], ['minute', 'Minute', 60], ['hour', 'Hour', 3600]] as const;

export function rateLimitingPlugin(counters: RateLimitCounters) {
  return definePlugin<z.infer<typeof Config>>({
    name: 'rate-limiting',
    priority: 910,
    // One process counts what the shared Redis would: its settings are not used (nor resolved).
    unusedFields: ['redis'],
    parseConfig: parseWith(Config),
    access(ctx, conf, scope): Exit | undefined {
      const now = counters.time();
      const who = (conf.limit_by === 'consumer' && (ctx.consumer?.id ?? ctx.credential?.id)) || ctx.clientIp;
      const windows = WINDOWS.flatMap(([field, title, seconds]) => {
        const limit = conf[field];
        if (limit === undefined) return [];
        const start = now - (now % seconds);
        const key = `ratelimit:${scope.routeId}:${scope.serviceId}:${who}:${start}:${field}`;
        return [{ title, seconds, limit, key, left: limit - counters.get(key), reset: start + seconds - now }];
      });
      const refused = windows.some((w) => w.left <= 0);
      const headers: Record<string, string> = {};
      let chosen = windows[0]!;
      for (const w of windows) {
        w.left = Math.max(0, w.left - (refused ? 0 : 1));
        if (w.left <= chosen.left) chosen = w;
        headers[`X-RateLimit-Limit-${w.title}`] = String(w.limit);
        headers[`X-RateLimit-Remaining-${w.title}`] = String(w.left);
      }
      headers['RateLimit-Limit'] = String(chosen.limit);
      headers['RateLimit-Remaining'] = String(chosen.left);
      headers['RateLimit-Reset'] = String(chosen.reset);
      if (refused) return ctx.error(conf.error_code, conf.error_message, { ...headers, 'Retry-After': String(chosen.reset) });
      for (const name in headers) ctx.responseHeaders.set(name, headers[name]!);
      for (const w of windows) counters.increment(w.key, w.seconds);
      return undefined;
    },
  });
}
