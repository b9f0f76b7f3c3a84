import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks' symmetric secret form: `whsec_` and the base64 of 24 to 64 random bytes. */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The sealed form that names its key: this byte, the key's id, then iv | tag | ciphertext. */
const VERSION = 0x01;
const KEY_ID_BYTES = 4;
const HEADER_BYTES = 1 + KEY_ID_BYTES;

/** A new signing secret as the partner is shown it once. */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/**
 * The keys secrets are sealed under, as Active Record encryption keeps them: the current one seals,
 * every one opens what it sealed (the previous ones only during a rotation; docs/operations.md).
 */
export interface Keyring {
  current: Buffer;
  previous: readonly Buffer[];
}

/** A key's public name, in logs and in each sealed secret: derived from the key, revealing nothing of it. */
export function keyId(key: Buffer): string {
  let id = keyIds.get(key);
  if (id === undefined)
    keyIds.set(
      key,
      (id = createHmac('sha256', key)
        .update('webhook secrets key id')
        .digest()
        .subarray(0, KEY_ID_BYTES)
        .toString('hex')),
    );
  return id;
}
// Worked out once per key: every walk opens secrets with the same ring.
const keyIds = new WeakMap<Buffer, string>();

const ringOf = (keys: Buffer | Keyring): Keyring => (Buffer.isBuffer(keys) ? { current: keys, previous: [] } : keys);

/** Version | key id | iv | tag | AES-256-GCM ciphertext, under the ring's current key: tampering or the wrong key fails to open instead of signing with garbage. */
export function encryptSecret(keys: Buffer | Keyring, secret: string): Buffer {
  const key = ringOf(keys).current;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), Buffer.from(keyId(key), 'hex'), iv, cipher.getAuthTag(), sealed]);
}

function open(key: Buffer, body: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES));
  decipher.setAuthTag(body.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(body.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** The key id a sealed secret names; undefined for the first form (iv | tag | ciphertext, before key ids). */
export function sealedUnder(stored: Buffer): string | undefined {
  return stored.length > HEADER_BYTES + IV_BYTES + TAG_BYTES && stored[0] === VERSION
    ? stored.subarray(1, HEADER_BYTES).toString('hex')
    : undefined;
}

/** Whether `stored` is sealed under the ring's current key: what a re-seal leaves alone. */
export const sealedUnderCurrent = (keys: Keyring, stored: Buffer): boolean =>
  sealedUnder(stored) === keyId(keys.current);

/** No key of the ring opens a secret: says under which key it was sealed, never the secret or a key. */
export class SecretUnopenable extends Error {
  constructor(readonly sealedUnder: string | undefined) {
    super(
      `sealed under ${sealedUnder === undefined ? 'a key of the form before key ids' : `key id ${sealedUnder}`}, which no key of this keyring opens`,
    );
  }
}

/** Opens with the key the secret names; one of the first form (no key id), with each key of the ring in turn. */
export function decryptSecret(keys: Buffer | Keyring, stored: Buffer): string {
  const ring = ringOf(keys);
  const all = [ring.current, ...ring.previous];
  const named = sealedUnder(stored);
  const key = named === undefined ? undefined : all.find((one) => keyId(one) === named);
  if (key) {
    try {
      return open(key, stored.subarray(HEADER_BYTES));
    } catch {
      // A first-form secret whose iv happens to begin like a header: tried as one below.
    }
  }
  for (const one of all) {
    try {
      return open(one, stored);
    } catch {
      // not this key
    }
  }
  throw new SecretUnopenable(named);
}
