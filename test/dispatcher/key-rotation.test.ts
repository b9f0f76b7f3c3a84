/**
 * docs/operations.md, "Rotating the webhook sealing key", step by step under a steady stream of changes:
 * 40 subscriptions (half sealed in the form before key ids), two dispatcher processes, the service (its
 * app, restarted as the steps say), a partner subscribing and rotating mid-way. Every delivery arrives,
 * verified by the reference library with the subscription's secret, none later than the give-up time;
 * no subscription is ever left unopenable, and no answer is a 500.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { storeJob } from '../../db/jobs/job-store';
import { createSubscription } from '../../db/webhooks/subscriptions';
import { createApp } from '../../service/app';
import { runAdmin } from '../../service/commands/webhooks';
import { createLogger } from '../../service/logger';
import { checkServiceKeyring } from '../../service/webhooks/keyring-check';
import { encryptSecret, keyId, newSecret, sealedUnder } from '../../service/webhooks/secrets';
import { loadConfig } from '../../service/config';
import { json, reader } from '../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { call, serve, type Served } from '../helpers/http';
import { buildDist } from '../helpers/built';
import { MINIMAL_JOB } from '../helpers/job-bodies';
import { startDispatcherProcess, type DispatcherProcess } from './dispatcher-process';

const SUBSCRIPTIONS = 40;
const CHANGE_EVERY_MS = 200;
const GIVE_UP_MS = 15_000;
const [OLD, NEW] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
const page = readFileSync(path.join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');

let database: TestDatabase;
let receiver: http.Server;
let service: Served | undefined;
const dispatchers: DispatcherProcess[] = [];
// Each subscription's name in its receiver's path, and its id.
const ids = new Map<string, string>();
const everyDispatcher: DispatcherProcess[] = [];

let streaming = false;

// The dispatchers run compiled, as in production: each restart then takes a second, not several.
beforeAll(() => buildDist(), 300_000);

afterAll(async () => {
  streaming = false;
  await Promise.all(dispatchers.map((one) => one.stop()));
  await service?.close();
  receiver?.closeAllConnections();
  receiver?.close();
  await database?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The keys as the procedure gives them to every process at each step. */
const keys = (current: string, previous?: string) => ({
  WEBHOOK_SECRETS_KEY: current,
  WEBHOOK_SECRETS_KEY_PREVIOUS: previous ?? '',
});
const common = () => ({
  DATABASE_URL: database.url,
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_RETRY_FIRST_MS: '200',
  WEBHOOK_RETRY_MAX_MS: '1000',
  WEBHOOK_GIVE_UP_MS: String(GIVE_UP_MS),
});

/** Restarts every dispatcher with `env`: the new ones start before the old ones stop, as a rolling deploy. */
async function restartDispatchers(env: Record<string, string>): Promise<void> {
  const fresh = await Promise.all([0, 1].map(() => startDispatcherProcess({ ...common(), ...env }, { built: true })));
  for (const one of fresh) expect(one.metricsUrl).toBeDefined();
  await Promise.all(dispatchers.splice(0).map((one) => one.stop()));
  dispatchers.push(...fresh);
  everyDispatcher.push(...fresh);
}

/** Restarts the service with `env`, checking its keyring at start-up as runService does. */
async function restartService(env: Record<string, string>): Promise<void> {
  const webhooks = loadConfig({ ...common(), ...env }).webhooks;
  await checkServiceKeyring(database.db, webhooks, createLogger('silent'));
  const next = await serve(
    createApp({ db: database.db, config: {}, logger: createLogger('silent'), webhooks }).callback(),
  );
  await service?.close();
  service = next;
}

