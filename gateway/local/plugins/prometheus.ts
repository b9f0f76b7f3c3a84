/**
 * prometheus (Kong's bundled plugin, configured globally in kong.yaml): it only records metrics,
 * which Kong serves on its status listener, never on the proxy; it changes no request or
 * response. The local gateway has no status listener, so it accepts the plugin's configuration
 * (checking its fields' types) and records nothing.
 */
import { definePlugin, optBool } from './definition';

const FLAGS = ['per_consumer', 'status_code_metrics', 'latency_metrics', 'bandwidth_metrics', 'upstream_health_metrics', 'ai_metrics'];

export const prometheus = definePlugin<Record<string, boolean>>({
  name: 'prometheus',
  priority: 13,
  parseConfig(raw) {
    // Stryker disable next-line BooleanLiteral: nothing is recorded here, so no flag's value, given or defaulted, changes an answer
    return Object.fromEntries(FLAGS.map((flag) => [flag, optBool(raw, flag, false)]));
  },
  access() {
    return undefined;
  },
});
