/** What tests of load, not of the quotas, do to a state file (real Kong's or the local gateway's). */
import type { DeclarativeConfig } from '../../harness/real-kong';

/** A state's edit for a test of load, not of the quotas: every route's job-rate-limits out of the way. */
export function limitsOutOfTheWay(config: DeclarativeConfig): void {
  for (const route of (config.services as DeclarativeConfig[]).flatMap((s) => s.routes as DeclarativeConfig[])) {
    for (const plugin of (route.plugins ?? []) as DeclarativeConfig[])
      if (plugin.name === 'job-rate-limits') Object.assign(plugin.config, { minute: 1_000_000, hour: 10_000_000 });
  }
}
