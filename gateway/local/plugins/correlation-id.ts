/** correlation-id as kong.yaml configures it (Kong 3.9, generator uuid#counter, echo_downstream). */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { definePlugin, parseWith } from './definition';

const Config = z.strictObject({ header_name: z.string(), generator: z.literal('uuid#counter'), echo_downstream: z.literal(true) });

const workerUuid = randomUUID();
let workerCounter = 0;
const generate = (): string => `${workerUuid}#${++workerCounter}`;

export const correlationId = definePlugin<z.infer<typeof Config>>({
  name: 'correlation-id',
  priority: 100001,
  parseConfig: parseWith(Config),
  access(ctx, conf) {
    let id = ctx.getFirstHeader(conf.header_name);
    if (!id) ctx.setHeader(conf.header_name, (id = generate()));
    ctx.pluginState.set('correlation-id', id);
    return undefined;
  },
  headerFilter(ctx, conf) {
    // Not routed (nginx refused, no route): access never ran, the id is generated here.
    const id = (ctx.pluginState.get('correlation-id') as string | undefined) ?? ctx.getFirstHeader(conf.header_name) ?? generate();
    ctx.responseHeaders.set(conf.header_name, id);
  },
});
