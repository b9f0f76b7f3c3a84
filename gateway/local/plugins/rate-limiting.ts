/**
 * rate-limiting as in Kong 3.9 with `policy: local` or `redis` (kong/plugins/rate-limiting/
 * handler.lua and policies/init.lua), counted in this process's memory: the local gateway is one
 * node, so `local` is exact, and `redis` (every node counting in one Redis) counts the same:
 * the redis block is accepted but not used, not even resolved;
 * - fixed windows aligned to the clock in UTC (second, minute, hour, day, month, year), time taken
 *   in whole seconds; one counter per plugin instance (its route/service), identifier and window;
 * - a request is refused when any window has no requests left; otherwise it counts in every window;
 * - X-RateLimit-Limit-<Window> and X-RateLimit-Remaining-<Window> for each configured window;
 *   RateLimit-Limit/-Remaining/-Reset describe the window with the fewest requests left (ties go
 *   to the longer window); Reset is the seconds until that window ends (at least 1);
 * - over the limit: error_code with error_message through the error template, plus Retry-After
 *   (the same value as RateLimit-Reset).
 */
import type { RequestContext } from '../request-context';
import { definePlugin, oneOf, optBool, optNumber, optString, type Exit } from './definition';

export const PERIODS = ['second', 'minute', 'hour', 'day', 'month', 'year'] as const;
export type Period = (typeof PERIODS)[number];

/** kong/plugins/rate-limiting/expiration.lua */
const EXPIRATION: Record<Period, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86400,
  month: 2592000,
  year: 31536000,
};

const TITLE: Record<Period, string> = {
  second: 'Second',
  minute: 'Minute',
  hour: 'Hour',
  day: 'Day',
  month: 'Month',
  year: 'Year',
};

export interface RateLimitingConfig {
  limits: Array<[Period, number]>;
  limitBy: 'consumer' | 'credential' | 'ip' | 'service';
  errorCode: number;
  errorMessage: string;
  hideClientHeaders: boolean;
}

