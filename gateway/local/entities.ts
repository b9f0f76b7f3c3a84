/** Kong's entities as the local gateway keeps them (gateway/local/config/build.ts makes them from the state files). */

/** groups: the consumer's ACL groups, in file order. */
export type Consumer = { id: string; username?: string; custom_id?: string; groups: string[] };

export type Credential = { id: string; consumer: Consumer };

/** targets: the upstream's (round-robin), or the url's host and port; hostHeader: what Kong sends as Host with the target's port (null: the target's name). */
export type Service = {
  id: string;
  targets: Array<{ host: string; port: number }>;
  hostHeader: string | null;
  retries: number;
  connectTimeout: number;
  readTimeout: number;
};

/** The entity a plugin instance is attached to. */
export type PluginScope = { routeId: string | null; serviceId: string | null };
