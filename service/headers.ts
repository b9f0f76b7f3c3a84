/**
 * The response headers of the API, declared once: the code that sends a group types its values as
 * `HeaderValues<group>` (a name missing or added is a compile error), and the OpenAPI document
 * declares the same names on the answers that carry them.
 */

export interface HeaderDeclaration {
  description: string;
  /** Only some of the answers declaring it carry it (the document then marks it optional there). */
  sometimes?: true;
  schema: {
    type: 'string' | 'integer';
    format?: 'int32';
    pattern?: string;
    maxLength?: number;
    minimum?: number;
    maximum?: number;
  };
}

/** The values a sender gives a group: every declared name, and no other. */
export type HeaderValues<G extends Record<string, HeaderDeclaration>> = Record<keyof G, string>;

const text = (description: string, maxLength = 1000): HeaderDeclaration => ({
  description,
  schema: { type: 'string', maxLength },
});
const count = (description: string): HeaderDeclaration => ({
  description,
  schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 },
});

/** conditional.ts, on a conditional route's 200 and 304. */
export const CONDITIONAL_HEADERS = {
  ETag: {
    description: 'SHA-256 of the exact body; send it back in If-None-Match',
    schema: { type: 'string', pattern: '^(W/)?"[A-Za-z0-9_-]{43}"$' },
  },
  'Cache-Control': {
    description: 'private, no-cache: keep it, but ask again (If-None-Match) before using it',
    schema: { type: 'string', pattern: '^private, no-cache$' },
  },
} satisfies Record<string, HeaderDeclaration>;

/** The gateway, on every answer (kong.conf headers, nginx-proxy-jobs.conf): quote them when reporting a problem. */
export const GATEWAY_HEADERS = {
  'X-Kong-Request-Id': text("The gateway's id of this request", 64),
  'X-Request-ID': text("The correlation id: the X-Request-ID you sent, else the gateway's id", 1000),
} satisfies Record<string, HeaderDeclaration>;

/** The gateway's job-rate-limits plugin, on every answer to a key that passed the key and scope checks. */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': count('The limit of the window with the fewest requests left'),
  'RateLimit-Remaining': count('Requests left in that window'),
  'RateLimit-Reset': count('Seconds until that window resets'),
  'RateLimit-Policy': text('Every window of the key\'s plan: `"minute";q=<limit>;w=<seconds>`, comma-separated'),
  RateLimit: text('Where the key stands in every window: `"minute";r=<left>;t=<seconds to reset>`, comma-separated'),
} satisfies Record<string, HeaderDeclaration>;

/** The gateway's key check, on a 401. */
export const CHALLENGE_HEADERS = {
  'WWW-Authenticate': {
    description: 'The scheme to authenticate with: the key (X-API-Key)',
    // The gateway's key check; the service's 401 for a request that bypassed the gateway has none.
    sometimes: true,
    schema: { type: 'string', pattern: '^Key realm="kong"$' },
  },
} satisfies Record<string, HeaderDeclaration>;

/** A page of a listing that another page follows: list-jobs.ts. */
export const NEXT_PAGE_HEADERS = {
  Link: {
    description: '`<relative URL of the next page>; rel="next"` while another page follows',
    sometimes: true,
    schema: { type: 'string', pattern: '^<[^>]+>; rel="next"$', maxLength: 2000 },
  },
} satisfies Record<string, HeaderDeclaration>;

/** A 201: where what was created is read (create-job.ts, create-webhook.ts). */
export const CREATED_HEADERS = {
  Location: {
    description: 'The path of what was created',
    schema: { type: 'string', pattern: '^/api/v1/', maxLength: 200 },
  },
} satisfies Record<string, HeaderDeclaration>;

/** A create answered again from its Idempotency-Key's record: create-job.ts. */
export const REPLAYED_HEADERS = {
  'Idempotent-Replayed': {
    description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key',
    sometimes: true,
    schema: { type: 'string', pattern: '^true$' },
  },
} satisfies Record<string, HeaderDeclaration>;

/** A 415 about the body's Content-Encoding: the codings accepted (RFC 9110 12.5.3). */
export const ENCODING_HEADERS = {
  'Accept-Encoding': {
    description: 'The body encodings accepted besides none: gzip',
    // A 415 about the Content-Type has none.
    sometimes: true,
    schema: { type: 'string', pattern: '^gzip$' },
  },
} satisfies Record<string, HeaderDeclaration>;

/** An answer that can succeed later: the gateway's 429s, the service's 503 and a key still in flight. */
export const RETRY_HEADERS = {
  'Retry-After': count('Seconds to wait before retrying'),
} satisfies Record<string, HeaderDeclaration>;
