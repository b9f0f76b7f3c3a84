import type { Database } from '../../db/client';
import { replaceSealed, sealedPage, sealedRow, type SealedRow } from '../../db/webhooks/sealing';
import { describeKeyring, describeSealers, unopenableIn, type Unopenable } from '../webhooks/keyring-check';
import { decryptSecret, encryptSecret, keyId, sealedUnderCurrent, type Keyring } from '../webhooks/secrets';

const PAGE = 100;
// A row a partner keeps rotating under the command is read again this many times, then counted as missed.
const TRIES = 5;

export interface Reseal {
  /** Secrets sealed again under the current key, and the subscriptions they belong to. */
  secrets: number;
  subscriptions: number;
  total: number;
  unopenable: Unopenable[];
  /** Rows changed under the command every time it tried (a partner rotating): run it again. */
  missed: string[];
}

/** The row's signing secrets sealed under the ring's current key, those already so kept as they are. */
function resealed(
  ring: Keyring,
  row: SealedRow,
): Pick<SealedRow, 'secret' | 'previousSecret' | 'olderSecret'> & { count: number } {
  let count = 0;
  const again = (sealed: Buffer | null) => {
    if (sealed === null || sealedUnderCurrent(ring, sealed)) return sealed;
    count += 1;
    return encryptSecret(ring, decryptSecret(ring, sealed));
  };
  return {
    secret: again(row.secret)!,
    previousSecret: again(row.previousSecret),
    olderSecret: again(row.olderSecret),
    count,
  };
}

/**
 * Every stored secret still signing, sealed again under the current key: a row at a time, each written
 * only if unchanged since read (a partner's rotation meanwhile is read again, never overwritten). The
 * secrets themselves stay, so deliveries under way go on; a second run finds nothing to do.
 */
export async function resealSecrets(db: Database, ring: Keyring): Promise<Reseal> {
  const done: Reseal = { secrets: 0, subscriptions: 0, total: 0, unopenable: [], missed: [] };
  for (
    let page = await sealedPage(db, undefined, PAGE);
    page.length > 0;
    page = page.length < PAGE ? [] : await sealedPage(db, page[page.length - 1]!.id, PAGE)
  ) {
    for (const first of page) {
      done.total += 1;
      let row: SealedRow | undefined = first;
      for (let tries = 0; row; tries += 1) {
        const refused = unopenableIn(ring, row);
        if (refused) {
          done.unopenable.push({ id: row.id, sealedUnder: refused.sealedUnder });
          break;
        }
        const next = resealed(ring, row);
        if (next.count === 0) break;
        if (await replaceSealed(db, row, next)) {
          done.secrets += next.count;
          done.subscriptions += 1;
          break;
        }
        if (tries + 1 === TRIES) {
          done.missed.push(row.id);
          break;
        }
        row = await sealedRow(db, row.id);
      }
    }
  }
  return done;
}

/** `npm run -s webhooks -- reseal`: what was done, and whether the previous keys may now go (exit 0) or not (exit 1). */
export async function runReseal(db: Database, ring: Keyring, out: (line: string) => void): Promise<number> {
  out(`keyring: ${describeKeyring(ring)}`);
  const done = await resealSecrets(db, ring);
  out(`re-sealed ${done.secrets} secrets of ${done.subscriptions} subscriptions under key id ${keyId(ring.current)}`);
  if (done.unopenable.length > 0) {
    out(
      `${done.unopenable.length} subscriptions' secrets cannot be opened by this keyring, sealed under ${describeSealers(done.unopenable)}: ${done.unopenable.map((one) => one.id).join(' ')}`,
    );
    out(
      'add the key that sealed them to WEBHOOK_SECRETS_KEY_PREVIOUS and run reseal again; until then keep every previous key',
    );
  }
  if (done.missed.length > 0)
    out(
      `${done.missed.length} subscriptions changed under every try (secrets being rotated): run reseal again: ${done.missed.join(' ')}`,
    );
  if (done.unopenable.length > 0 || done.missed.length > 0) return 1;
  out(
    `all ${done.total} subscriptions' signing secrets are sealed under key id ${keyId(ring.current)}: WEBHOOK_SECRETS_KEY_PREVIOUS may be emptied`,
  );
  return 0;
}
