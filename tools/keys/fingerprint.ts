/** How a key is named in output: a short hash, enough to tell two keys apart, useless to get in with. */
import { createHash } from 'node:crypto';

export function fingerprint(key: string): string {
  return `sha256:${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}
