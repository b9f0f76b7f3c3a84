/** Subscription secrets: Standard Webhooks' form, sealed in the database, and signatures partners verify with the reference library. */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createCipheriv } from 'node:crypto';
import {
  decryptSecret,
  encryptSecret,
  keyId,
  newSecret,
  SecretUnopenable,
  sealedUnder,
  sealedUnderCurrent,
} from '../../../service/webhooks/secrets';
import { parseSecretsKey } from '../../../service/config';
import { retryDelay } from '../../../service/webhooks/settings';
import { signer } from '../../../service/webhooks/signing';

test('a new secret is whsec_ and 32 random bytes in base64, different each time', () => {
  const [a, b] = [newSecret(), newSecret()];
  expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
  expect(a).not.toBe(b);
});

test('what is stored reveals nothing of the secret and opens only with the key', () => {
  const key = randomBytes(32);
  const secret = newSecret();
  const stored = encryptSecret(key, secret);
  expect(stored.toString('latin1')).not.toContain(secret.slice(6, 20));
  expect(stored.toString('base64')).not.toContain(secret.slice(6, 20));
  expect(decryptSecret(key, stored)).toBe(secret);
  expect(() => decryptSecret(randomBytes(32), stored)).toThrow();
  const tampered = Buffer.from(stored);
  tampered[tampered.length - 1]! ^= 1;
  expect(() => decryptSecret(key, tampered)).toThrow();
});

/** The form stored before key ids: iv | tag | AES-256-GCM ciphertext, no header. */
function firstForm(key: Buffer, secret: string, iv = randomBytes(12)): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

test('a keyring: the current key seals and names itself; a previous key opens what it sealed; a key not in the ring is named, never tried blind', () => {
  const [old, current, stranger] = [randomBytes(32), randomBytes(32), randomBytes(32)];
  const ring = { current, previous: [old] };
  const secret = newSecret();
  const underOld = encryptSecret(old, secret);
  const underCurrent = encryptSecret(ring, secret);
  expect([sealedUnder(underOld), sealedUnder(underCurrent)]).toEqual([keyId(old), keyId(current)]);
  expect(keyId(current)).toMatch(/^[0-9a-f]{8}$/);
  expect(current.toString('hex')).not.toContain(keyId(current));
  expect([sealedUnderCurrent(ring, underOld), sealedUnderCurrent(ring, underCurrent)]).toEqual([false, true]);
  expect(decryptSecret(ring, underOld)).toBe(secret);
  expect(decryptSecret(ring, underCurrent)).toBe(secret);
  // Once the old key leaves the ring, what it sealed names it.
  const error = (() => {
    try {
      decryptSecret({ current, previous: [stranger] }, underOld);
    } catch (thrown) {
      return thrown;
    }
  })();
  expect(error).toBeInstanceOf(SecretUnopenable);
  expect((error as SecretUnopenable).sealedUnder).toBe(keyId(old));
  expect((error as Error).message).toBe(`sealed under key id ${keyId(old)}, which no key of this keyring opens`);
  expect((error as Error).message).not.toContain(secret);
});

test('secrets stored before key ids still open with any key of the ring, even one whose iv begins like a header', () => {
  const [old, current] = [randomBytes(32), randomBytes(32)];
  const secret = newSecret();
  const stored = firstForm(old, secret);
  const lookalike = firstForm(
    old,
    secret,
    Buffer.concat([Buffer.from([0x01]), Buffer.from(keyId(current), 'hex'), randomBytes(7)]),
  );
  expect(decryptSecret({ current, previous: [old] }, stored)).toBe(secret);
  expect(decryptSecret({ current, previous: [old] }, lookalike)).toBe(secret);
  expect(sealedUnderCurrent({ current, previous: [old] }, stored)).toBe(false);
  expect(() => decryptSecret(current, stored)).toThrow(
    'sealed under a key of the form before key ids, which no key of this keyring opens',
  );
});

test('the secrets key is 32 bytes in base64 or hex; anything else is refused with how to make one', () => {
  const key = randomBytes(32);
  expect(parseSecretsKey(key.toString('base64'))).toEqual(key);
  expect(parseSecretsKey(key.toString('hex'))).toEqual(key);
  for (const bad of [undefined, '', 'short', randomBytes(16).toString('base64')]) {
    expect(() => parseSecretsKey(bad)).toThrow(
      'WEBHOOK_SECRETS_KEY must be 32 random bytes in base64 or hex, e.g. WEBHOOK_SECRETS_KEY=$(openssl rand -base64 32)',
    );
  }
});

test('a delivery signed with two secrets verifies with either, and with no other', () => {
  const [current, previous] = [newSecret(), newSecret()];
  const body = JSON.stringify({ id: 'evt_7', type: 'job.removed', data: { id: 'x' } });
  const headers = signer([current, previous])('evt_7', new Date(), body);
  expect(headers['webhook-id']).toBe('evt_7');
  expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
  expect(new Webhook(current).verify(body, { ...headers })).toEqual(JSON.parse(body));
  expect(new Webhook(previous).verify(body, { ...headers })).toEqual(JSON.parse(body));
  expect(() => new Webhook(newSecret()).verify(body, { ...headers })).toThrow('No matching signature found');
  expect(() => new Webhook(current).verify(`${body} `, { ...headers })).toThrow('No matching signature found');
});

test('each signature is the one the reference library makes, for any secret, time and body', () => {
  for (const body of ['{}', JSON.stringify({ data: { title: 'Café — Zürich 🚀', description: 'x'.repeat(70_000) } })]) {
    const secret = newSecret();
    const at = new Date(1_800_000_000_123);
    expect(signer([secret])('evt_42', at, body)['webhook-signature']).toBe(
      new Webhook(secret).sign('evt_42', at, body),
    );
  }
});

test('retries back off exponentially with jitter, capped', () => {
  const retry = { firstMs: 5000, maxMs: 36_000_000, giveUpAfterMs: 259_200_000 };
  expect(retryDelay(1, retry, () => 0)).toBe(2500);
  expect(retryDelay(1, retry, () => 1)).toBe(5000);
  expect(retryDelay(4, retry, () => 1)).toBe(40_000);
  expect(retryDelay(30, retry, () => 1)).toBe(36_000_000);
  expect(retryDelay(30, retry, () => 0)).toBe(18_000_000);
});
