import { createHmac } from 'node:crypto';
import { SECRET_PREFIX } from './secrets';

/** The Standard Webhooks headers of one delivery attempt. */
export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/**
 * Signs `id.timestamp.body` (HMAC-SHA256, base64, `v1,`) with each valid secret, space-separated, as
 * Standard Webhooks defines it; node:crypto, not the reference library's pure-JS SHA-256, which cost
 * four times as much a delivery (docs/decisions.md, Webhooks). The keys are decoded once a walk.
 */
export function signer(secrets: readonly string[]): (id: string, at: Date, body: string) => SignedHeaders {
  if (secrets.length === 0) throw new Error('a delivery needs at least one secret');
  const keys = secrets.map((secret) =>
    Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64'),
  );
  return (id, at, body) => {
    const timestamp = String(Math.floor(at.getTime() / 1000));
    const signed = `${id}.${timestamp}.${body}`;
    return {
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': keys
        .map((key) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`)
        .join(' '),
    };
  };
}
