/**
 * CLI: node dist/gateway/local/main.js [state.yaml ...]
 * Serves the decK state files given as arguments, else those of LOCAL_GATEWAY_STATE (a comma
 * list, e.g. kong.yaml,demo.yaml), else ./kong.yaml alone, on KONG_PROXY_LISTEN (default
 * 127.0.0.1:8000). The files are merged as `deck gateway sync a.yaml b.yaml` merges them.
 * SIGHUP reloads them (they are also reloaded when one changes); SIGINT/SIGTERM stop.
 */
import path from 'node:path';
import { parseStateList, startLocalGateway } from './index';

async function main(): Promise<void> {
  const fromArgs = process.argv.slice(2).flatMap((arg) => parseStateList(arg));
  const fromEnv = parseStateList(process.env.LOCAL_GATEWAY_STATE);
  const configPaths = fromArgs.length > 0 ? fromArgs : fromEnv.length > 0 ? fromEnv : ['kong.yaml'];
  const gateway = await startLocalGateway({ configPaths }).catch((err: Error) => {
    console.error(`local gateway: ${err.message}`);
    process.exit(1);
  });
  console.log(`Local gateway (Kong stand-in) on ${gateway.url}, serving ${configPaths.map((p) => path.resolve(p)).join(', ')}`);
  process.on('SIGHUP', () => gateway.reload());
  const stop = (): void => {
    gateway.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
