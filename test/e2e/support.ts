/**
 * The real service on its own MariaDB database, behind a gateway serving a temp copy of kong.yaml
 * pointed at it plus demo.yaml: the local gateway, or a real Kong (harness/real-kong.ts) run as
 * the image runs it. The suites run once per gateway in gatewayKinds(): the same requests and the
 * same assertions through both. Tests talk HTTP to the gateway only.
 */
import type { WebhookSettings } from '../../service/config';
import { findKong, startRealKong, type RealKong } from '../../harness/real-kong';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service';
import {
  configFile,
  gatewayEnv,
  startGateway,
  type ConfigFile,
  type KongState,
  type TestGateway,
} from '../local-gateway/support';

export { DEMO } from '../local-gateway/support';
export { send } from '../helpers/checked-send'; // every answer checked against docs/openapi.json

export const SECRET = 'e2e-gateway-secret-0123456789';

export type GatewayKind = 'local gateway' | 'real Kong';

/**
 * The local gateway always; real Kong too when a Kong 3.9 is found (scripts/test.sh prints which,
 * or why the real-Kong tier was skipped). REAL_KONG=off leaves it out on purpose.
 */
export function gatewayKinds(): GatewayKind[] {
  if (process.env.REAL_KONG === 'off') return ['local gateway'];
  return findKong().found ? ['local gateway', 'real Kong'] : ['local gateway'];
}

export interface Stack {
  kind: GatewayKind;
  url: string;
  secret: string;
  /** The gateway's port, for raw-socket requests. */
  port: number;
  service: TestService;
  config: ConfigFile;
  /** Everything the gateway logged (after Kong's redaction filter, for real Kong). */
  gatewayLogs(): string;
  /** Rewrites the temp demo.yaml and has the gateway serve it (file watcher reload, or POST /config). */
  changeDemo(edit: (demo: KongState) => void): Promise<void>;
  close(): Promise<void>;
}

export interface LocalStack extends Stack {
  gateway: TestGateway;
}

interface StackOptions {
  seed?: boolean;
  /** The gateway secret both sides share (default SECRET). */
  secret?: string;
  edit?: (state: KongState, demo: KongState) => void;
  gateway?: { upstreamConnections?: number };
  /** The service's PUBLIC_URL is this gateway's address (the reference page's first server). */
  publicUrlIsGateway?: boolean;
  /** The service's webhook settings (service/config.ts). */
  webhooks?: WebhookSettings;
  /** Told when the change feed starts a new history (a database option, db/client.ts). */
  onNewHistory?: TestServiceOptions['onNewHistory'];
}

/** The stack behind the local gateway. */
export async function startStack(name: string, opts: StackOptions = {}): Promise<LocalStack> {
  const secret = opts.secret ?? SECRET;
  let url = '';
  const service = await startTestService({
    name,
    gatewaySecret: secret,
    seed: opts.seed ?? true,
    webhooks: opts.webhooks,
    onNewHistory: opts.onNewHistory,
    ...(opts.publicUrlIsGateway ? { publicUrl: () => url } : {}),
  });
  const config = configFile(service.port, opts.edit);
  const gateway = await startGateway(config.paths, gatewayEnv(secret), opts.gateway);
  url = gateway.url;
  return {
    kind: 'local gateway',
    secret,
    url: gateway.url,
    port: gateway.port,
    service,
    gateway,
    config,
    gatewayLogs: () => gateway.rawLogs.join('\n'),
    async changeDemo(edit) {
      const reloaded = gateway.nextReload();
      config.demo.write(edit);
      const result = await reloaded;
      if (!result.ok) throw new Error(`reload refused: ${result.error}`);
    },
    async close() {
      await gateway.close();
      await service.close();
      config.remove();
    },
  };
}

/** The stack behind a real Kong, DB-less on the same temp state files (its own Redis, prefix, ports). */
async function startKongStack(name: string, opts: StackOptions): Promise<Stack> {
  const secret = opts.secret ?? SECRET;
  let url = '';
  const service = await startTestService({
    name,
    gatewaySecret: secret,
    seed: opts.seed ?? true,
    webhooks: opts.webhooks,
    ...(opts.publicUrlIsGateway ? { publicUrl: () => url } : {}),
  });
  const config = configFile(service.port, opts.edit);
  let kong: RealKong;
  try {
    kong = await startRealKong({ stateFiles: config.paths, serviceUrl: service.url, gatewaySecret: secret });
  } catch (err) {
    await service.close();
    config.remove();
    throw err;
  }
  const logs = kong.logs;
  url = kong.proxyUrl;
  return {
    kind: 'real Kong',
    secret,
    url: kong.proxyUrl,
    port: Number(new URL(kong.proxyUrl).port),
    service,
    config,
    gatewayLogs: () => `${logs().stdout}\n${logs().stderr}`,
    async changeDemo(edit) {
      config.demo.write(edit);
      await kong.configure();
    },
    async close() {
      await kong.stop();
      await service.close();
      config.remove();
    },
  };
}

/** The stack behind `kind`; each kind gets its own database. */
export function startStackOn(kind: GatewayKind, name: string, opts: StackOptions = {}): Promise<Stack> {
  return kind === 'real Kong' ? startKongStack(`${name}_kong`, opts) : startStack(name, opts);
}

/** Everything that reached the service or was logged, as one string, to look for leaked keys in. */
export function everythingTheServiceSaw(stack: Stack): string {
  return JSON.stringify({
    received: stack.service.received,
    logs: stack.service.logs,
    gatewayLogs: stack.gatewayLogs(),
  });
}
