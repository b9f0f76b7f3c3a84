import { randomBytes } from 'node:crypto';

/** Gives this run an id that every jest worker inherits (test/helpers/database.ts). */
export default function globalSetup(): void {
  process.env.TEST_RUN_ID ??= randomBytes(4).toString('hex');
}
