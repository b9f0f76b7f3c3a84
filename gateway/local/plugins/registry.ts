import { authGuardPlugin } from './auth-guard';
import { definePlugin, type PluginDefinition } from './definition';
import { jobScopes } from './job-scopes';
import { keyAuth } from './key-auth';
import { jobRateLimitsPlugin, type RateLimitCounters } from './job-rate-limits';
import { requestSizeLimiting } from './request-size-limiting';
import { requestTermination } from './request-termination';

/** job-metrics only records metrics, served on Kong's status listener, never on the proxy: nothing to do here. */
const jobMetrics = definePlugin<Record<string, unknown>>({
  name: 'job-metrics',
  priority: 12,
  parseConfig: (raw) => raw,
  access: () => undefined,
});

/** The plugins our state files use. Anything else is refused: only real Kong runs it. */
export function pluginRegistry(counters: RateLimitCounters): Map<string, PluginDefinition<unknown>> {
  return new Map(
    [
      authGuardPlugin(counters),
      keyAuth,
      jobScopes,
      requestSizeLimiting,
      requestTermination,
      jobRateLimitsPlugin(counters),
      jobMetrics,
    ].map((p) => [p.name, p]),
  );
}
