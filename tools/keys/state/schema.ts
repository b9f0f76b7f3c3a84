/** The shape the keys tool accepts for partners.yaml and partner-keys.yaml. */
import { z } from 'zod';
import {
  CONSUMER_TAGS,
  CustomId,
  KEYS_TAG,
  KNOWN_GROUPS,
  PARTNER_TAG,
  PartnerName,
  parseEnvReference,
} from '../partner';

const FormatVersion = z.literal('3.0', { error: 'must be "3.0"' });

function selectTags(tag: string) {
  return z.strictObject({
    select_tags: z
      .array(z.string())
      .refine(
        (t) => t.length === 1 && t[0] === tag,
        `must be [${tag}]: a sync of this file must touch only its own entities`,
      ),
  });
}

const ConsumerTags = z
  .array(z.string())
  .refine(
    (t) => t.length === CONSUMER_TAGS.length && t.every((tag, i) => tag === CONSUMER_TAGS[i]),
    `must be [${CONSUMER_TAGS.join(', ')}] (both files' syncs must see the consumer)`,
  );

const ConsumerIdentity = {
  username: PartnerName,
  id: z.uuid({ error: 'must be a UUID' }),
  custom_id: CustomId.optional(),
  tags: ConsumerTags,
};

export const Acl = z.strictObject({
  group: z.enum(KNOWN_GROUPS, { error: `must be one of ${KNOWN_GROUPS.join(', ')}` }),
});

export const PartnerConsumer = z.strictObject({
  ...ConsumerIdentity,
  acls: z
    .array(Acl)
    .refine((acls) => acls.some((a) => a.group === 'jobs:read'), 'must include jobs:read (every partner can read)'),
});
export type PartnerConsumer = z.infer<typeof PartnerConsumer>;

export const PartnersState = z.strictObject({
  _format_version: FormatVersion,
  _info: selectTags(PARTNER_TAG),
  consumers: z.array(PartnerConsumer).nullable(),
});

/** A key is only ever a decK environment reference; a literal key in the file is refused. */
export const CredentialRef = z.strictObject({
  id: z.uuid({ error: 'must be a UUID' }),
  key: z
    .string()
    .refine(
      (k) => parseEnvReference(k) !== null,
      'must be a decK environment reference (${{ env "DECK_..." }}), never a literal key',
    ),
});
export type CredentialRef = z.infer<typeof CredentialRef>;

export const KeysConsumer = z.strictObject({
  ...ConsumerIdentity,
  // `keyauth_credentials:` left empty by a hand edit reads as no credential.
  keyauth_credentials: z.array(CredentialRef).nullable().optional(),
});
export type KeysConsumer = z.infer<typeof KeysConsumer>;

export const KeysState = z.strictObject({
  _format_version: FormatVersion,
  _info: selectTags(KEYS_TAG),
  consumers: z.array(KeysConsumer).nullable(),
});
