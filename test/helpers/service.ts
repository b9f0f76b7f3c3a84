import type { WebhookSettings } from '../../service/config';
import type { IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import { insertInBatches } from '../../db/seed';
import { demoJobs } from '../../db/seed-data';
import { createApp } from '../../service/app';
import { createLogger } from '../../service/logger';
import type { PoolOptions } from '../../db/client';
import { freshDatabase, type TestDatabase } from './database';
import { forBlock } from './hooked';
import { serve } from './http';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface TestService {
  url: string;
  port: number;
  database: TestDatabase;
  /** Every request the service received, as it arrived (before the app saw it). */
  received: ReceivedRequest[];
  /** Every log line the service wrote. */
  logs: string[];
  close(): Promise<void>;
}

/** Captures pino's output in memory, so tests can read what would have been logged. */
export function memoryLog(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
}

/**
 * The real app on a fresh database of its own (test/helpers/database.ts) (migrated, demo set loaded when `seed`),
 * served on an ephemeral loopback port.
 */
export interface TestServiceOptions {
  name: string;
  gatewaySecret?: string;
  seed?: boolean;
  /** PUBLIC_URL, asked for at the first request: the gateway in front is started after the service. */
  publicUrl?: () => string;
  webhooks?: WebhookSettings;
  /** Told when the change feed starts a new history (a database option, db/client.ts). */
  onNewHistory?: PoolOptions['onNewHistory'];
}

export async function startTestService(opts: TestServiceOptions): Promise<TestService> {
  const database = await freshDatabase(opts.name, { onNewHistory: opts.onNewHistory });
  if (opts.seed) await insertInBatches(database.db, demoJobs());
  const logs: string[] = [];
  const app = () =>
    createApp({
      db: database.db,
      config: { gatewaySecret: opts.gatewaySecret, publicUrl: opts.publicUrl?.() },
      logger: createLogger('info', memoryLog(logs)),
      webhooks: opts.webhooks,
    }).callback();
  const received: ReceivedRequest[] = [];
  let handle = opts.publicUrl ? undefined : app();
  const served = await serve((req, res) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    void (handle ??= app())(req, res);
  });
  return {
    url: served.url,
    port: served.port,
    database,
    received,
    logs,
    async close() {
      await served.close();
      await database.close();
    },
  };
}

/** startTestService for the describe block (or file) it is called in: started before its first test, closed after its last. */
export function sharedTestService(opts: Parameters<typeof startTestService>[0]): TestService {
  return forBlock(
    `the test service ${opts.name}`,
    () => startTestService(opts),
    (service) => service.close(),
  );
}
