import { Webhook } from 'standardwebhooks';

/** The Standard Webhooks headers of one delivery attempt. */
export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** Signs `id.timestamp.body` with each valid secret, space-separated, with the reference library partners verify with; the keys are decoded once a walk. */
export function signer(secrets: readonly string[]): (id: string, at: Date, body: string) => SignedHeaders {
  if (secrets.length === 0) throw new Error('a delivery needs at least one secret');
  const keys = secrets.map((secret) => new Webhook(secret));
  return (id, at, body) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': keys.map((key) => key.sign(id, at, body)).join(' '),
  });
}
