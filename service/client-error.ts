import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

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
  HPE_INVALID_TRANSFER_ENCODING: 'Malformed HTTP request: invalid Transfer-Encoding, or Transfer-Encoding with Content-Length',
  HPE_INVALID_CHUNK_SIZE: 'Malformed HTTP request: invalid chunk size',
  HPE_INVALID_VERSION: 'Malformed HTTP request: invalid HTTP version',
};

// The response Node is writing on this connection (its internal field; there is no public one).
type ClientErrorSocket = Duplex & { _httpMessage?: NodeJS.EventEmitter | null };

/** The full HTTP/1.1 response for a request Node's parser refused. */
export function clientErrorResponse(code: string | undefined): string {
  const status = (code && STATUS_BY_CODE[code]) || 400;
  const body = JSON.stringify({ error: (code && MESSAGE_BY_CODE[code]) || 'Malformed HTTP request' });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/**
 * server.on('clientError', ...): answers what Node's HTTP parser refuses (bad header bytes,
 * folded headers, a repeated Content-Length, Content-Length with Transfer-Encoding, unknown
 * methods, headers over 16 KB) with the JSON error shape instead of Node's empty answer.
 *
 * Node writes its answer at once unless a response has started, and destroys the socket. Here a
 * response still being produced for an earlier request on the connection (keep-alive,
 * pipelining) is let finish first, so the client never reads the 400 as the answer to a request
 * that succeeded; then the socket is ended and closed after `lingerMs` (CLIENT_ERROR_LINGER_MS):
 * a client still sending (a 20 KB header) would otherwise get a reset that can swallow the answer.
 */
export function clientErrorHandler(lingerMs: number) {
  const answered = new WeakSet<Duplex>();
  return (error: Error & { code?: string }, socket: ClientErrorSocket): void => {
    // The parser stays failed and reports again for every later chunk: one answer is enough.
    // Stryker disable next-line ConditionalExpression: a second end() on an ended socket sends nothing more
    if (answered.has(socket)) return;
    answered.add(socket);
    const answer = () => {
      // A socket error (ECONNRESET) arrives with the socket already destroyed, and a response in
      // flight may finish after the client left: nothing can be written then.
      // Stryker disable next-line ConditionalExpression,BlockStatement: end() on a socket that cannot write sends nothing either; this only frees it at once
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(clientErrorResponse(error.code));
      const linger = setTimeout(() => socket.destroy(), lingerMs).unref();
      // Stryker disable next-line StringLiteral,ArrowFunction: tidiness only; the unref'd timer destroying a closed socket does nothing
      socket.once('close', () => clearTimeout(linger));
    };
    const inFlight = socket._httpMessage;
    if (!inFlight) answer();
    else {
      inFlight.once('finish', answer);
      // Closed without finishing: the connection went with it; nothing more can be said on it.
      // Stryker disable next-line StringLiteral,ArrowFunction,ConditionalExpression,LogicalOperator: a response closes unfinished only when its socket closed, so destroying it again changes nothing
      inFlight.once('close', () => socket.writableEnded || socket.destroy());
    }
  };
}
