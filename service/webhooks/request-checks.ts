import { badRequest, MESSAGES, webhooksUnavailable } from '../errors';
import { decodeSince } from '../http/tokens';
import type { WebhookSettings } from './settings';
import { checkUrl, UrlRefused, type UrlPolicy } from './url-guard';

/** What a webhook request is checked for before it acts: its position token, its URL, a key to seal secrets with. */

/** A position token from the partner: one this API signed, or a 400 saying what to send. */
export function positionOf(key: Buffer, token: string): number {
  try {
    return decodeSince(key, token);
  } catch {
    throw badRequest(MESSAGES.positionInvalid);
  }
}

/** A partner's URL checked as at create, or a 400 with the guard's message (which names nothing of our network). */
export async function checkedUrl(raw: string, policy: UrlPolicy): Promise<void> {
  try {
    await checkUrl(raw, policy);
  } catch (error) {
    if (error instanceof UrlRefused) throw badRequest(error.message);
    throw error;
  }
}

/** The key secrets are sealed with; without one the server stores no secret, so it answers 503. */
export function sealingKey(settings: WebhookSettings): Buffer {
  if (!settings.secretsKey) throw webhooksUnavailable();
  return settings.secretsKey;
}

