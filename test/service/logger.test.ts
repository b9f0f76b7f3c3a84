/**
 * The service's logger (service/logger.ts) in-process: what a line carries, what it never
 * carries, and when it reaches its file. Lines lost at exit or crash: test/service/logging.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { batched, createLogger, flushNow } from '../../service/logger';
import { memoryLog } from '../helpers/service';

test('a line names the service, and keys and gateway secrets logged as fields are redacted wherever they sit', () => {
  const lines: string[] = [];
  const logger = createLogger('info', memoryLog(lines));
  logger.info(
    {
      req: {
        headers: {
          'x-api-key': 'live-key-1234',
          'x-gateway-secret': 'gateway-secret-5678',
          accept: 'application/json',
        },
      },
      consumer: { apiKey: 'live-key-abcd', api_key: 'live-key-efgh', username: 'acme' },
    },
    'something worth a line',
  );
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]!);
  expect(line).toMatchObject({
    service: 'jobs-service',
    msg: 'something worth a line',
    req: { headers: { 'x-api-key': '[redacted]', 'x-gateway-secret': '[redacted]', accept: 'application/json' } },
    consumer: { apiKey: '[redacted]', api_key: '[redacted]', username: 'acme' },
  });
  expect(lines[0]).not.toMatch(/live-key|gateway-secret-5678/);
});

test('LOG_LEVEL is honoured: at warn, info lines are dropped', () => {
  const lines: string[] = [];
  const logger = createLogger('warn', memoryLog(lines));
  logger.info('hidden');
  logger.warn('shown');
  expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['shown']);
});

test('batched lines: small ones wait in memory (no write per request), and flushNow writes them out at once', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobs-logger-'));
  const file = path.join(dir, 'out.log');
  const stream = batched(file);
  const written = () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
  try {
    const logger = createLogger('info', stream);
    for (let i = 0; i < 3; i++) logger.info({ i }, 'request');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(written()).toBe('');
    flushNow(logger);
    // Well before the once-a-second flush (LOG_FLUSH_INTERVAL_MS) would have written them.
    const deadline = Date.now() + 500;
    while (written().split('\n').filter(Boolean).length < 3 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(
      written()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line).i),
    ).toEqual([0, 1, 2]);
  } finally {
    // The stream owns the file: ended, it writes nothing more (its flush timer then finds it ended).
    await new Promise((resolve) => {
      stream.once('close', resolve);
      stream.end();
    });
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
