/** CLI: node dist/gateway/local/main.js [state.yaml ...]. */
import { parseStateList, startLocalGateway } from './index';

const fromArgs = process.argv.slice(2).flatMap((arg) => parseStateList(arg));
const configPaths = fromArgs.length > 0 ? fromArgs : parseStateList(process.env.LOCAL_GATEWAY_STATE || 'kong.yaml');
startLocalGateway({ configPaths }).then(
  (gateway) => {
    console.log(`Local gateway (Kong stand-in) on ${gateway.url}, serving ${gateway.configPaths.join(', ')}`);
    process.on('SIGHUP', () => gateway.reload());
    const stop = (): void => void gateway.close().then(() => process.exit(0));
    process.once('SIGINT', stop).once('SIGTERM', stop);
  },
  (err: Error) => {
    console.error(`local gateway: ${err.message}`);
    process.exit(1);
  },
);
