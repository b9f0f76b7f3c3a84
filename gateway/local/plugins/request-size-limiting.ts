/**
 * request-size-limiting as in Kong 3.9.1 (kong/plugins/request-size-limiting/handler.lua): a
 * numeric Content-Length is checked without reading the body; otherwise the body is read whole
 * (kong.request.get_raw_body, within nginx's client_max_body_size) and its size checked. Over the
 * limit: 413 "Request size limit exceeded" (417 when the client sent `Expect: 100-continue`),
 * through the error template. require_content_length: 411 when there is no numeric
 * Content-Length and the body is not exactly `Transfer-Encoding: chunked`.
 */
import { specialResponse } from '../nginx/special-response';
import type { RequestContext } from '../request-context';
import { definePlugin, oneOf, optBool, optNumber, optString, type Exit } from './definition';

const UNIT_BYTES = { megabytes: 2 ** 20, kilobytes: 2 ** 10, bytes: 1 } as const;

export interface RequestSizeLimitingConfig {
  allowedBytes: number;
  requireContentLength: boolean;
}

function checkSize(ctx: RequestContext, length: number, conf: RequestSizeLimitingConfig): Exit | undefined {
  if (length <= conf.allowedBytes) return undefined;
  const expect = ctx.getFirstHeader('expect');
  const status = expect && expect.trim().toLowerCase() === '100-continue' ? 417 : 413;
  return ctx.error(status, 'Request size limit exceeded');
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
    // Stryker disable next-line MethodExpression,StringLiteral: the HTTP parser trims Content-Length and refuses an empty one with 400 before any plugin runs (nginx-answers.test.ts), so trim() and the '' check cannot change an answer
    if (cl !== undefined && cl.trim() !== '' && !Number.isNaN(Number(cl))) return checkSize(ctx, Number(cl), conf);
    if (conf.requireContentLength && ctx.getHeader('transfer-encoding') !== 'chunked') {
      return ctx.error(411, 'A valid Content-Length header is required');
    }
    const read = await ctx.readBody();
    // nginx refused the body itself (client_max_body_size) while the plugin read it.
    if ('tooLarge' in read) return specialResponse(ctx.config.errorTemplate, 413, ctx.requestId);
    return read.body ? checkSize(ctx, read.body.length, conf) : undefined;
  },
});
