import net from 'node:net';

/**
 * What the link to the database does:
 * - forward: bytes flow both ways;
 * - blackhole: connections are accepted and kept open, but nothing is forwarded (bytes are
 *   dropped, as by a firewall that drops packets): a query or a handshake never gets an answer;
 * - reset: every open connection, and every new one, is reset (RST), like a database host that
 *   went away.
 */
export type LinkMode = 'forward' | 'blackhole' | 'reset';

export interface Relay {
  port: number;
  /** `databaseUrl` pointed at the relay instead of the server. */
  via(databaseUrl: string): string;
  set(mode: LinkMode): void;
  close(): Promise<void>;
}

/** A TCP relay on loopback in front of `target` whose link the test can break and restore. */
export async function startRelay(target: { host: string; port: number }): Promise<Relay> {
  let mode: LinkMode = 'forward';
  const links = new Set<{ client: net.Socket; upstream: net.Socket }>();

  const server = net.createServer((client) => {
    if (mode === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const link = { client, upstream };
    links.add(link);
    const pass = (to: net.Socket) => (chunk: Buffer) => {
      if (mode === 'forward') to.write(chunk);
    };
    client.on('data', pass(upstream));
    upstream.on('data', pass(client));
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        links.delete(link);
        other.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    port,
    via(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    set(next) {
      mode = next;
      if (next !== 'reset') return;
      for (const { client, upstream } of links) {
        client.resetAndDestroy();
        upstream.destroy();
      }
    },
    close() {
      for (const { client, upstream } of links) {
        client.destroy();
        upstream.destroy();
      }
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
