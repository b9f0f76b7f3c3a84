/**
 * npm run bench [-- --jobs N]: the listing's speed and memory on a large table.
 *
 * Loads N jobs (default 100000) into a dedicated database `jobs_bench` once, prints EXPLAIN for
 * every listing shape (index used; filesort or full scan would be flagged), then drives the real
 * app in-process over loopback and prints latency percentiles and memory. It prints figures; it
 * asserts nothing, so no test depends on the speed of the machine.
 */
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createDatabase } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { countJobs, seedBulk } from '../db/seed';
import { createApp } from '../service/app';
import { parseListQuery } from '../service/jobs/list-query';
import { listQueries } from '../service/jobs/repository';
import { createLogger } from '../service/logger';

const SHAPES = [
  '',
  'page=50',
  'status=paused',
  'status=active,paused',
  'type=contract',
  'type=contract,direct-hire',
  'workplace=remote',
  'department=engineering',
  'department=finance&type=full-time',
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main() {
  const jobsArg = process.argv.indexOf('--jobs');
  const wanted = jobsArg > 0 ? Number(process.argv[jobsArg + 1]) : 100_000;
  const url = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/jobs_bench';
  await migrateDatabase(url);
  const database = createDatabase(url, { connectionLimit: 10 });
  const have = await countJobs(database.db);
  if (have < wanted) {
    const started = performance.now();
    await seedBulk(database.db, wanted - have);
    console.log(`seeded ${wanted - have} jobs in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  console.log(`table: ${await countJobs(database.db)} jobs\n`);

  console.log('EXPLAIN (page query, count query):');
  for (const shape of SHAPES) {
    const query = parseListQuery(Object.fromEntries(new URLSearchParams(shape)));
    const queries = listQueries(database.db, query);
    const plans: string[] = [];
    for (const builder of [queries.page, queries.count]) {
      const { sql, params } = builder.toSQL();
      const [rows] = (await database.pool.query(`EXPLAIN ${sql}`, params)) as unknown as [Array<Record<string, unknown>>];
      const row = rows[0]!;
      const extra = String(row.Extra ?? '');
      const flags = [row.type === 'ALL' ? 'FULL SCAN' : '', /filesort/.test(extra) ? 'FILESORT' : ''].filter(Boolean);
      plans.push(`${row.type}/${row.key ?? '-'} rows~${row.rows}${flags.length ? ` !! ${flags.join(' ')}` : ''}`);
    }
    console.log(`  ${(shape || '(default)').padEnd(36)} ${plans.join('   |   ')}`);
  }

  const app = createApp({ db: database.db, config: {}, logger: createLogger('silent') });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const served = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  const concurrency = 8;
  const perShape = 200;
  console.log(`\nlatency over loopback, ${perShape} requests per shape, ${concurrency} at a time:`);
  const rssBefore = process.memoryUsage().rss;
  for (const shape of SHAPES) {
    const times: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < perShape) {
        next++;
        const started = performance.now();
        const res = await fetch(`${served.url}/api/v1/jobs?${shape}`);
        await res.arrayBuffer();
        times.push(performance.now() - started);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    console.log(
      `  ${(shape || '(default)').padEnd(36)} p50 ${percentile(times, 50).toFixed(1)} ms  p95 ${percentile(times, 95).toFixed(1)} ms  ${(perShape / seconds).toFixed(0)} req/s`,
    );
  }
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  console.log(`\nmemory: rss ${mb(process.memoryUsage().rss)} (was ${mb(rssBefore)} before the load), heap used ${mb(process.memoryUsage().heapUsed)}`);
  server.close();
  server.closeIdleConnections();
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
