/**
 * The sealing key's keyring on a real database: a dispatcher whose keyring opens some subscriptions'
 * secrets starts, shows each one it cannot open to its owner (GET, /test) and its operator (one log
 * line, a metric) and recovers by itself with the right key; one that opens none is refused by the
 * dispatcher and the service alike; the re-seal moves every secret to the current key, twice
 * harmlessly, and never overwrites a partner's rotation.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { storeJob } from '../../../db/jobs/job-store';
import { replaceSealed, sealedRow, SECRET_UNOPENABLE } from '../../../db/webhooks/sealing';
import { createSubscription, rotateSecret } from '../../../db/webhooks/subscriptions';
import { createApp } from '../../../service/app';
import { resealSecrets } from '../../../service/commands/reseal-secrets';
import { runAdmin } from '../../../service/commands/webhooks';
import { MESSAGES } from '../../../service/errors';
import { createLogger } from '../../../service/logger';
import { checkServiceKeyring } from '../../../service/webhooks/keyring-check';
import { decryptSecret, encryptSecret, keyId, newSecret, sealedUnder } from '../../../service/webhooks/secrets';
import { loadConfig } from '../../../service/config';
import { json, reader } from '../../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../../helpers/database';
import { buildDist } from '../../helpers/built';
import { call, expectJsonError, serve } from '../../helpers/http';
import { MINIMAL_JOB } from '../../helpers/job-bodies';
import { memoryLog } from '../../helpers/service';
import { startDispatcherProcess, type DispatcherProcess } from '../../dispatcher/dispatcher-process';

const [OLD, NEW, STRANGER] = [randomBytes(32), randomBytes(32), randomBytes(32)];
const OWNER = reader['X-Consumer-ID']!;
let database: TestDatabase;
let receiver: http.Server;
const arrivals = new Map<string, number[]>();
const running: DispatcherProcess[] = [];

beforeAll(async () => {
  // Dispatchers run compiled, as in production: a start takes a second, not several.
  await buildDist();
  database = await freshDatabase('webhook_sealing_key');
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const list = arrivals.get(req.url!) ?? [];
      arrivals.set(req.url!, [
        ...list,
        (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { sequence: number }).sequence,
      ]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
}, 300_000);

afterEach(async () => {
  await Promise.all(running.splice(0).map((one) => one.stop()));
  await database.query('delete from webhook_subscriptions');
  arrivals.clear();
});

afterAll(async () => {
  receiver.closeAllConnections();
  receiver.close();
  await database.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const env = (keys: Buffer[]) => ({
  DATABASE_URL: database.url,
  WEBHOOK_SECRETS_KEY: keys[0]!.toString('hex'),
  WEBHOOK_SECRETS_KEY_PREVIOUS: keys
    .slice(1)
    .map((key) => key.toString('base64'))
    .join(','),
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_RETRY_FIRST_MS: '100',
  WEBHOOK_RETRY_MAX_MS: '300',
});
const dispatcher = async (keys: Buffer[]) => {
  const started = await startDispatcherProcess(env(keys), { built: true });
  running.push(started);
  return started;
};
const change = () =>
  storeJob(
    database.db,
    { ...MINIMAL_JOB, status: 'active', requirements: [], responsibilities: [] } as never,
    'writer',
  );
/** The form stored before key ids: iv | tag | ciphertext. */
function firstForm(key: Buffer, secret: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}
async function subscribe(seal: (secret: string) => Buffer) {
  const secret = newSecret();
  const path = `/hooks/${randomBytes(4).toString('hex')}`;
  const created = await createSubscription(
    database.db,
    {
      consumerId: OWNER,
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${path}`,
      description: null,
      secret: seal(secret),
      position: 0,
    },
    100,
  );
  if (typeof created === 'string') throw new Error(created);
  return { id: created.id, secret, path };
}
async function until(done: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}
const unopenableGauge = async (one: DispatcherProcess) =>
  Number(/^webhook_subscriptions_unopenable (\S+)$/m.exec(await (await fetch(one.metricsUrl!)).text())?.[1]);
const sealedRows = () =>
  database.query<Array<{ secret: Buffer; previous_secret: Buffer | null }>>(
    'select secret, previous_secret from webhook_subscriptions order by id',
  );

test('a keyring that opens some secrets starts; the subscription it cannot open is shown to its owner and operator once, waits without failing, and recovers with the right key', async () => {
  const opened = await subscribe((secret) => encryptSecret(OLD, secret));
  const closed = await subscribe((secret) => encryptSecret(NEW, secret));
  await change();
  await change();
  // It had been failing for days: time spent waiting on our key must not count towards giving up.
  await database.query(
    'update webhook_subscriptions set attempts = 9, failing_since = utc_timestamp(3) - interval 10 day where id = unhex(replace(?, "-", ""))',
    [closed.id],
  );
  const old = await dispatcher([OLD]);
  await until(() => (arrivals.get(opened.path)?.length ?? 0) === 2, 'the openable subscription delivered');
  // Claimed again every 300 ms at most while it waits: still one line, no delivery, no failure.
  await change();
  await until(() => (arrivals.get(opened.path)?.length ?? 0) === 3, 'the third change delivered');
  await sleep(1000);
  expect(arrivals.get(closed.path)).toBeUndefined();
  const told = old.lines.filter((line) => line.subscription === closed.id);
  expect(told).toHaveLength(1);
  expect(told[0]).toMatchObject({
    level: 40,
    sealedUnder: keyId(NEW),
    msg: expect.stringContaining("webhook secret cannot be opened with this dispatcher's keyring"),
  });
  expect(JSON.stringify(old.lines)).not.toContain(closed.secret);
  expect(await unopenableGauge(old)).toBe(1);

  // The owner reads why; its test is a JSON 503, never a 500; nothing counts towards giving up.
  const app = await serve(
    createApp({
      db: database.db,
      config: {},
      logger: createLogger('silent'),
      webhooks: loadConfig(env([OLD])).webhooks,
    }).callback(),
  );
  try {
    const shown = await call(`${app.url}/api/v1/webhooks/${closed.id}`, { headers: reader });
    expect(shown.body.data).toMatchObject({
      status: 'active',
      lastError: SECRET_UNOPENABLE,
      failingSince: null,
      disabledReason: null,
    });
    expect((await call(`${app.url}/api/v1/webhooks/${opened.id}`, { headers: reader })).body.data.lastError).toBeNull();
    const tested = await call(`${app.url}/api/v1/webhooks/${closed.id}/test`, {
      method: 'POST',
      headers: { ...reader, ...json },
    });
    expectJsonError(tested, 503, MESSAGES.secretUnopenable);
    expect(tested.headers.get('retry-after')).toBe('60');
  } finally {
    await app.close();
  }
  const [row] = await database.query<Array<{ attempts: number; status: string }>>(
    'select attempts, status from webhook_subscriptions where id = unhex(replace(?, "-", ""))',
    [closed.id],
  );
  expect(row).toMatchObject({ attempts: 0, status: 'active' });
  // The service started with that keyring says so once, naming the subscription.
  const logs: string[] = [];
  await checkServiceKeyring(database.db, loadConfig(env([OLD])).webhooks, createLogger('info', memoryLog(logs)));
  expect(logs.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
    expect.objectContaining({ level: 40, unopenable: 1, of: 2, subscriptions: [closed.id] }),
  ]);

  await old.stop();
  const fixed = await dispatcher([NEW, OLD]);
  await until(
    () => (arrivals.get(closed.path)?.length ?? 0) === 3,
    'the waiting subscription delivered with the right keyring',
    5000,
  );
  expect(arrivals.get(closed.path)).toEqual([1, 2, 3]);
  await until(
    async () =>
      (
        await database.query<Array<{ last_error: string | null }>>(
          'select last_error from webhook_subscriptions where last_error is not null',
        )
      ).length === 0,
    'lastError cleared',
  );
  expect(await unopenableGauge(fixed)).toBe(0);
  expect(fixed.lines.filter((line) => line.subscription !== undefined && (line.level as number) >= 40)).toEqual([]);
}, 40_000);

test('a keyring that opens none of the stored secrets: the dispatcher and the service refuse to start, naming the keys they hold and the keys that sealed', async () => {
  await subscribe((secret) => encryptSecret(OLD, secret));
  await subscribe((secret) => firstForm(OLD, secret));
  const refused = await dispatcher([STRANGER, NEW]);
  expect(await refused.exited).toBe(1);
  const reason = `WEBHOOK_SECRETS_KEY cannot open the webhook secrets stored in the database: this keyring (WEBHOOK_SECRETS_KEY key id ${keyId(STRANGER)}; WEBHOOK_SECRETS_KEY_PREVIOUS key ids ${keyId(NEW)}) opens none of the 2 subscriptions' secrets, sealed under key id ${keyId(OLD)} (1), a key of the form before key ids (1)`;
  expect(refused.lines.map((line) => line.msg).join('\n')).toContain(reason);
  await expect(
    checkServiceKeyring(database.db, loadConfig(env([STRANGER, NEW])).webhooks, createLogger('silent')),
  ).rejects.toThrow(reason);
  // The right key in the ring, as previous: both start.
  await expect(
    checkServiceKeyring(database.db, loadConfig(env([NEW, OLD])).webhooks, createLogger('silent')),
  ).resolves.toBeUndefined();
}, 20_000);

test('reseal: every signing secret under the current key, the same secrets; a second run has nothing to do; one no key opens is named and the old key kept', async () => {
  const plain = await subscribe((secret) => encryptSecret(OLD, secret));
  const first = await subscribe((secret) => firstForm(OLD, secret));
  const already = await subscribe((secret) => encryptSecret(NEW, secret));
  const rotated = newSecret();
  await rotateSecret(database.db, OWNER, plain.id, { secret: encryptSecret(OLD, rotated), overlapMs: 3_600_000 });
  const lost = await subscribe((secret) => encryptSecret(STRANGER, secret));
  const reseal = async () => {
    const out: string[] = [];
    const code = await runAdmin(['reseal'], env([NEW, OLD]), (line) => out.push(line));
    return { code, out };
  };

  const withLost = await reseal();
  expect(withLost.code).toBe(1);
  expect(withLost.out).toEqual([
    `keyring: WEBHOOK_SECRETS_KEY key id ${keyId(NEW)}; WEBHOOK_SECRETS_KEY_PREVIOUS key ids ${keyId(OLD)}`,
    're-sealed 3 secrets of 2 subscriptions under key id ' + keyId(NEW),
    `1 subscriptions' secrets cannot be opened by this keyring, sealed under key id ${keyId(STRANGER)} (1): ${lost.id}`,
    'add the key that sealed them to WEBHOOK_SECRETS_KEY_PREVIOUS and run reseal again; until then keep every previous key',
  ]);
  await database.query('delete from webhook_subscriptions where id = unhex(replace(?, "-", ""))', [lost.id]);
  const again = await reseal();
  expect(again).toEqual({
    code: 0,
    out: [
      again.out[0],
      `re-sealed 0 secrets of 0 subscriptions under key id ${keyId(NEW)}`,
      `all 3 subscriptions' signing secrets are sealed under key id ${keyId(NEW)}: WEBHOOK_SECRETS_KEY_PREVIOUS may be emptied`,
    ],
  });
  // The new key alone opens every one, and each is the secret it was.
  const rows = await sealedRows();
  expect(rows.every((row) => sealedUnder(row.secret) === keyId(NEW))).toBe(true);
  const opened = rows.flatMap((row) =>
    [row.secret, row.previous_secret]
      .filter((one): one is Buffer => one !== null)
      .map((one) => decryptSecret(NEW, one)),
  );
  expect(opened.sort()).toEqual([plain.secret, rotated, first.secret, already.secret].sort());
  const missing = await runAdmin(['reseal'], { DATABASE_URL: database.url }, () => undefined);
  expect(missing).toBe(2);
}, 20_000);

test('reseal while partners rotate their secrets: a rotation is never overwritten, and a second run finishes the job', async () => {
  const ring = { current: NEW, previous: [OLD] };
  // The compare-and-set itself: a rotation between the read and the write wins.
  const one = await subscribe((secret) => encryptSecret(OLD, secret));
  const read = (await sealedRow(database.db, one.id))!;
  const theirs = newSecret();
  await rotateSecret(database.db, OWNER, one.id, { secret: encryptSecret(NEW, theirs), overlapMs: 3_600_000 });
  expect(
    await replaceSealed(database.db, read, {
      secret: encryptSecret(NEW, one.secret),
      previousSecret: null,
      olderSecret: null,
    }),
  ).toBe(false);
  expect(decryptSecret(ring, (await sealedRow(database.db, one.id))!.secret)).toBe(theirs);

  const many = await Promise.all(Array.from({ length: 30 }, () => subscribe((secret) => encryptSecret(OLD, secret))));
  const newer = many.map(() => newSecret());
  // The service seals partners' new secrets under the new key while the command runs.
  await Promise.all([
    resealSecrets(database.db, ring),
    ...many.map(async (sub, i) => {
      await sleep(i * 2);
      await rotateSecret(database.db, OWNER, sub.id, { secret: encryptSecret(NEW, newer[i]!), overlapMs: 3_600_000 });
    }),
  ]);
  for (const [i, sub] of many.entries()) {
    const row = (await sealedRow(database.db, sub.id))!;
    expect([decryptSecret(ring, row.secret), decryptSecret(ring, row.previousSecret!)]).toEqual([newer[i], sub.secret]);
  }
  await resealSecrets(database.db, ring);
  const rows = await sealedRows();
  expect(
    rows
      .flatMap((row) => [row.secret, row.previous_secret])
      .filter((one) => one !== null && sealedUnder(one) !== keyId(NEW)),
  ).toEqual([]);
  expect(await resealSecrets(database.db, ring)).toMatchObject({ secrets: 0, total: 31, unopenable: [], missed: [] });
}, 20_000);
