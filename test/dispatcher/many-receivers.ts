/**
 * Many partners' receivers in one process, each on its own loopback port (argv: count, failing index):
 * receiver i answers in 20 to 200 ms (spread by i), the failing one 500 at once. Prints the ports as one
 * JSON line, then per request `port sequence arrivedAtMs eventTimestampMs status`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const [count = '200', failing = '-1'] = process.argv.slice(2);
const delayOf = (i: number) => 20 + ((i * 37) % 181);

async function main(): Promise<void> {
  const ports: number[] = [];
  for (let i = 0; i < Number(count); i++) {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = Date.now();
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { sequence: number; timestamp: string };
        const status = i === Number(failing) ? 500 : 204;
        process.stdout.write(`${ports[i]} ${event.sequence} ${at} ${Date.parse(event.timestamp)} ${status}\n`);
        setTimeout(() => res.writeHead(status).end(), status === 500 ? 0 : delayOf(i));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ports.push((server.address() as AddressInfo).port);
  }
  process.stdout.write(`${JSON.stringify({ ports })}\n`);
}

void main();