/** kong.tools.timestamp.get_timestamps: the start (ms, UTC) of each window containing `nowMs`. */
export function windowStarts(nowMs: number): Record<Period, number> {
  const d = new Date(nowMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return {
    second: Math.floor(nowMs / 1000) * 1000,
    minute: Date.UTC(y, m, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()),
    hour: Date.UTC(y, m, d.getUTCDate(), d.getUTCHours()),
    day: Date.UTC(y, m, d.getUTCDate()),
    month: Date.UTC(y, m, 1),
    year: Date.UTC(y, 0, 1),
  };
}

/** The counters of a running gateway. They survive configuration reloads, as Kong's shm does. */
export class RateLimitCounters {
  private readonly counts = new Map<string, { value: number; expiresAt: number }>();
  constructor(private readonly now: () => number = Date.now) {}

  nowSeconds(): number {
    return Math.floor(this.now() / 1000) * 1000;
  }

  /** ngx.time(): whole seconds. */
  time(): number {
    return Math.floor(this.now() / 1000);
  }

  get(key: string): number {
    const entry = this.counts.get(key);
    if (!entry || entry.expiresAt <= this.now()) return 0;
    return entry.value;
  }

  /** Counters kept, expired ones included until the next sweep (past 10,000 counters). */
  get size(): number {
    return this.counts.size;
  }

  increment(key: string, ttlSeconds: number): void {
    const now = this.now();
    const entry = this.counts.get(key);
    if (!entry || entry.expiresAt <= now) this.counts.set(key, { value: 1, expiresAt: now + ttlSeconds * 1000 });
    else entry.value += 1;
    if (this.counts.size > 10000) {
      for (const [k, e] of this.counts) if (e.expiresAt <= now) this.counts.delete(k);
    }
  }
}

const EMPTY_UUID = '00000000-0000-0000-0000-000000000000';

function identifier(ctx: RequestContext, conf: RateLimitingConfig): string {
  const ip = ctx.clientIp;
  switch (conf.limitBy) {
    case 'consumer':
      return ctx.consumer?.id ?? ctx.credential?.id ?? ip;
    case 'credential':
      return ctx.credential?.id ?? ip;
    case 'service':
      return ctx.route?.service.id ?? ip;
    default:
      return ip;
  }
}

/** X-RateLimit-Limit-<Window> and X-RateLimit-Remaining-<Window>, built once. */
const LIMIT_HEADER = Object.fromEntries(PERIODS.map((p) => [p, `X-RateLimit-Limit-${TITLE[p]}`])) as Record<Period, string>;
const REMAINING_HEADER = Object.fromEntries(PERIODS.map((p) => [p, `X-RateLimit-Remaining-${TITLE[p]}`])) as Record<Period, string>;

export function rateLimitingPlugin(counters: RateLimitCounters) {
  // The windows of the current second, computed once per second rather than once per request.
  let startsAt = Number.NaN;
  let starts = windowStarts(0);
  return definePlugin<RateLimitingConfig>({
    name: 'rate-limiting',
    priority: 910,
    unusedFields: ['redis'],
    parseConfig(raw) {
      const limits: Array<[Period, number]> = [];
      for (const period of PERIODS) {
        const limit = optNumber(raw, period, null);
        if (limit !== null) limits.push([period, limit]);
      }
      if (limits.length === 0) throw new Error('at least one of second, minute, hour, day, month or year is required');
      // One process is one node: counting in-process is exact for `local`, and gives what a
      // `redis` policy shared by every node gives (the redis settings are not used).
      const policy = optString(raw, 'policy', 'local');
      oneOf(policy, 'policy', ['local', 'redis'] as const, 'is not reproduced by the local gateway');
      return {
        limits,
        limitBy: oneOf(optString(raw, 'limit_by', 'consumer'), 'limit_by', ['consumer', 'credential', 'ip', 'service'] as const, 'is not reproduced by the local gateway'),
        errorCode: optNumber(raw, 'error_code', 429) ?? 429,
        errorMessage: optString(raw, 'error_message', 'API rate limit exceeded') ?? 'API rate limit exceeded',
        hideClientHeaders: optBool(raw, 'hide_client_headers', false),
      };
    },
    access(ctx, conf, scope): Exit | undefined {
      const now = counters.nowSeconds();
      // Stryker disable next-line ConditionalExpression: a cache: recomputing the windows every time gives the same starts
      if (now !== startsAt) {
        starts = windowStarts(now);
        startsAt = now;
      }
      // Kong's cache key shape; it only has to be unique per route, service, identifier and window.
      // Stryker disable next-line LogicalOperator: see above
      const prefix = `ratelimit:${scope.routeId ?? EMPTY_UUID}:${scope.serviceId ?? EMPTY_UUID}:${identifier(ctx, conf)}:`;
      const limits = conf.limits;
      const keys: string[] = [];
      const remainingBefore: number[] = [];
      let stop: Period | null = null;
      for (const [period, limit] of limits) {
        const key = `${prefix}${starts[period]}:${period}`;
        const remaining = limit - counters.get(key);
        keys.push(key);
        remainingBefore.push(remaining);
        if (remaining <= 0) stop = period;
      }

      const headers: Record<string, string> = {};
      let reset = 0;
      if (!conf.hideClientHeaders) {
        let chosenLimit = 0;
        let chosenRemaining = Infinity;
        for (let i = 0; i < limits.length; i++) {
          const [period, limit] = limits[i]!;
          // This request counts unless refused. (Kong also takes one off the window that refused
          // it, which has none left: after the clamp at 0 that changes nothing.)
          const remaining = Math.max(0, remainingBefore[i]! - (stop === null ? 1 : 0));
          const window = EXPIRATION[period];
          // The fewest left wins; `limits` runs from the shortest window to the longest, so `<=`
          // gives a tie to the longer window, as handler.lua's `current_window > window` does.
          if (remaining <= chosenRemaining) {
            chosenLimit = limit;
            chosenRemaining = remaining;
            reset = Math.max(1, window - Math.floor((now - starts[period]) / 1000));
          }
          headers[LIMIT_HEADER[period]] = String(limit);
          headers[REMAINING_HEADER[period]] = String(remaining);
        }
        headers['RateLimit-Limit'] = String(chosenLimit);
        headers['RateLimit-Remaining'] = String(chosenRemaining);
        headers['RateLimit-Reset'] = String(reset);
      }

      if (stop !== null) {
        // Kong sets Retry-After from `reset`, which is only computed when client headers are shown.
        if (!conf.hideClientHeaders) headers['Retry-After'] = String(reset);
        return ctx.error(conf.errorCode, conf.errorMessage, headers);
      }
      for (const name in headers) ctx.responseHeaders.set(name, headers[name]!);
      for (let i = 0; i < limits.length; i++) counters.increment(keys[i]!, EXPIRATION[limits[i]![0]]);
      return undefined;
    },
  });
}
