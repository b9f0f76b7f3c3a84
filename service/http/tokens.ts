import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { FIRST_HISTORY, type FeedPosition } from '../../domain/feed';
import { formatUuid, uuidToBuffer } from '../../domain/uuid';
import { badRequest, MESSAGES } from '../errors';

/** Opaque tokens the API hands out and takes back: list cursors and change-feed positions. */
const MAC_BYTES = 16;
const CURSOR = 1;
// A position without its history, as handed out before positions named one: read as FIRST_HISTORY's.
const SINCE_NUMBER = 2;
const SINCE = 3;

function seal(key: Buffer, kind: number, payload: Buffer): string {
  const body = Buffer.concat([Buffer.of(kind), payload]);
  const mac = createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);
  return Buffer.concat([body, mac]).toString('base64url');
}

/** The payload of a token of `kind`, or undefined when it is not one this API signed. */
function unseal(key: Buffer, kind: number, token: string, payloadBytes: number): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length !== 1 + payloadBytes + MAC_BYTES || bytes[0] !== kind) return undefined;
  const body = bytes.subarray(0, 1 + payloadBytes);
  const expected = createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);
  return timingSafeEqual(expected, bytes.subarray(1 + payloadBytes)) ? body.subarray(1) : undefined;
}

/** Where a cursor walk resumes: after this job in listing order, showing page `page` next. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
  page: number;
}

// filter digest (8) | createdAt ms (8) | id (16) | page (8)
const CURSOR_PAYLOAD = 40;

/** A short digest of the canonical filter a cursor belongs to (list-jobs.ts builds it). */
export function filterDigest(canonicalFilter: string): Buffer {
  return createHash('sha256').update(canonicalFilter).digest().subarray(0, 8);
}

export function encodeCursor(key: Buffer, filter: Buffer, position: CursorPosition): string {
  const payload = Buffer.alloc(CURSOR_PAYLOAD);
  filter.copy(payload, 0, 0, 8);
  payload.writeBigInt64BE(BigInt(position.createdAt.getTime()), 8);
  uuidToBuffer(position.id).copy(payload, 16);
  payload.writeBigUInt64BE(BigInt(position.page), 32);
  return seal(key, CURSOR, payload);
}

export function decodeCursor(key: Buffer, filter: Buffer, cursor: string): CursorPosition {
  const payload = unseal(key, CURSOR, cursor, CURSOR_PAYLOAD);
  if (!payload) {
    throw badRequest(MESSAGES.cursorInvalid);
  }
  if (!payload.subarray(0, 8).equals(filter)) {
    throw badRequest(MESSAGES.cursorOtherFilter);
  }
  return {
    createdAt: new Date(Number(payload.readBigInt64BE(8))),
    id: formatUuid(payload.subarray(16, 32)),
    page: Number(payload.readBigUInt64BE(32)),
  };
}

// history (8) | seq (8)
const SINCE_PAYLOAD = 16;

/** A change-feed position as partners hold it: opaque, signed, naming its history (domain/feed.ts). */
export function encodeSince(key: Buffer, position: FeedPosition): string {
  const payload = Buffer.alloc(SINCE_PAYLOAD);
  payload.write(position.history, 0, 8, 'hex');
  payload.writeBigUInt64BE(BigInt(position.seq), 8);
  return seal(key, SINCE, payload);
}

export function decodeSince(key: Buffer, since: string): FeedPosition {
  const payload = unseal(key, SINCE, since, SINCE_PAYLOAD);
  if (payload) return { history: payload.toString('hex', 0, 8), seq: Number(payload.readBigUInt64BE(8)) };
  const number = unseal(key, SINCE_NUMBER, since, 8);
  if (number) return { history: FIRST_HISTORY, seq: Number(number.readBigUInt64BE()) };
  throw badRequest(MESSAGES.sinceInvalid);
}
