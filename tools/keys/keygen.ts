/** New partner keys and ids, from the operating system's CSPRNG. */
import { randomBytes, randomUUID } from 'node:crypto';

/** Recognisable in logs, tickets and secret scanners; never part of the entropy. */
export const KEY_PREFIX = 'jl_live_';
/** 32 bytes = 256 bits of entropy, base64url (RFC 4648 section 5: URL- and header-safe, no padding). */
export const KEY_BYTES = 32;

export function newKey(): string {
  return KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');
}

/** Consumer and credential ids: UUID v4, fixed once written (X-Consumer-ID keys draft ownership). */
export function newId(): string {
  return randomUUID();
}
