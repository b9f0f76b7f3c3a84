/**
 * The real service on its own database with both gateways in front of it: the local gateway and a
 * real Kong 3.9 (harness/real-kong.ts), each on the repository's state files and kong.conf. Tests
 * run the same requests through each, as raw bytes where framing matters.
 */
import http from 'node:http';
import net from 'node:net';
import { startRealKong, type RealKong } from '../../harness/real-kong';
import { startTestService, type TestService } from '../helpers/service';
import { configFile, gatewayEnv, startGateway, type ConfigFile, type TestGateway } from '../local-gateway/support';

export { DEMO } from '../local-gateway/support';

export const SECRET = 'both-gateways-secret-0123456789';

export interface Gateway {
  name: 'local gateway' | 'real Kong';
  url: string;
  port: number;
}

export interface BothGateways {
  service: TestService;
  gateways: Gateway[];
  jobCount(): Promise<number>;
  close(): Promise<void>;
}

export async function startBoth(name: string): Promise<BothGateways> {
  const service = await startTestService({ name, gatewaySecret: SECRET, seed: true });
  let config: ConfigFile | undefined;
  let local: TestGateway | undefined;
  let kong: RealKong | undefined;
  try {
    config = configFile(service.port);
    local = await startGateway(config.paths, gatewayEnv(SECRET));
    kong = await startRealKong({ serviceUrl: service.url, gatewaySecret: SECRET });
  } catch (err) {
    await local?.close();
    config?.remove();
    await service.close();
    throw err;
  }
  const kongPort = Number(new URL(kong.proxyUrl).port);
  return {
    service,
    gateways: [
      { name: 'local gateway', url: local.url, port: local.port },
      { name: 'real Kong', url: kong.proxyUrl, port: kongPort },
    ],
    async jobCount() {
      const [row] = await service.database.query<Array<{ n: number }>>('select count(*) as n from jobs');
      return Number(row!.n);
    },
    async close() {
      await kong.stop();
      await local.close();
      config.remove();
      await service.close();
    },
  };
}

export interface Exchange {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body bytes exactly as they arrived (never decompressed). */
  body: Buffer;
}

/** One HTTP/1.1 request on its own connection; the body is kept as sent on the wire. */
export function request(
  baseUrl: string,
  opts: { method?: string; path: string; headers?: Record<string, string>; localAddress?: string },
): Promise<Exchange> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: opts.method ?? 'GET',
        path: opts.path,
        headers: opts.headers ?? {},
        agent: false,
        localAddress: opts.localAddress,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export interface RawAnswer {
  /** Everything received, latin1. */
  text: string;
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** The gateway closed the connection (rather than the client giving up). */
  closed: boolean;
  /** Until the connection ended (closed or given up). */
  ms: number;
  /** Until the first byte of the answer (null: none came). */
  answeredMs: number | null;
}

/**
 * Writes `parts` on a fresh connection (a pause of `gapMs` between them), keeps it open, and
 * returns what came back once the gateway closed it or `waitMs` passed.
 */
export function raw(port: number, parts: Array<string | Buffer>, waitMs = 3000, gapMs = 20): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1');
    let finished = false;
    let answeredMs: number | null = null;
    const finish = (closed: boolean): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.split('\r\n\r\n')[0] ?? '';
      const [statusLine, ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const m = /^HTTP\/1\.\d (\d{3})/.exec(statusLine ?? '');
      resolve({
        text,
        status: m ? Number(m[1]) : null,
        headers,
        body: text.slice(head.length + 4),
        closed,
        ms: Date.now() - started,
        answeredMs,
      });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (c: Buffer) => {
      answeredMs ??= Date.now() - started;
      chunks.push(c);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? finish(true) : reject(err)));
    const send = async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        await new Promise((r) => setTimeout(r, gapMs));
      }
    };
    socket.on('connect', () => void send());
  });
}
