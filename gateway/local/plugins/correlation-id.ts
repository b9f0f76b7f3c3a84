/**
 * correlation-id as in Kong 3.9: the request keeps the id its client sent in `header_name`; when
 * there is none (or it is empty) one is generated and added to the request the service receives.
 * With echo_downstream the id is also set on the response, on proxied and rejected requests alike.
 * Generators: `uuid`, and `uuid#counter` (one UUID per worker, then `#1`, `#2`, ...).
 */
import { randomUUID } from 'node:crypto';
import type { RequestContext } from '../request-context';
import { definePlugin, oneOf, optBool, optString } from './definition';

export interface CorrelationIdConfig {
  headerName: string;
  generator: 'uuid' | 'uuid#counter';
  echoDownstream: boolean;
}

const workerUuid = randomUUID();
let workerCounter = 0;

function generate(generator: CorrelationIdConfig['generator']): string {
  if (generator === 'uuid') return randomUUID();
  workerCounter += 1;
  return `${workerUuid}#${workerCounter}`;
}

const STATE = 'correlation-id';

export const correlationId = definePlugin<CorrelationIdConfig>({
  name: 'correlation-id',
  priority: 100001,
  parseConfig(raw) {
    return {
      headerName: optString(raw, 'header_name', 'Kong-Request-ID') ?? 'Kong-Request-ID',
      generator: oneOf(optString(raw, 'generator', 'uuid#counter'), 'generator', ['uuid', 'uuid#counter'] as const, 'is not reproduced by the local gateway'),
      echoDownstream: optBool(raw, 'echo_downstream', false),
    };
  },
  access(ctx: RequestContext, conf) {
    let id = ctx.getFirstHeader(conf.headerName);
    if (!id) {
      id = generate(conf.generator);
      ctx.setHeader(conf.headerName, id);
    }
    ctx.pluginState.set(STATE, id);
    return undefined;
  },
  headerFilter(ctx, conf) {
    if (!conf.echoDownstream) return;
    const id = (ctx.pluginState.get(STATE) as string | undefined) ?? ctx.getFirstHeader(conf.headerName) ?? generate(conf.generator);
    ctx.responseHeaders.set(conf.headerName, id);
  },
});
