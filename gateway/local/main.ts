/**
 * CLI: node dist/gateway/local/main.js [path/to/kong.yaml]
 * Serves kong.yaml (default: ./kong.yaml) on KONG_PROXY_LISTEN (default 127.0.0.1:8000).
 * SIGHUP reloads the file (it is also reloaded when it changes); SIGINT/SIGTERM stop.
 */
import path from 'node:path';
import { startLocalGateway } from './index';

async function main(): Promise<void> {
  const configPath = process.argv[2] ?? path.resolve('kong.yaml');
  const gateway = await startLocalGateway({ configPath }).catch((err: Error) => {
    console.error(`local gateway: ${err.message}`);
    process.exit(1);
  });
  console.log(`Local gateway (Kong stand-in) on ${gateway.url}, serving ${configPath}`);
  process.on('SIGHUP', () => gateway.reload());
  const stop = (): void => {
    gateway.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
