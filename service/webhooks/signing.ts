import { Webhook } from 'standardwebhooks';

/** The Standard Webhooks headers of one delivery attempt. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs `id.timestamp.body` with each secret (the current one first, then one still valid after a
 * rotation), space-separated in one header as the specification lets a rotation run without a gap.
 * The reference library signs, so what partners verify with is what produced the signature.
 */
export function signDelivery(secrets: readonly string[], id: string, at: Date, body: string): SignedHeaders {
  if (secrets.length === 0) throw new Error('a delivery needs at least one secret');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}
