/**
 * compareSyncs as a process of its own, for bench/link.ts to run inside the link's network
 * namespace: `node sync-client.js <origin> <headers as JSON> <rounds>`, one JSON line per pass.
 */
import { compareSyncs } from './sync';

async function main(): Promise<void> {
  const [origin, headers, rounds] = process.argv.slice(2);
  if (!origin || !headers || !rounds) throw new Error('usage: node sync-client.js <origin> <headers as JSON> <rounds>');
  await compareSyncs(origin, JSON.parse(headers) as Record<string, string>, Number(rounds), (run, gzip, warmup) =>
    process.stdout.write(`${JSON.stringify({ run, gzip, warmup })}\n`),
  );
}

main().catch((error: Error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
