import net from 'node:net';

export interface RawAnswer {
  /** The first response's status; 0 when the server closed without answering. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent before the connection closed. */
  raw: string;
  /** From the first byte sent until the first byte of the answer (or the close). */
  ms: number;
}

/** Bytes to write, or a pause in milliseconds between writes. */
export type Step = string | number;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function parse(raw: string, ms: number): RawAnswer {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1] ?? 0) || 0, headers, body: rest.join('\r\n\r\n'), raw, ms };
}

/**
 * Plays `steps` on a new connection to 127.0.0.1:`port` and resolves once the server has closed
 * it (or, with `hangUpAfterMs`, once this client gave up and closed it itself). Writes after the
 * server closed are dropped: a slow client goes on sending after its 408.
 */
export function rawExchange(
  port: number,
  steps: Step[],
  { hangUpAfterMs }: { hangUpAfterMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    let firstByteAt: number | undefined;
    let raw = '';
    let closed = false;
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      firstByteAt ??= Date.now();
      raw += data;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      closed = true;
      resolve(parse(raw, (firstByteAt ?? Date.now()) - started));
    });
    if (hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), hangUpAfterMs);
    const send = async () => {
      for (const step of steps) {
        if (closed) return;
        if (typeof step === 'number') await pause(step);
        else socket.write(step);
      }
    };
    socket.once('connect', () => void send());
  });
}

/** A request head with the identity headers of a writer, as the gateway sends them. */
export function head(requestLine: string, headers: Record<string, string>): string {
  return `${requestLine}\r\nHost: jobs\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}
