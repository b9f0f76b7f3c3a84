/** request-size-limiting as kong.yaml configures it (Kong 3.9.1 handler.lua). */
import { z } from 'zod';
import type { RequestContext } from '../request-context';
import { definePlugin, parseWith, type Exit } from './definition';

const Config = z.strictObject({
  allowed_payload_size: z.number().positive(),
  size_unit: z.literal('kilobytes'),
  require_content_length: z.literal(false),
});

function checkSize(ctx: RequestContext, length: number, allowed: number): Exit | undefined {
  if (length <= allowed) return undefined;
  const status = ctx.getFirstHeader('expect')?.trim().toLowerCase() === '100-continue' ? 417 : 413;
  return ctx.error(status, 'Request size limit exceeded');
}

export const requestSizeLimiting = definePlugin<z.infer<typeof Config>>({
  name: 'request-size-limiting',
  priority: 951,
  parseConfig: parseWith(Config),
  async access(ctx, conf) {
    const allowed = conf.allowed_payload_size * 1024;
    const cl = ctx.getFirstHeader('content-length');
    if (cl !== undefined && !Number.isNaN(Number(cl))) return checkSize(ctx, Number(cl), allowed);
    const read = await ctx.readBody();
    if ('tooLarge' in read) return ctx.refusal(413);
    return read.body ? checkSize(ctx, read.body.length, allowed) : undefined;
  },
});