function firstForm(key: Buffer, secret: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

test('the documented rotation under a steady stream: 40 subscriptions, 0 lost, 0 past the give-up time, every delivery verified with its secret', async () => {
  const began = Date.now();
  database = await freshDatabase('webhook_key_rotation');
  // Each subscription's secrets as its partner holds them; a delivery must verify with one of them.
  const secrets = new Map<string, string[]>();
  // Every request as it came; each is verified at the end, once every secret is known.
  const received: Array<{ name: string; body: string; headers: Record<string, string>; at: number }> = [];
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // The path names the subscription: /hooks/<its name here>.
      const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
      received.push({
        name: req.url!.split('/').pop()!,
        body: Buffer.concat(chunks).toString('utf8'),
        headers,
        at: Date.now(),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const start = new Map<string, number>();
  for (let i = 0; i < SUBSCRIPTIONS - 1; i++) {
    const secret = newSecret();
    const sealed =
      i % 2 === 0 ? firstForm(Buffer.from(OLD, 'hex'), secret) : encryptSecret(Buffer.from(OLD, 'hex'), secret);
    const created = await createSubscription(
      database.db,
      { consumerId: `partner-${i}`, url: `${base}/s${i}`, description: null, secret: sealed },
      1,
    );
    if (typeof created === 'string') throw new Error(created);
    secrets.set(`s${i}`, [secret]);
    ids.set(`s${i}`, created.id);
    start.set(`s${i}`, created.position);
  }

  // Before: the old key everywhere.
  await restartDispatchers(keys(OLD));
  await restartService(keys(OLD));
  let changes = 0;
  streaming = true;
  const stream = (async () => {
    const from = Date.now();
    while (streaming) {
      await storeJob(
        database.db,
        { ...MINIMAL_JOB, title: `Job ${changes}`, status: 'active', requirements: [], responsibilities: [] } as never,
        'writer',
      );
      changes += 1;
      await sleep(Math.max(0, from + changes * CHANGE_EVERY_MS - Date.now()));
    }
  })();
  await sleep(500);

  // Step 2: every dispatcher opens both keys before anything is sealed under the new one.
  await restartDispatchers(keys(NEW, OLD));
  // Step 3: the service seals under the new key; a partner subscribes and gets a secret sealed so.
  await restartService(keys(NEW, OLD));
  // Its secret is known before its first delivery can arrive: the answer comes before the next claim.
  const late = 'late';
  const created = call(`${service!.url}/api/v1/webhooks`, {
    method: 'POST',
    headers: { ...reader, ...json },
    body: JSON.stringify({ url: `${base}/${late}` }),
  });
  const answer = await created;
  expect(answer.status).toBe(201);
  secrets.set(late, [answer.body.data.secret as string]);
  ids.set(late, answer.body.data.id as string);
  const [row] = await database.query<Array<{ position: number; secret: Buffer }>>(
    'select position, secret from webhook_subscriptions where id = unhex(replace(?, "-", ""))',
    [ids.get(late)],
  );
  expect(sealedUnder(row!.secret)).toBe(keyId(Buffer.from(NEW, 'hex')));
  start.set(late, Number(row!.position));

  // Step 4: the re-seal, while a partner rotates its secret (the new one signs at once, the old one beside it).
  const rotated = 's3';
  const reseal = (out: string[]) => runAdmin(['reseal'], { ...common(), ...keys(NEW, OLD) }, (line) => out.push(line));
  expect(page).toContain('npm run -s webhooks -- reseal');
  const [first, rotation] = await Promise.all([
    (async () => {
      const out: string[] = [];
      return { code: await reseal(out), out };
    })(),
    call(`${service!.url}/api/v1/webhooks/${ids.get(rotated)}/rotate-secret`, {
      method: 'POST',
      headers: { ...reader, 'X-Consumer-ID': 'partner-3' },
    }),
  ]);
  expect(rotation.status).toBe(200);
  secrets.get(rotated)!.push(rotation.body.data.secret as string);
  expect(first.code).toBe(0);
  // The 39 sealed under the old key, half of them in the form before key ids; the rotated one's old secret moved, not lost.
  expect(first.out[1]).toBe(
    `re-sealed ${SUBSCRIPTIONS - 1} secrets of ${SUBSCRIPTIONS - 1} subscriptions under key id ${keyId(Buffer.from(NEW, 'hex'))}`,
  );
  const second: string[] = [];
  expect(await reseal(second)).toBe(0);
  expect(second[1]).toBe(`re-sealed 0 secrets of 0 subscriptions under key id ${keyId(Buffer.from(NEW, 'hex'))}`);

  // Step 5: the old key leaves every process.
  await restartDispatchers(keys(NEW));
  await restartService(keys(NEW));
  await sleep(500);
  streaming = false;
  await stream;

  const sequences = (
    await database.query<Array<{ seq: number }>>('select seq from job_changes where ever_public = 1 order by seq')
  ).map((one) => Number(one.seq));
  const unverified: string[] = [];
  const arrivals = new Map<string, Array<{ sequence: number; lateMs: number }>>();
  let checked = 0;
  const verify = () => {
    for (; checked < received.length; checked++) {
      const { name, body, headers, at } = received[checked]!;
      const event = (secrets.get(name) ?? [])
        .map((secret) => {
          try {
            return new Webhook(secret).verify(body, headers) as { sequence: number; timestamp: string };
          } catch {
            return undefined;
          }
        })
        .find(Boolean);
      if (!event) unverified.push(`${name}: ${body.slice(0, 80)}`);
      else
        arrivals.set(name, [
          ...(arrivals.get(name) ?? []),
          { sequence: event.sequence, lateMs: at - Date.parse(event.timestamp) },
        ]);
    }
  };
  const missing = () => {
    verify();
    return [...start].flatMap(([name, from]) =>
      sequences
        .filter((seq) => seq > from && !(arrivals.get(name) ?? []).some((one) => one.sequence === seq))
        .map((seq) => `${name}:${seq}`),
    );
  };
  const deadline = Date.now() + 10_000;
  while (missing().length > 0 && Date.now() < deadline) await sleep(100);
  const delivered = [...arrivals.values()].flat();
  const duplicates =
    delivered.length -
    new Set([...arrivals].flatMap(([name, list]) => list.map((one) => `${name}:${one.sequence}`))).size;
  const latest = Math.max(...delivered.map((one) => one.lateMs));
  console.log(
    `sealing key rotation: ${changes} changes, ${delivered.length} deliveries to ${start.size} subscriptions, ${duplicates} duplicates, latest ${latest} ms after its change, ${Math.round((Date.now() - began) / 1000)} s`,
  );
  expect({ lost: missing(), unverified, subscriptions: start.size }).toEqual({
    lost: [],
    unverified: [],
    subscriptions: SUBSCRIPTIONS,
  });
  expect(latest).toBeLessThan(GIVE_UP_MS);
  // None ever waited on a key it lacked, failed, or was given up on; /test answers every one.
  expect(
    everyDispatcher.flatMap((one) => one.lines).filter((line) => String(line.msg).includes('cannot be opened')),
  ).toEqual([]);
  expect(
    await database.query(
      'select id from webhook_subscriptions where status <> "active" or last_error is not null or failing_since is not null',
    ),
  ).toEqual([]);
  const tested = await call(`${service!.url}/api/v1/webhooks/${ids.get(late)}/test`, {
    method: 'POST',
    headers: { ...reader, ...json },
  });
  expect(tested.body.data).toMatchObject({ delivered: true, status: 204 });
}, 60_000);
