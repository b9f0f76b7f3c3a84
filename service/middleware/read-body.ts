import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import getRawBody from 'raw-body';
import { clientErrorMessage, clientErrorStatus, onParserFailure, type ParserError } from '../client-error';
import { bodyIncomplete, bodyTooLarge, bodyTooSlow, HttpError, unsupportedTransferEncoding } from '../errors';

// The body is read whole before the request takes a database turn (admission.ts), so only a ready request holds one.

declare module 'koa' {
  interface Request {
    /** The body's bytes as sent, read by readBodyFirst() before the request takes a turn. */
    rawBody?: Buffer;
  }
}

/** The most a body may hold, on the wire and again after decompression. */
export const BODY_LIMIT_BYTES = 100 * 1024;

// Every refusal here closes the connection: the parser cannot find the next request's start in what is left of the body.
const malformed = (error: ParserError) =>
  new HttpError(clientErrorStatus(error.code), clientErrorMessage(error.code), {}, { Connection: 'close' });

/** Whether the request says a body follows (RFC 9112 §6.3): Transfer-Encoding, or a Content-Length above 0. */
export function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}

/** Refuses a Transfer-Encoding other than plain `chunked` with a 501, as nginx does. */
function checkTransferEncoding(req: IncomingMessage): void {
  const value = req.headers['transfer-encoding'];
  if (value === undefined) return;
  const codings = value
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter(Boolean);
  if (codings.length !== 1 || codings[0] !== 'chunked') throw unsupportedTransferEncoding(value);
}

function fromRawBody(error: unknown): never {
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large') throw bodyTooLarge();
  if (type === 'request.aborted' || type === 'request.size.invalid') throw bodyIncomplete();
  throw error;
}

/** The whole body, at most BODY_LIMIT_BYTES, within `timeoutMs` (else a 408). */
export async function readBody(req: IncomingMessage, timeoutMs: number): Promise<Buffer> {
  checkTransferEncoding(req);
  let timer: NodeJS.Timeout | undefined;
  let stopListening = () => {};
  const interrupted = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(bodyTooSlow()), timeoutMs);
    stopListening = onParserFailure(req.socket, (error) => reject(malformed(error)));
  });
  // A Content-Length over the limit is refused before a byte is read.
  const reading = getRawBody(req, { limit: BODY_LIMIT_BYTES, length: req.headers['content-length'] }).catch(
    fromRawBody,
  );
  // Interrupted reads settle when the connection closes; nobody waits for them then.
  reading.catch(() => undefined);
  try {
    return await Promise.race([reading, interrupted]);
  } finally {
    clearTimeout(timer);
    stopListening();
  }
}

/** Reads a declared body before anything downstream runs, so the admission turn after it is only ever held by a request ready to run. */
export function readBodyFirst(timeoutMs: number): Middleware {
  return (ctx, next) => {
    if (!declaresBody(ctx.req)) return next();
    return readBody(ctx.req, timeoutMs).then((bytes) => {
      ctx.request.rawBody = bytes;
      return next();
    });
  };
}
