import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Database } from '../../db/client';
import { errorCode } from '../../db/errors';
import { claimKey, deleteExpiredKeys, findKey, forgetExpiredKey, type KeyClaim, type StoredResponse } from '../../db/jobs/idempotency-keys';
import { badRequest, keyInProgress as inProgress, keyReused as reusedKey, MESSAGES } from '../errors';

// Stripe's limit is 255 characters; visible ASCII keeps keys unambiguous in logs and headers.
const KEY = /^[\x21-\x7E]{1,255}$/;

// Another request holds the key (its transaction is still open) for longer than the database's
// lock wait limit, or two waiters collided: retrying shortly is the right thing either way.
const STILL_RUNNING = new Set<string | undefined>(['ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_DEADLOCK']);


/** Method, path and the body as canonical JSON: what "the same request" means for a key. */
function requestHash(ctx: Context): string {
  return createHash('sha256').update(`${ctx.method} ${ctx.path}\n${canonicalJson(ctx.request.body)}`).digest('hex');
}

function replay(ctx: Context, response: StoredResponse): void {
  ctx.status = response.status;
  if (response.location) ctx.set('Location', response.location);
  ctx.set('Idempotent-Replayed', 'true');
  ctx.type = 'json';
  ctx.body = response.body;
}

/** Answers from a committed record: the first response, or 422 for a different body. */
function answerFromRecord(ctx: Context, record: { requestHash: string; response: StoredResponse | null }, hash: string): void {
  if (record.requestHash !== hash) throw reusedKey();
  if (!record.response) throw inProgress();
  replay(ctx, record.response);
}

/**
 * Idempotent creates (Stripe's model, docs/decisions.md "Idempotent creates"). Without an
 * Idempotency-Key header the handler writes to `db`. With one, per consumer:
 * - a key already answered replays that first response (status, Location, body), or is a 422
 *   when this body differs;
 * - otherwise the key is claimed in a transaction that the handler writes the job through and
 *   that stores the response too, so a job never exists without its recorded response, nor the
 *   reverse. A request that fails (validation, database) rolls back and stores nothing: the same
 *   key can be retried;
 * - a concurrent request with the same key waits on the claim's row lock, then replays; if it
 *   waited longer than the database's lock wait limit (DB_QUERY_TIMEOUT_MS), it is a 409.
 */
export async function idempotently(ctx: Context, db: Database, handler: (write: Database) => Promise<void>): Promise<void> {
  // headersDistinct builds an array for every header: only a keyed request needs it.
  if (ctx.req.headers['idempotency-key'] === undefined) return handler(db);
  const sent = ctx.req.headersDistinct['idempotency-key']!;
  if (sent.length > 1) throw badRequest(MESSAGES.keyTwice);
  const key = sent[0]!;
  if (!KEY.test(key)) throw badRequest(MESSAGES.keyForm);
  // requireConsumer (the route's `consumer: 'required'`) runs first: a keyed create always has a consumer.
  const consumerId = ctx.state.consumer!.id;
  const hash = requestHash(ctx);

  const existing = await findKey(db, consumerId, key);
  if (existing?.live) return answerFromRecord(ctx, existing, hash);
  if (existing) await forgetExpiredKey(db, consumerId, key);

  let claim: KeyClaim;
  try {
    claim = await claimKey(db, consumerId, key, hash);
  } catch (error) {
    const code = errorCode(error);
    if (STILL_RUNNING.has(code)) throw inProgress();
    if (code !== 'ER_DUP_ENTRY') throw error;
    // Another request with this key committed while this one waited: answer as it did.
    const winner = await findKey(db, consumerId, key);
    if (!winner?.live) throw inProgress();
    return answerFromRecord(ctx, winner, hash);
  }
  try {
    // The handler returns only with its 201: every refusal or failure throws, and rolls back below.
    await handler(claim.tx);
  } catch (error) {
    await claim.rollback();
    throw error;
  }
  const body = JSON.stringify(ctx.body);
  await claim.commit({ status: ctx.status, location: ctx.response.get('Location') || null, body });
  // The exact text recorded is the text sent, so a replay is byte for byte the same.
  ctx.type = 'json';
  ctx.body = body;
  // Housekeeping after the answer, not before it: a failure here only postpones the cleanup.
  void deleteExpiredKeys(db).catch(() => undefined);
}

/** Text written as is while serialising (brackets, commas, "key":). */
class Literal {
  constructor(readonly text: string) {}
}

/**
 * JSON.stringify with object keys sorted at every level, so two bodies that differ only in key
 * order or whitespace give the same text. Iterative with an explicit stack: JSON.parse accepts
 * arrays nested 50,000 deep within 100 KB, and a recursive walk (JSON.stringify too) overflows
 * the call stack on them.
 */
export function canonicalJson(root: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item instanceof Literal) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      stack.push(new Literal(']'));
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i], new Literal(i === 0 ? '' : ','));
      stack.push(new Literal('['));
    } else if (item !== null && typeof item === 'object') {
      // Keys are unique, so the default sort (by UTF-16 code units) orders them completely.
      const keys = Object.keys(item).sort();
      stack.push(new Literal('}'));
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        stack.push((item as Record<string, unknown>)[key], new Literal(`${i === 0 ? '' : ','}${JSON.stringify(key)}:`));
      }
      stack.push(new Literal('{'));
    } else {
      out.push(JSON.stringify(item));
    }
  }
  return out.join('');
}
