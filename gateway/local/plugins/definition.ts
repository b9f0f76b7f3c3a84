import type { RequestContext } from '../request-context';

/** A response a plugin sends instead of proxying (Kong's kong.response.exit / kong.response.error). */
export interface Exit {
  status: number;
  body: string;
  headers: Record<string, string>;
  /** nginx's own refusals close the connection after the answer (keepalive off). */
  close?: boolean;
}

/** The entity a plugin instance is attached to (rate-limiting keys its counters on it, as Kong does). */
export interface PluginScope {
  routeId: string | null;
  serviceId: string | null;
}

export interface PluginDefinition<Conf> {
  name: string;
  /** Kong's handler PRIORITY: plugins run from the highest to the lowest. */
  priority: number;
  /** Config fields the local gateway does not use (dropped before vault references are resolved). */
  unusedFields?: readonly string[];
  /** Applies the plugin schema's defaults and checks; throws with a readable message. */
  parseConfig(raw: Record<string, unknown>): Conf;
  access(ctx: RequestContext, conf: Conf, scope: PluginScope): Exit | undefined | Promise<Exit | undefined>;
  /** Runs on every response, proxied or not, once access ran for this plugin. */
  headerFilter?(ctx: RequestContext, conf: Conf): void;
  /** Kong's log phase: after the response was sent (ctx.status, ctx.source are set). */
  log?(ctx: RequestContext, conf: Conf, scope: PluginScope): void;
}

export function definePlugin<Conf>(definition: PluginDefinition<Conf>): PluginDefinition<unknown> {
  return definition as unknown as PluginDefinition<unknown>;
}

/* Small readers for plugin configs: each names the field in its error. */

export function optString(raw: Record<string, unknown>, field: string, fallback: string | null): string | null {
  const v = raw[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string') throw new Error(`${field}: expected a string`);
  return v;
}

export function optBool(raw: Record<string, unknown>, field: string, fallback: boolean): boolean {
  const v = raw[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw new Error(`${field}: expected a boolean`);
  return v;
}

export function optNumber(raw: Record<string, unknown>, field: string, fallback: number | null): number | null {
  const v = raw[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${field}: expected a number`);
  return v;
}

export function optStringArray(raw: Record<string, unknown>, field: string, fallback: string[]): string[] {
  const v = raw[field];
  if (v === undefined || v === null) return fallback;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`${field}: expected an array of strings`);
  return v as string[];
}

export function oneOf<T extends string>(value: string | null, field: string, allowed: readonly T[], why: string): T {
  if (value === null || !(allowed as readonly string[]).includes(value)) {
    throw new Error(`${field}: ${JSON.stringify(value)} ${why} (supported: ${allowed.join(', ')})`);
  }
  return value as T;
}
