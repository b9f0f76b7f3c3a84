import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { MESSAGES } from './errors';

// Node's own answers (lib/_http_server.js, socketOnError) with the same statuses, as JSON.
const STATUS_BY_CODE: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

// What llhttp found, in words a client can act on; any other parser error is "Malformed HTTP request".
const MESSAGE_BY_CODE: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'Request headers too large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'Chunk extensions too large',
  ERR_HTTP_REQUEST_TIMEOUT: 'Request not received in time',
  HPE_INVALID_METHOD: 'Malformed HTTP request: unknown method',
  HPE_INVALID_HEADER_TOKEN: 'Malformed HTTP request: invalid character or folded line in a header',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Malformed HTTP request: Content-Length sent more than once',
  HPE_INVALID_CONTENT_LENGTH: 'Malformed HTTP request: invalid Content-Length',
  HPE_INVALID_TRANSFER_ENCODING:
    'Malformed HTTP request: invalid Transfer-Encoding, or Transfer-Encoding with Content-Length',
  HPE_INVALID_CHUNK_SIZE: 'Malformed HTTP request: invalid chunk size',
  HPE_INVALID_VERSION: 'Malformed HTTP request: invalid HTTP version',
};

// The response Node is writing on this connection (its internal field; there is no public one).
type ClientErrorSocket = Duplex & { _httpMessage?: NodeJS.EventEmitter | null };
export type ParserError = Error & { code?: string };

/** The status Node's parser error `code` is answered with. */
export const clientErrorStatus = (code: string | undefined): number => (code && STATUS_BY_CODE[code]) || 400;
/** The message Node's parser error `code` is answered with. */
export const clientErrorMessage = (code: string | undefined): string =>
  (code && MESSAGE_BY_CODE[code]) || 'Malformed HTTP request';

/** A whole HTTP/1.1 JSON error response that closes the connection, for answers written on the socket itself. */
export function rawErrorResponse(status: number, message: string): string {
  const body = JSON.stringify({ error: message });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** The full HTTP/1.1 response for a request Node's parser refused. */
export function clientErrorResponse(code: string | undefined): string {
  return rawErrorResponse(clientErrorStatus(code), clientErrorMessage(code));
}

// Parser failures by connection, kept for a body reader that starts listening after the failure.
const failures = new WeakMap<Duplex, ParserError>();
const PARSER_FAILED = Symbol('parser failed');

/** Calls `listener` once if the parser fails on `socket` (a broken chunk, a request time-out), at once when it already has. */
export function onParserFailure(socket: Duplex, listener: (error: ParserError) => void): () => void {
  const earlier = failures.get(socket);
  if (earlier) {
    listener(earlier);
    return () => undefined;
  }
  socket.once(PARSER_FAILED, listener);
  return () => socket.off(PARSER_FAILED, listener);
}

/** Ends `socket` with `response`, and destroys it after `lingerMs` if the client keeps its side open. */
function endWith(socket: Duplex, response: string, lingerMs: number): void {
  socket.end(response);
  const linger = setTimeout(() => socket.destroy(), lingerMs).unref();
  socket.once('close', () => clearTimeout(linger));
}

/** server.on('clientError', ...): answers what Node's HTTP parser refuses. */
export function clientErrorHandler(lingerMs: number, onAnswer: (status: number) => void = () => undefined) {
  return (error: ParserError, socket: ClientErrorSocket): void => {
    // The parser stays failed and reports again for every later chunk: one answer is enough.
    if (failures.has(socket)) return;
    failures.set(socket, error);
    socket.emit(PARSER_FAILED, error);
    const answer = () => {
      // The response in flight closed the connection itself (a body reader's answer): Node ends it.
      if (socket.writableEnded) return;
      // A socket error (ECONNRESET) arrives with the socket already destroyed, and a response in flight may finish after the client left.
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      onAnswer(clientErrorStatus(error.code));
      endWith(socket, clientErrorResponse(error.code), lingerMs);
    };
    const inFlight = socket._httpMessage;
    if (!inFlight) answer();
    else {
      inFlight.once('finish', answer);
      // Closed without finishing: the connection went with it; nothing more can be said on it.
      inFlight.once('close', () => socket.writableEnded || socket.destroy());
    }
  };
}

/** server.on('connect', ...): a CONNECT is a 405 in JSON, as nginx answers it, instead of Node closing the connection without a word. */
export function connectHandler(lingerMs: number, onAnswer: (status: number) => void = () => undefined) {
  return (_request: IncomingMessage, socket: Duplex): void => {
    socket.on('error', () => undefined);
    onAnswer(405);
    endWith(socket, rawErrorResponse(405, MESSAGES.methodNotAllowed), lingerMs);
  };
}
