/**
 * request-termination as kong.yaml configures it (Kong 3.9.1 kong/plugins/request-termination/handler.lua):
 * a fixed body with its content type, never the upstream. Only what the catch-all route sets.
 */
import { z } from 'zod';
import { definePlugin, parseWith } from './definition';

const Config = z.strictObject({
  status_code: z.number().int().min(100).max(599),
  content_type: z.string().min(1),
  body: z.string(),
});

export const requestTermination = definePlugin<z.infer<typeof Config>>({
  name: 'request-termination',
  priority: 2,
  parseConfig: parseWith(Config),
  access: (_ctx, conf) => ({
    status: conf.status_code,
    body: conf.body,
    headers: { 'Content-Type': conf.content_type },
  }),
});
