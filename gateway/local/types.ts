/** The configuration the local gateway serves, built from kong.yaml by config/state.ts. */

import type { PluginDefinition } from './plugins/definition';

export interface Consumer {
  id: string;
  username?: string;
  custom_id?: string;
  /** ACL groups (the `acls` of the consumer in kong.yaml), in file order. */
  groups: string[];
}

export interface Credential {
  id: string;
  consumer: Consumer;
}

export interface PluginInstance {
  name: string;
  definition: PluginDefinition<unknown>;
  config: unknown;
  /** The entity the plugin is attached to; rate-limiting keys its counters on it, as Kong does. */
  routeId: string | null;
  serviceId: string | null;
}

export interface Service {
  id: string;
  name: string;
  host: string;
  port: number;
  path: string | null;
  connectTimeout: number;
  readTimeout: number;
  writeTimeout: number;
  plugins: PluginInstance[];
}

export interface RoutePath {
  /** The path as written in kong.yaml. */
  source: string;
  regex: RegExp | null;
  prefix: string | null;
}

export interface Route {
  id: string;
  name: string;
  methods: string[] | null;
  paths: RoutePath[];
  regexPriority: number;
  preserveHost: boolean;
  service: Service;
  plugins: PluginInstance[];
}

export interface GatewayConfig {
  routes: Route[];
  globalPlugins: PluginInstance[];
  consumersByIdOrUsername: Map<string, Consumer>;
  credentialsByKey: Map<string, Credential>;
  /** The merged `_info.select_tags` of the state files: decK tags every entity it syncs with them. */
  selectTags: string[];
  /** Kong's error_template_json (KONG_ERROR_TEMPLATE_JSON), or Kong's built-in one. */
  errorTemplate: string;
}
