/** The configuration the local gateway serves, built from the state files by state/build.ts. */
import type { PluginDefinition, PluginScope } from './plugins/definition';

/** groups: the consumer's ACL groups, in file order. */
export type Consumer = { id: string; username?: string; custom_id?: string; groups: string[] };

export type Credential = { id: string; consumer: Consumer };

/** A configured plugin and the entity it is attached to (job-rate-limits keys its counters on it). */
export interface PluginInstance extends PluginScope {
  name: string;
  definition: PluginDefinition<unknown>;
  config: unknown;
}

export type Service = { id: string; host: string; port: number; connectTimeout: number; readTimeout: number };

export interface Route {
  id: string;
  name: string;
  methods: string[] | null;
  /** The `~` paths of the state file, as anchored regexes (the prefix `/` as ^/). */
  paths: RegExp[];
  /** Plain prefix paths only: below every regex route of the same weight. */
  prefixOnly: boolean;
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
