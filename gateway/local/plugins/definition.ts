import type { z } from 'zod';
import type { PluginScope } from '../entities';
import type { Exit } from '../kong-error';
import type { RequestContext } from '../request-context';

export type { Exit, PluginScope };

export interface PluginDefinition<Conf> {
  name: string;
  /** Kong's handler PRIORITY: plugins run from the highest to the lowest. */
  priority: number;
  /** Config fields the local gateway does not use (dropped before vault references are resolved). */
  unusedFields?: readonly string[];
  /** Checks the options our state files set; throws naming the field. */
  parseConfig(raw: Record<string, unknown>): Conf;
  access(ctx: RequestContext, conf: Conf, scope: PluginScope): Exit | undefined | Promise<Exit | undefined>;
  /** Runs on every response, proxied or not, once access ran for this plugin. */
  headerFilter?(ctx: RequestContext, conf: Conf): void;
  /** Kong's log phase: after the response was sent (ctx.status, ctx.source are set). */
  log?(ctx: RequestContext, conf: Conf, scope: PluginScope): void;
}

export function definePlugin<Conf>(definition: PluginDefinition<Conf>): PluginDefinition<unknown> {
  return definition;
}

/** parseConfig from a strict zod schema: an option no state file sets is refused by name. */
export function parseWith<S extends z.ZodType>(schema: S): (raw: Record<string, unknown>) => z.infer<S> {
  return (raw) => {
    const result = schema.safeParse(raw);
    if (result.success) return result.data;
    const issue = result.error.issues[0]!;
    const keys = 'keys' in issue && Array.isArray(issue.keys) ? `: ${issue.keys.join(', ')}` : '';
    throw new Error(
      `${issue.path.join('.') || '(config)'}: ${issue.message}${keys} (the local gateway reproduces what our state files set; run real Kong for the rest)`,
    );
  };
}
