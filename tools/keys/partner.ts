/** What a partner is to Kong: a consumer with a name, fixed ids, access groups and credentials. */
import { z } from 'zod';

/** Select tag of partners.yaml: consumers and their ACL groups. */
export const PARTNER_TAG = 'jobs-partners';
/** Select tag of partner-keys.yaml: the credentials (and nothing else). */
export const KEYS_TAG = 'jobs-partner-keys';
/** A partner consumer carries both tags, so the sync of either file sees it. */
export const CONSUMER_TAGS = [PARTNER_TAG, KEYS_TAG] as const;

export const GROUP_READ = 'jobs:read';
export const GROUP_WRITE = 'jobs:write';
export const GROUP_DISABLED = 'disabled';
export const KNOWN_GROUPS = [GROUP_READ, GROUP_WRITE, GROUP_DISABLED] as const;

export const Scope = z.enum(['read', 'write']);
export type Scope = z.infer<typeof Scope>;

/** The ACL groups that make up a scope (job-scopes checks jobs:read / jobs:write per route). */
export function scopeGroups(scope: Scope): string[] {
  return scope === 'write' ? [GROUP_READ, GROUP_WRITE] : [GROUP_READ];
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Kong's rules for a username (Kong/kong 3.9.1 kong/db/schema/entities/consumers.lua: a string, unique; kong/db/schema/init.lua refuses empty strings) plus the Admin API's: a UUID-shaped value in /consumers/{username or id} is read as an id (kong/api/endpoints.lua, query_entity), so such a name could not be addressed. */
export const PartnerName = z
  .string()
  .regex(
    /^[a-z](?:[a-z0-9]|-(?=[a-z0-9])){1,63}$/,
    'must be 2-64 lower-case letters, digits or single hyphens, starting with a letter (e.g. acme-jobs)',
  )
  .refine((name) => !UUID_SHAPE.test(name), "must not look like a UUID (Kong's Admin API would read it as an id)")
  .refine((name) => name !== 'anonymous', '"anonymous" is kong.yaml\'s keyless consumer')
  .refine((name) => !name.startsWith('demo-'), 'names starting with "demo-" are reserved for demo.yaml');
export type PartnerName = z.infer<typeof PartnerName>;

/** Kong's custom_id is any non-empty unique string; it is forwarded as X-Consumer-Custom-ID, so no controls or spaces. */
export const CustomId = z
  .string()
  .regex(/^[\x21-\x7e]{1,128}$/, 'must be 1-128 printable ASCII characters without spaces');

/** The decK variable that holds one credential's key: DECK_PARTNER_<NAME>_KEY_<first 8 hex of the credential id>. */
export function keyVariable(partner: string, credentialId: string): string {
  return `DECK_PARTNER_${partner.replace(/-/g, '_').toUpperCase()}_KEY_${credentialId.slice(0, 8).toUpperCase()}`;
}

/** decK's template reference to a variable, the only form a key takes in a file. */
export function envReference(variable: string): string {
  return `\${{ env "${variable}" }}`;
}

export function parseEnvReference(value: string): string | null {
  const m = /^\$\{\{ env "(DECK_[A-Z0-9_]+)" \}\}$/.exec(value);
  return m ? (m[1] ?? null) : null;
}
