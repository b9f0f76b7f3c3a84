import { Webhook } from 'standardwebhooks';

/** The Standard Webhooks headers of one delivery attempt. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Signs `id.timestamp.body` with each valid secret, space-separated, with the reference library partners verify with. */
export function signDelivery(secrets: readonly string[], id: string, at: Date, body: string): SignedHeaders {
  if (secrets.length === 0) throw new Error('a delivery needs at least one secret');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}
