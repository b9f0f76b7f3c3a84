import { authGuardPlugin } from './auth-guard';
import { correlationId } from './correlation-id';
import type { PluginDefinition } from './definition';
import { jobScopes } from './job-scopes';
import { keyAuth } from './key-auth';
import { rateLimitingPlugin, type RateLimitCounters } from './rate-limiting';
import { prometheus } from './prometheus';
import { requestSizeLimiting } from './request-size-limiting';

/** The plugins kong.yaml may use. Anything else is refused: only real Kong runs it. */
export function pluginRegistry(counters: RateLimitCounters): Map<string, PluginDefinition<unknown>> {
  return new Map(
    [correlationId, authGuardPlugin(counters), keyAuth, jobScopes, requestSizeLimiting, rateLimitingPlugin(counters), prometheus].map((p) => [p.name, p]),
  );
}
