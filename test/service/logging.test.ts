import { spawn } from 'node:child_process';
import path from 'node:path';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { startServiceProcess, type ServiceProcess } from '../helpers/processes';

const REGISTER_TS = path.join(__dirname, '..', 'helpers/register-ts.js');
const LINES = 20_000;

/** Runs test/fixtures/log-and-exit.ts; resolves with its exit code and its stdout as lines. */
function logAndExit(how: 'exit' | 'crash'): Promise<{ code: number | null; lines: string[] }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['-r', REGISTER_TS, path.join(__dirname, '..', 'fixtures/log-and-exit.ts'), how, String(LINES)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => resolve({ code, lines: out.split('\n').filter(Boolean) }));
  });
}

// The logger writes asynchronously (service/logger.ts); these show that nothing logged before the
// process ends is lost, however it ends.
describe('log lines are all written when the process ends', () => {
  test('process.exit() right after logging: every line, the last one included', async () => {
    const { code, lines } = await logAndExit('exit');
    expect(code).toBe(0);
    expect(lines).toHaveLength(LINES);
    expect(JSON.parse(lines[LINES - 1]!)).toMatchObject({ i: LINES, msg: 'line' });
  });

  test('an uncaught exception: every line, then one fatal line without the error message, exit code 1', async () => {
    const { code, lines } = await logAndExit('crash');
    expect(code).toBe(1);
    expect(lines).toHaveLength(LINES + 1);
    expect(JSON.parse(lines[LINES - 1]!)).toMatchObject({ i: LINES });
    const fatal = JSON.parse(lines[LINES]!);
    expect(fatal).toMatchObject({ level: 60, msg: 'uncaught exception: exiting', err: { name: 'Error' } });
    expect(fatal.err.frames).toMatch(/log-and-exit\.ts/);
    // Stack frames, one per line, and nothing else of the stack (its first line is the message).
    const frames = (fatal.err.frames as string).split('\n');
    expect(frames.length).toBeGreaterThan(1);
    for (const frame of frames) expect(frame).toMatch(/^\s+at /);
    expect(lines.join('\n')).not.toContain('pay_rate');
  });

  describe('the service process, stopped by a signal', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await freshDatabase('logging');
    });
    afterAll(() => database.close());

    let service: ServiceProcess | undefined;
    afterAll(() => service?.stop());

    /** The JSON lines of the process's output (the console line is not one). */
    const jsonLines = (output: string) =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; path?: string; [field: string]: unknown });

    test('the start-up lines, the request lines and the final "stopped" line are all in its output', async () => {
      service = startServiceProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'info', SEED_DEMO_DATA: 'true' });
      const listening = await service.listening;
      expect(listening).toHaveProperty('url');
      const url = (listening as { url: string }).url;
      for (let i = 0; i < 20; i++) expect((await fetch(`${url}/api/v1/jobs?limit=1`)).status).toBe(200);
      expect(await service.stop()).toBe(0);
      expect(service.stdout()).toContain(
        `Jobs service listening on ${url} (no gateway secret: send the X-Consumer-* identity headers yourself)`,
      );
      const lines = jsonLines(service.stdout());
      const seeded = lines.find((line) => line.msg === 'loaded the demo jobs into an empty table');
      expect(seeded?.jobs).toBeGreaterThan(0);
      // Where it listens and which database it uses, never the database's password.
      expect(lines.find((line) => line.msg === 'jobs service listening')).toMatchObject({
        url,
        database: `127.0.0.1:${new URL(database.url).port || '3306'}/${database.name}`,
        gatewaySecret: false,
      });
      expect(lines.filter((line) => line.msg === 'request' && line.path === '/api/v1/jobs')).toHaveLength(20);
      expect(lines[lines.length - 1]!.msg).toBe('jobs service stopped');
    }, 30_000);

    test('with a gateway secret, on SIGINT (Ctrl-C under npm start): the same orderly stop, and no demo load into a table that has jobs', async () => {
      const secret = 'a-gateway-secret-of-some-length';
      service = startServiceProcess({
        DATABASE_URL: database.url,
        LOG_LEVEL: 'info',
        SEED_DEMO_DATA: 'true',
        GATEWAY_SECRET: secret,
      });
      const { url } = (await service.listening) as { url: string };
      expect((await fetch(`${url}/api/v1/jobs?limit=1`, { headers: { 'X-Gateway-Secret': secret } })).status).toBe(200);
      service.child.kill('SIGINT');
      expect(await service.exited).toBe(0);
      expect(service.stdout()).toContain(
        `Jobs service listening on ${url} (only requests carrying the gateway secret are served)`,
      );
      const lines = jsonLines(service.stdout());
      expect(lines.find((line) => line.msg === 'jobs service listening')).toMatchObject({ url, gatewaySecret: true });
      expect(lines.some((line) => line.msg === 'loaded the demo jobs into an empty table')).toBe(false);
      expect(service.stdout()).not.toContain(secret);
      expect(lines[lines.length - 1]!.msg).toBe('jobs service stopped');
    }, 30_000);

    test('a quiet service still shows each request line within about a second (lines are batched)', async () => {
      service = startServiceProcess({ DATABASE_URL: database.url, LOG_LEVEL: 'info' });
      const { url } = (await service.listening) as { url: string };
      expect((await fetch(`${url}/api/v1/jobs?limit=1`)).status).toBe(200);
      const shown = Date.now();
      while (!service.stdout().includes('"msg":"request"') && Date.now() - shown < 5000)
        await new Promise((r) => setTimeout(r, 50));
      // LOG_FLUSH_INTERVAL_MS is 1 s; without the timer the line would wait for 4 KiB or the exit.
      expect(service.stdout()).toContain('"msg":"request"');
      expect(Date.now() - shown).toBeLessThan(3000);
      expect(await service.stop()).toBe(0);
    }, 30_000);
  });
});
