import type { ENCODING_HEADERS, HeaderValues, RETRY_HEADERS } from './headers';

/** Seconds a client is asked to wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = '5';

/** A failure the client caused or may retry; the error middleware turns it into JSON. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface FieldProblem {
  field: string;
  message: string;
}

/** Every fixed sentence the service answers a client with, defined once: the code, the OpenAPI examples and the tests use these. */
export const MESSAGES = {
  notFound: 'Not found',
  jobNotFound: 'Job not found',
  methodNotAllowed: 'Method not allowed',
  unavailable: 'Service temporarily unavailable. Retry in a few seconds.',
  saturated: 'Service cannot take more work right now',
  leftWhileWaiting: 'Client closed the request while it waited',
  leftBeforeServed: 'Client closed the request before it was served',
  internal: 'Internal server error',
  notThroughGateway: 'Requests must come through the API gateway',
  noConsumer: 'Missing consumer identity: requests must come through the API gateway',
  hostTwice: 'Malformed HTTP request: Host sent more than once',
  bodyTooLarge: 'Request body too large: the limit is 100 KB',
  bodyTooSlow: 'Request body not received in time',
  bodyIncomplete: 'Request body was incomplete',
  notJson: 'Content-Type must be application/json',
  notUtf8Charset: 'Unsupported charset: JSON bodies must be UTF-8',
  notGzip: 'Request body is not valid gzip data, although Content-Encoding says gzip',
  notUtf8: 'Request body is not valid UTF-8',
  emptyBody: 'Request body is empty: send a JSON object',
  malformedJson: 'Malformed JSON body',
  notAnObject: 'Request body must be a JSON object',
  validationFailed: 'Validation failed',
  keyInProgress: 'A request with this Idempotency-Key is still being processed; retry in a moment',
  keyReused:
    'This Idempotency-Key was already used with a different request body: resend the original body to get its response, or use a new key for a new job',
  keyTwice: 'Send one Idempotency-Key header, not several',
  keyForm: 'Idempotency-Key must be 1 to 255 visible ASCII characters, without spaces (a UUID is a good choice)',
  cursorInvalid: "cursor is not valid: pass meta.nextCursor (or the Link header's URL) back exactly as it was given",
  cursorOtherFilter:
    "cursor belongs to another filter: send the same filters as the request that returned it (the Link header's URL has them), or start again without cursor",
  sinceInvalid:
    'since is not valid: pass meta.nextSince back exactly as it was given, or leave since out to read the feed from the beginning',
  sinceRewritten:
    'since belongs to a history of the feed that a restore from a backup rewrote: empty your mirror and read the feed again from the beginning, without since',
  sinceAhead:
    'since is ahead of this feed (the data was restored from a backup?): read the feed again from the beginning, without since',
  webhookNotFound: 'Webhook not found',
  positionInvalid:
    "position is not valid: pass meta.nextSince of GET /api/v1/jobs/changes, or an event's position, exactly as it was given",
  positionRewritten:
    'position belongs to a history of the feed that a restore from a backup rewrote: read the feed again and use its nextSince',
  positionAhead:
    'position is ahead of this feed (the data was restored from a backup?): read the feed again and use its nextSince',
  webhooksUnavailable: 'Webhooks are not available on this server right now',
  nothingToChange: 'Send at least one of url, description, eventTypes',
  testDisabled: 'status is disabled: enable the subscription (POST /api/v1/webhooks/{id}/enable) before testing it',
  secretUnopenable:
    "The server cannot open this subscription's signing secret right now, so nothing was sent: deliveries wait, none is lost, until its key is restored",
} as const;

const CLOSE = { Connection: 'close' };
/** A client's text, cut to `length` characters before it is echoed in an answer. */
export const clip = (text: string, length: number) => (text.length > length ? `${text.slice(0, length)}…` : text);

export const badRequest = (message: string) => new HttpError(400, message);
export const validationFailed = (details: FieldProblem[]) => new HttpError(400, MESSAGES.validationFailed, { details });
export const notFound = (message: string = MESSAGES.notFound) => new HttpError(404, message);
export const jobNotFound = () => notFound(MESSAGES.jobNotFound);
/** A method the path does not serve; Allow names the ones it does. */
export const methodNotAllowed = (allow: readonly string[]) =>
  new HttpError(405, MESSAGES.methodNotAllowed, {}, { Allow: allow.join(', ') });
