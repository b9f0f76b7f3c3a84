import type { Database } from '../../db/client';
import { sealedPage, type SealedRow } from '../../db/webhooks/sealing';
import type { Logger } from '../logger';
import { decryptSecret, keyId, SecretUnopenable, type Keyring } from './secrets';
import { keyringOf } from './settings';
import type { WebhookSettings } from '../config';

const PAGE = 500;

/** A subscription none of whose keys is in the ring: its id and the key id its secret names (undefined: the form before key ids). */
export interface Unopenable {
  id: string;
  sealedUnder: string | undefined;
}

/** Every stored subscription tried against a keyring: how many, which it cannot open, and which it opens that still show they could not be. */
export interface KeyringSurvey {
  total: number;
  unopenable: Unopenable[];
  reopened: string[];
}

/** The first of the row's signing secrets the ring cannot open, or undefined when it opens them all. */
export function unopenableIn(
  ring: Keyring,
  row: Pick<SealedRow, 'secret' | 'previousSecret' | 'olderSecret'>,
): SecretUnopenable | undefined {
  for (const sealed of [row.secret, row.previousSecret, row.olderSecret]) {
    if (sealed === null) continue;
    try {
      decryptSecret(ring, sealed);
    } catch (error) {
      if (error instanceof SecretUnopenable) return error;
      throw error;
    }
  }
  return undefined;
}

/** Reads every subscription's sealed secrets, a page at a time, and tries each with the ring. */
export async function surveySecrets(db: Database, ring: Keyring): Promise<KeyringSurvey> {
  const survey: KeyringSurvey = { total: 0, unopenable: [], reopened: [] };
  for (
    let page = await sealedPage(db, undefined, PAGE);
    page.length > 0;
    page = page.length < PAGE ? [] : await sealedPage(db, page[page.length - 1]!.id, PAGE)
  ) {
    for (const row of page) {
      survey.total += 1;
      const refused = unopenableIn(ring, row);
      if (refused) survey.unopenable.push({ id: row.id, sealedUnder: refused.sealedUnder });
      else if (row.unopenableShown) survey.reopened.push(row.id);
    }
  }
  return survey;
}

/** The ring as an operator checks it against what it set: each variable's key ids. */
export function describeKeyring(ring: Keyring): string {
  return `WEBHOOK_SECRETS_KEY key id ${keyId(ring.current)}; WEBHOOK_SECRETS_KEY_PREVIOUS ${ring.previous.length === 0 ? 'none' : `key ids ${ring.previous.map(keyId).join(', ')}`}`;
}

/** Which keys sealed what the ring cannot open, with how many of each. */
export function describeSealers(unopenable: readonly Unopenable[]): string {
  const counts = new Map<string, number>();
  for (const one of unopenable) {
    const name = one.sealedUnder === undefined ? 'a key of the form before key ids' : `key id ${one.sealedUnder}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].map(([name, count]) => `${name} (${count})`).join(', ');
}

/**
 * A keyring that opens none of the stored secrets is the wrong one: refused at start-up, naming the keys
 * it holds and those that sealed, rather than failing every delivery unseen. Opening some is a start.
 */
export async function proveKeyring(db: Database, ring: Keyring): Promise<KeyringSurvey> {
  const survey = await surveySecrets(db, ring);
  if (survey.total > 0 && survey.unopenable.length === survey.total) {
    throw new Error(
      `WEBHOOK_SECRETS_KEY cannot open the webhook secrets stored in the database: this keyring (${describeKeyring(ring)}) opens none of the ${survey.total} subscriptions' secrets, ` +
        `sealed under ${describeSealers(survey.unopenable)}. Start it with the key that sealed them (the service's WEBHOOK_SECRETS_KEY; during a rotation the old one in WEBHOOK_SECRETS_KEY_PREVIOUS)`,
    );
  }
  return survey;
}

/** The service agrees with the dispatcher: no keyring that opens nothing; one line naming the subscriptions it cannot open, whose tests answer 503. */
export async function checkServiceKeyring(db: Database, settings: WebhookSettings, logger: Logger): Promise<void> {
  if (!settings.secretsKey) return;
  const keyring = keyringOf({ ...settings, secretsKey: settings.secretsKey });
  const { unopenable, total } = await proveKeyring(db, keyring);
  if (unopenable.length === 0) return;
  logger.warn(
    {
      unopenable: unopenable.length,
      of: total,
      subscriptions: unopenable.slice(0, 20).map((one) => one.id),
      sealedUnder: describeSealers(unopenable),
      keyring: describeKeyring(keyring),
    },
    "webhook secrets this service's keyring cannot open: tests of those subscriptions answer 503 until their key is in WEBHOOK_SECRETS_KEY or WEBHOOK_SECRETS_KEY_PREVIOUS",
  );
}
