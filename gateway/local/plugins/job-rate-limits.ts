/**
 * The project's job-rate-limits plugin (gateway/plugins/job-rate-limits/handler.lua) as kong.yaml
 * configures it: second, minute and hour windows on the UTC clock, per consumer (or client IP: limit_by ip,
 * the docs route) and route. Kong counts in each node's memory and adds the counts to Redis every
 * sync_rate seconds; this one process is one node alone, whose count after a sync is the count
 * before it, so it counts in memory and never syncs. A request is counted in every window only when
 * none is full. RateLimit-Limit/-Remaining/-Reset describe the window with the fewest left (a tie
 * to the longer); RateLimit-Policy and RateLimit list every window.
 */
import { z } from 'zod';
import { RATE_LIMIT_HEADERS, RETRY_HEADERS, type HeaderValues } from '../../../service/headers';
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
    this.counts.set(key, {
      value: live ? entry.value + 1 : 1,
      expiresAt: live ? entry.expiresAt : now + ttlSeconds * 1000,
    });
    // Expired counters are dropped once there are many, so the map stays bounded.
    if (this.counts.size > 10000) for (const [k, e] of this.counts) if (e.expiresAt <= now) this.counts.delete(k);
  }
}

// schema.lua: second, minute and/or hour > 0, limit_by consumer|ip, error_code 400-499, sync_rate 0.02-60 s, redis required.
const Config = z
  .strictObject({
    second: z.number().int().positive().optional(),
    minute: z.number().int().positive().optional(),
    hour: z.number().int().positive().optional(),
    limit_by: z.enum(['consumer', 'ip']).default('consumer'),
    error_code: z.number().int().min(400).max(499).default(429),
    error_message: z.string().default('Rate limit exceeded'),
    // Checked as Kong checks it; one node alone counts the same whenever it would sync.
    sync_rate: z.number().min(0.02).max(60).default(0.2),
  })
  .refine((c) => c.second !== undefined || c.minute !== undefined || c.hour !== undefined, {
    message: 'at least one of second, minute, hour is required',
  });

type Config = z.infer<typeof Config>;

const WINDOWS = [
  ['second', 1],
  ['minute', 60],
  ['hour', 3600],
] as const;

export function jobRateLimitsPlugin(counters: RateLimitCounters) {
  return definePlugin<Config>({
    name: 'job-rate-limits',
    // PRIORITY in gateway/plugins/job-rate-limits/handler.lua.
    priority: 910,
    // One process is one node alone: the Redis it would share counts in is not used (nor resolved).
    unusedFields: ['redis'],
    parseConfig: parseWith(Config),
    access(ctx, conf, scope): Exit | undefined {
      const now = counters.time();
      const who = (conf.limit_by === 'consumer' && (ctx.consumer?.id ?? ctx.credential?.id)) || ctx.clientIp;
      const windows = WINDOWS.flatMap(([name, seconds]) => {
        const limit = conf[name];
        if (limit === undefined) return [];
        const start = now - (now % seconds);
        const key = `ratelimit:${scope.routeId}:${scope.serviceId}:${who}:${start * 1000}:${name}`;
        return [{ name, seconds, limit, key, count: counters.get(key), reset: start + seconds - now }];
      });
      const full = windows.some((w) => w.count >= w.limit);
      if (!full) {
        for (const w of windows) {
          counters.increment(w.key, w.seconds);
          w.count += 1;
        }
      }
      let chosen = windows[0]!;
      for (const w of windows)
        if (Math.max(0, w.limit - w.count) <= Math.max(0, chosen.limit - chosen.count)) chosen = w;
      const left = (w: (typeof windows)[number]) => Math.max(0, w.limit - w.count);
      const headers: HeaderValues<typeof RATE_LIMIT_HEADERS> = {
        'RateLimit-Limit': String(chosen.limit),
        'RateLimit-Remaining': String(left(chosen)),
        'RateLimit-Reset': String(chosen.reset),
        'RateLimit-Policy': windows.map((w) => `"${w.name}";q=${w.limit};w=${w.seconds}`).join(', '),
        RateLimit: windows.map((w) => `"${w.name}";r=${left(w)};t=${w.reset}`).join(', '),
      };
      const retry: HeaderValues<typeof RETRY_HEADERS> = { 'Retry-After': String(chosen.reset) };
      if (full) return ctx.error(conf.error_code, conf.error_message, { ...headers, ...retry });
      for (const name in headers) ctx.responseHeaders.set(name, headers[name as keyof typeof headers]);
      return undefined;
    },
  });
}
