/** npm start: the whole API on this machine, no Docker needed (LOCAL_GATEWAY_STATE serves other state files, keys from their DECK_ variables). */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { localDatabase, type LocalDatabase } from './local-database';
import { parseStateList, startLocalGateway, type LocalGateway } from '../gateway/local';
import { runService, type RunningService } from '../service/server';
import { LOCAL_GATEWAY_URL } from '../service/api/openapi';
import { runDispatcher, type RunningDispatcher } from '../dispatcher/main';

const ROOT = path.resolve(__dirname, '..', '..');
const DEFAULT_STATE = [path.join(ROOT, 'kong.yaml'), path.join(ROOT, 'demo.yaml')];

function banner(gateway: LocalGateway): string {
  const keys = gateway.demoKeys();
  const width = Math.max(...keys.map((k) => k.username.length), 8);
  const keyWidth = Math.max(...keys.map((k) => k.key.length), 8);
  const lines = keys.map(
    (k) =>
      `  ${k.username.padEnd(width)}  ${k.key.padEnd(keyWidth)}  ${k.groups.join(', ') || '(no groups: 403 everywhere)'}`,
  );
  const reader = keys.find(
    (k) => k.groups.includes('jobs:read') && !k.groups.includes('jobs:write') && !k.groups.includes('disabled'),
  );
  return [
    `Job Listings API on ${gateway.url} (local gateway serving ${gateway.configPaths.map((p) => path.relative(ROOT, p) || p).join(' + ')}; production uses Kong)`,
    'Demo keys (send them in the X-API-Key header):',
    ...lines,
    `API reference (no key needed): ${gateway.url}/docs`,
    ...(reader ? ['Try:', `  curl -s -H 'X-API-Key: ${reader.key}' '${gateway.url}/api/v1/jobs?limit=2'`] : []),
    'Ctrl-C stops them all; the state files are reloaded when they change (or on SIGHUP).',
  ].join('\n');
}

/** This machine's webhook secrets key: made once, so subscriptions survive a restart of npm start. */
function developmentSecretsKey(): string {
  const file = path.join(ROOT, '.local', 'webhook-secrets-key');
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

async function main(): Promise<void> {
  const withGateway = (process.env.LOCAL_GATEWAY ?? 'on').toLowerCase() !== 'off';
  const gatewaySecret = process.env.GATEWAY_SECRET || (withGateway ? randomBytes(32).toString('hex') : undefined);

  // The demo jobs belong with the demo keys: only npm start asks the service for them.
  process.env.SEED_DEMO_DATA ??= 'true';
  // Development settings: a receiver on this machine (http://127.0.0.1:...) may be subscribed; metadata addresses never.
  process.env.WEBHOOK_ALLOW_HTTP ??= 'true';
  process.env.WEBHOOK_ALLOWED_ADDRESSES ??= '127.0.0.0/8,::1/128';
  process.env.WEBHOOK_SECRETS_KEY ??= developmentSecretsKey();
  // The reference page's "Try it out" goes to this gateway, not to a production placeholder.
  if (withGateway) process.env.PUBLIC_URL ??= LOCAL_GATEWAY_URL;

  // Until stop (below) takes over, Ctrl-C exits at once; npm start's own database stops on that exit too.
  const early = (): never => process.exit(130);
  process.once('SIGINT', early);
  process.once('SIGTERM', early);
  let database: LocalDatabase | null;
  try {
    database = await localDatabase(process.env, process.env.LOCAL_DATABASE_DIR || path.join(ROOT, '.local', 'mysql'));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  if (database) {
    process.env.DATABASE_URL = database.url;
    console.log(database.line);
  }
  /** Exits once the database npm start started (if any) has stopped: it goes last, after what uses it. */
  const exit = (code: number): Promise<never> =>
    (database ? database.stop() : Promise.resolve()).then(() => process.exit(code));

  let service: RunningService;
  try {
    service = await runService(gatewaySecret ? { gatewaySecret } : {});
  } catch (err) {
    console.error((err as Error).message);
    return exit(1);
  }

  let gateway: LocalGateway | null = null;
  if (withGateway) {
    try {
      gateway = await startLocalGateway({
        configPaths:
          parseStateList(process.env.LOCAL_GATEWAY_STATE).length > 0
            ? parseStateList(process.env.LOCAL_GATEWAY_STATE)
            : DEFAULT_STATE,
        env: {
          ...process.env,
          // {vault://env/jobs-gateway-secret} in kong.yaml
          JOBS_GATEWAY_SECRET: gatewaySecret,
          // kong.yaml's service host, jobs-service, is this machine
          KONG_DNS_HOSTSFILE: process.env.KONG_DNS_HOSTSFILE ?? path.join(ROOT, 'gateway/local/hosts'),
          KONG_ERROR_TEMPLATE_JSON:
            process.env.KONG_ERROR_TEMPLATE_JSON ?? path.join(ROOT, 'gateway/kong/error-template.json'),
        },
      });
    } catch (err) {
      console.error(`local gateway: ${(err as Error).message}`);
      await service.stop();
      return exit(1);
    }
    console.log(banner(gateway));
  } else {
    // Still npm start's development settings (demo jobs, http webhooks to loopback, a local secrets key): never production.
    console.log(
      `Jobs service on ${service.url}, LOCAL_GATEWAY=off, with development settings (demo jobs, plain-http webhooks to loopback): production is docs/operations.md, "Production without Docker".`,
    );
    if (!gatewaySecret)
      console.log('GATEWAY_SECRET is not set: the service accepts identity headers from anyone who can reach it.');
  }

  let dispatcher: RunningDispatcher | null = null;
  try {
    dispatcher = await runDispatcher(process.env);
    console.log('Webhook dispatcher running (development settings: http and loopback receivers allowed).');
  } catch (err) {
    console.error(`webhook dispatcher: ${(err as Error).message}`);
    await Promise.all([gateway?.close(), service.stop()]);
    return exit(1);
  }

  process.on('SIGHUP', () => gateway?.reload());
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    Promise.all([gateway?.close(), dispatcher?.stop(), service.stop()]).then(
      () => exit(0),
      () => exit(1),
    );
  };
  process.off('SIGINT', early);
  process.off('SIGTERM', early);
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
