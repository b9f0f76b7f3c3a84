/**
 * The real service on its own MariaDB database, behind the local gateway serving a temp copy of
 * kong.yaml pointed at it. Tests talk HTTP to the gateway only.
 */
import { startTestService, type TestService } from '../helpers/service';
import { configFile, gatewayEnv, startGateway, type ConfigFile, type KongState, type TestGateway } from '../local-gateway/support';

export { DEMO } from '../local-gateway/support';
export { send } from '../helpers/checked-send'; // every answer checked against docs/openapi.json

export const SECRET = 'e2e-gateway-secret-0123456789';

export interface Stack {
  url: string;
  service: TestService;
  gateway: TestGateway;
  config: ConfigFile;
  close(): Promise<void>;
}

export async function startStack(
  name: string,
  opts: { seed?: boolean; edit?: (state: KongState, demo: KongState) => void; gateway?: { upstreamConnections?: number } } = {},
): Promise<Stack> {
  const service = await startTestService({ name, gatewaySecret: SECRET, seed: opts.seed ?? true });
  const config = configFile(service.port, opts.edit);
  const gateway = await startGateway(config.paths, gatewayEnv(SECRET), opts.gateway);
  return {
    url: gateway.url,
    service,
    gateway,
    config,
    async close() {
      await gateway.close();
      await service.close();
      config.remove();
    },
  };
}

/** Everything that reached the service or was logged, as one string, to look for leaked keys in. */
export function everythingTheServiceSaw(stack: Stack): string {
  return JSON.stringify({ received: stack.service.received, logs: stack.service.logs, gatewayLogs: stack.gateway.rawLogs });
}