/** The database or the service cannot serve now: retrying after Retry-After can succeed. */
const retryAfter: HeaderValues<typeof RETRY_HEADERS> = { 'Retry-After': RETRY_AFTER_SECONDS };
export const unavailable = (message: string = MESSAGES.unavailable) => new HttpError(503, message, {}, retryAfter);
export const notThroughGateway = () => new HttpError(401, MESSAGES.notThroughGateway);
export const noConsumer = () => new HttpError(401, MESSAGES.noConsumer);
export const tooManyHeaders = (limit: number) => new HttpError(431, `Too many request headers: send at most ${limit}`);

// Query strings.
export const unknownParameter = (name: string, allowed: readonly string[]) =>
  badRequest(`Unknown query parameter "${clip(name, 40)}". Allowed: ${allowed.join(', ')}`);
export const repeatedParameter = (name: string, lists: readonly string[]) =>
  badRequest(
    `Query parameter "${name}" was given more than once; send one value${lists.length > 0 ? ` (only ${lists.join(', ')} take several)` : ''}`,
  );

// Bodies. Refusals while a body is still arriving close the connection: what is left of it is never read.
export const hostTwice = () => new HttpError(400, MESSAGES.hostTwice, {}, CLOSE);
export const bodyTooLarge = () => new HttpError(413, MESSAGES.bodyTooLarge, {}, CLOSE);
export const bodyTooSlow = () => new HttpError(408, MESSAGES.bodyTooSlow, {}, CLOSE);
export const bodyIncomplete = () => new HttpError(400, MESSAGES.bodyIncomplete, {}, CLOSE);
export const unsupportedTransferEncoding = (value: string) =>
  new HttpError(
    501,
    `Unsupported Transfer-Encoding "${value.slice(0, 40)}": send the body with Content-Length, or chunked alone`,
    {},
    CLOSE,
  );
// RFC 9110 §12.5.3: a 415 about content coding names the codings that would be accepted.
const ACCEPTED_ENCODINGS: HeaderValues<typeof ENCODING_HEADERS> = { 'Accept-Encoding': 'gzip' };
export const unsupportedEncoding = (encoding: string) =>
  new HttpError(
    415,
    `Unsupported Content-Encoding "${encoding.slice(0, 40)}": send the body uncompressed or gzip-compressed`,
    {},
    { ...ACCEPTED_ENCODINGS, ...CLOSE },
  );
export const notJson = () => new HttpError(415, MESSAGES.notJson);
export const duplicateField = (field: string) => {
  const name = clip(field, 64);
  return validationFailed([{ field: name, message: `${name} appears more than once; send each field once` }]);
};

// Idempotent creates.
export const keyInProgress = () =>
  new HttpError(409, MESSAGES.keyInProgress, {}, { 'Retry-After': '1' } satisfies HeaderValues<typeof RETRY_HEADERS>);
export const keyReused = () => new HttpError(422, MESSAGES.keyReused);

// Webhook subscriptions.
export const webhookNotFound = () => notFound(MESSAGES.webhookNotFound);
/** The limit is a setting (WEBHOOK_SUBSCRIPTION_LIMIT): the message states the one in force. */
export const webhookLimitMessage = (limit: number) =>
  `A key may hold at most ${limit} webhook subscriptions: delete one first`;
export const webhookLimit = (limit: number) => new HttpError(409, webhookLimitMessage(limit));
/** A rotation that would drop a replaced secret still signing: the message says when rotating is possible again. */
export const rotationRefusedMessage = (until: string) =>
  `Two replaced secrets still sign until ${until}: rotate again after then, or send {"expirePrevious": true} to end every replaced secret now`;
export const rotationRefused = (until: string) => new HttpError(409, rotationRefusedMessage(until));
/** The server has no WEBHOOK_SECRETS_KEY: it cannot seal a secret, so it stores nothing. */
// A missing key waits on an operator, not on load: a minute, not RETRY_AFTER_SECONDS.
const retryInAMinute: HeaderValues<typeof RETRY_HEADERS> = { 'Retry-After': '60' };
export const webhooksUnavailable = () => new HttpError(503, MESSAGES.webhooksUnavailable, {}, retryInAMinute);
/** No key of the server's keyring opens the subscription's secret (a sealing key rotation gone wrong): the operator's to mend. */
export const secretUnopenable = () => new HttpError(503, MESSAGES.secretUnopenable, {}, retryInAMinute);
