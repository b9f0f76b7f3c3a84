/** The configuration the local gateway serves, built from the state files by config/build.ts. */
import type { Consumer, Credential, PluginScope, Service } from './entities';
import type { PluginDefinition } from './plugins/definition';

export type { Consumer, Credential, Service };

/** A configured plugin and the entity it is attached to (rate-limiting keys its counters on it). */
export interface PluginInstance extends PluginScope {
  name: string;
  definition: PluginDefinition<unknown>;
  config: unknown;
}

export interface Route {
  id: string;
  name: string;
  methods: string[] | null;
  /** The `~` paths of the state file, as anchored regexes. */
  paths: RegExp[];
  service: Service;
  /** Route, service and global plugins merged, by descending priority. */
  plugins: PluginInstance[];
}

export interface GatewayConfig {
  routes: Route[];
  globalPlugins: PluginInstance[];
  consumersByIdOrUsername: Map<string, Consumer>;
  credentialsByKey: Map<string, Credential>;
  /** The merged `_info.select_tags` of the state files. */
  selectTags: string[];
  /** Kong's error_template_json (gateway/kong/error-template.json in production). */
  errorTemplate: string;
}
