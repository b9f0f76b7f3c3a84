import net from 'node:net';

/** Sends raw bytes to 127.0.0.1:port and returns everything the server answered before closing. */
export function rawText(port: number, request: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('timeout')));
    socket.write(request);
  });
}
