/**
 * Requests Node's HTTP parser cannot read (the server's clientError event), mapped to what nginx
 * answers for the same bytes (ngx_http_parse.c, ngx_http_request.c), through Kong's error handler:
 * - a request line over 8 KiB: 414; headers over the buffers: 494 (Kong answers 400 "Request
 *   header or cookie too large");
 * - Transfer-Encoding other than exactly "chunked": 501; Content-Length with Transfer-Encoding,
 *   Transfer-Encoding twice, duplicate or invalid Content-Length, a bad chunk, a NUL byte: 400;
 * - a client that times out or goes away: the connection is closed without an answer.
 * Node refuses a few requests nginx would accept (header lines with invalid name characters or
 * obs-fold continuations, which nginx ignores; control bytes in values; bare LF line ends;
 * methods outside Node's list): those get nginx's 400 for a malformed request rather than an
 * empty answer (see gateway/local/README.md, known differences).
 */

import { HEADER_LINE_LIMIT } from './limits';

export interface ParserError extends Error {
  code?: string;
  reason?: string;
  rawPacket?: Buffer;
}

/** The status to answer with, or null to close the connection silently. */
export function clientErrorStatus(err: ParserError): number | null {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return null;
    case 'HPE_HEADER_OVERFLOW': {
      const raw = err.rawPacket?.toString('latin1') ?? '';
      const lineEnd = raw.indexOf('\n');
      return lineEnd === -1 || lineEnd + 1 > HEADER_LINE_LIMIT ? 414 : 494;
    }
    case 'HPE_INVALID_TRANSFER_ENCODING': {
      // nginx refuses a second Transfer-Encoding line as a duplicate header (400), like one with Content-Length
      const lines = (err.rawPacket?.toString('latin1') ?? '').match(/^transfer-encoding[ \t]*:/gim) ?? [];
      return /content-length/i.test(err.reason ?? '') || lines.length > 1 ? 400 : 501;
    }
    default:
      return err.code?.startsWith('HPE_') ? 400 : null;
  }
}
