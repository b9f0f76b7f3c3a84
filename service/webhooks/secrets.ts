import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Standard Webhooks' symmetric secret form: `whsec_` and the base64 of 24 to 64 random bytes. */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new signing secret as the partner is shown it once. */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** WEBHOOK_SECRETS_KEY: 32 bytes in base64 or hex, sealing secrets so a database dump alone does not reveal them. */
export function parseSecretsKey(value: string | undefined): Buffer {
  const text = (value ?? '').trim();
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32 || (!/^[0-9a-f]{64}$/i.test(text) && key.toString('base64') !== text)) {
    throw new Error('WEBHOOK_SECRETS_KEY must be 32 random bytes in base64 or hex, e.g. WEBHOOK_SECRETS_KEY=$(openssl rand -base64 32)');
  }
  return key;
}

/** iv | tag | AES-256-GCM ciphertext: tampering or the wrong key fails to decrypt instead of signing with garbage. */
export function encryptSecret(key: Buffer, secret: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

export function decryptSecret(key: Buffer, stored: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, stored.subarray(0, IV_BYTES));
  decipher.setAuthTag(stored.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(stored.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
