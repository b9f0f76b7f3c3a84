/**
 * One route (/r, every method) carrying the plugins a test gives, in front of a stub upstream,
 * started and stopped inside the test itself: Stryker counts what a beforeAll runs as static
 * coverage, so configurations read there leave their mutants untested under --ignoreStatic.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadGateway } from '../../gateway/local/config/load';
import { RateLimitCounters } from '../../gateway/local/plugins/rate-limiting';
import { pluginRegistry } from '../../gateway/local/plugins/registry';
import { gatewayEnv, send, startGateway, stubUpstream, type RawResponse, type Received, type StubUpstream, type TestGateway } from './support';

export type Plugin = { name: string; config: Record<string, unknown> };

export const ALICE = {
  username: 'alice',
  id: '11111111-1111-4111-8111-111111111111',
  keyauth_credentials: [{ id: 'aaaaaaaa-0000-4000-8000-000000000001', key: 'alice-key' }],
};

/** A state file with one route, /r (every method), carrying `plugins`, proxied to `port`. */
export function writeState(port: number, plugins: Plugin[]): { file: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plugin-stack-'));
  const file = path.join(dir, 'kong.yaml');
  const route = { name: 'r', paths: ['/r'], strip_path: false, plugins };
  writeFileSync(file, stringify({ _format_version: '3.0', services: [{ name: 's', url: `http://127.0.0.1:${port}`, routes: [route] }], consumers: [ALICE] }));
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Stack {
  gateway: TestGateway;
  upstream: StubUpstream;
  /** One request to /r; `proxied` is what the service received (undefined when it received nothing). */
  request(opts?: Omit<Parameters<typeof send>[1], 'path'>): Promise<{ res: RawResponse; proxied: Received | undefined }>;
}

/** A stub upstream and a gateway on `plugins`, started and stopped inside the calling test. */
export async function withGateway(plugins: Plugin[], run: (stack: Stack) => Promise<void>, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const upstream = await stubUpstream();
  const state = writeState(upstream.port, plugins);
  let gateway: TestGateway | undefined;
  try {
    gateway = await startGateway(state.file, gatewayEnv(undefined, env));
    const url = gateway.url;
    await run({
      gateway,
      upstream,
      async request(opts = {}) {
        const before = upstream.received.length;
        const res = await send(url, { path: '/r', ...opts });
        return { res, proxied: upstream.received.length > before ? upstream.received.at(-1) : undefined };
      },
    });
  } finally {
    await gateway?.close();
    await upstream.close();
    state.remove();
  }
}

/** The error an operator reads when the gateway refuses to load `plugins`. */
export function loadError(plugins: Plugin[]): string {
  const state = writeState(9, plugins);
  try {
    loadGateway(state.file, gatewayEnv(undefined), pluginRegistry(new RateLimitCounters()), () => undefined);
    return '(loaded)';
  } catch (err) {
    return (err as Error).message;
  } finally {
    state.remove();
  }
}
