/**
 * request-size-limiting as in Kong 3.9: a numeric Content-Length is checked without reading the
 * body; otherwise (chunked) the body is read and its size checked. Over the limit: 413 "Request
 * size limit exceeded" (417 when the client sent `Expect: 100-continue`), through the error
 * template. require_content_length: 411 when the header is missing.
 */
import type { RequestContext } from '../request-context';
import { definePlugin, oneOf, optBool, optNumber, optString, type Exit } from './definition';

const UNIT_BYTES = { megabytes: 2 ** 20, kilobytes: 2 ** 10, bytes: 1 } as const;

export interface RequestSizeLimitingConfig {
  allowedBytes: number;
  requireContentLength: boolean;
}

function tooLarge(ctx: RequestContext): Exit {
  const expect = ctx.getFirstHeader('expect');
  const status = expect && expect.trim().toLowerCase() === '100-continue' ? 417 : 413;
  return ctx.error(status, 'Request size limit exceeded');
}

/** Reads the body, stopping as soon as it passes `limit` bytes; null when it did. */
function readBody(ctx: RequestContext, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        ctx.req.off('data', onData);
        ctx.req.off('end', onEnd);
        // keep draining what is left so the connection can deliver the response
        ctx.req.resume();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    ctx.req.on('data', onData);
    ctx.req.once('end', onEnd);
    ctx.req.once('error', reject);
  });
}

export const requestSizeLimiting = definePlugin<RequestSizeLimitingConfig>({
  name: 'request-size-limiting',
  priority: 951,
  parseConfig(raw) {
    const unit = oneOf(optString(raw, 'size_unit', 'megabytes'), 'size_unit', ['megabytes', 'kilobytes', 'bytes'] as const, 'is not a size unit');
    const size = optNumber(raw, 'allowed_payload_size', 128) ?? 128;
    return { allowedBytes: size * UNIT_BYTES[unit], requireContentLength: optBool(raw, 'require_content_length', false) };
  },
  async access(ctx, conf) {
    const cl = ctx.getFirstHeader('content-length');
    if (cl !== undefined && cl.trim() !== '' && !Number.isNaN(Number(cl))) {
      return Number(cl) > conf.allowedBytes ? tooLarge(ctx) : undefined;
    }
    if (conf.requireContentLength && cl === undefined) {
      return ctx.error(411, 'A valid Content-Length header is required');
    }
    const body = await readBody(ctx, conf.allowedBytes);
    if (body === null) return tooLarge(ctx);
    ctx.bufferedBody = body;
    return undefined;
  },
});
