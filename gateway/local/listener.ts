/**
 * The proxy listener: Node's HTTP server set up to behave like nginx's for Kong.
 * - headers up to nginx's 4 x 8 KiB buffers are parsed, so the 8 KiB per-line rule can be applied
 *   as nginx applies it (nginx/request-checks.ts); no Host check of Node's own (nginx's runs);
 * - `Expect: 100-continue` is not answered at once: nginx sends "100 Continue" only when the body
 *   is read, and ignores other expectations;
 * - CONNECT, which Node hands over as a tunnel, goes through the same path (nginx refuses it: 405);
 * - requests Node's parser refuses get nginx's answer (nginx/client-error.ts) instead of Node's
 *   empty 400, through Kong's error handler and header filter, then the connection is closed;
 * - idle keep-alive connections are closed after nginx's default keepalive_timeout (75 s).
 */
import http, { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { headerFilter } from './header-filter';
import { clientErrorStatus, type ParserError } from './nginx/client-error';
import { HEADER_TOTAL_LIMIT } from './nginx/limits';
import { specialResponse } from './nginx/special-response';
import { headerMap, RequestContext } from './request-context';
import { clientAddress, createHandler, newRequestId, type HandlerDeps } from './server';

export const KEEPALIVE_TIMEOUT_MS = 75_000;

/** Writes Kong's answer to a request nginx refused, straight on the socket, and closes it. */
function refuse(deps: HandlerDeps, socket: Duplex, req: IncomingMessage, status: number): void {
  const started = Date.now();
  const requestId = newRequestId();
  const { config } = deps.current();
  const exit = specialResponse(config.errorTemplate, status, requestId);
  const remote = (socket as { remoteAddress?: string }).remoteAddress;
  const ctx = new RequestContext(req, new ServerResponse(req), null, req.method ?? 'GET', '/', '/', null, requestId, config, null, clientAddress(remote), headerMap(req.rawHeaders));
  const headers = headerFilter({
    ctx,
    plugins: config.globalPlugins,
    kongHeaders: deps.kongHeaders,
    headers: Object.entries(exit.headers),
    proxied: false,
    timing: { started },
    close: true,
  });
  const lines = [
    `HTTP/1.1 ${exit.status} ${http.STATUS_CODES[exit.status] ?? ''}`,
    `Date: ${new Date().toUTCString()}`,
    ...headers.flatMap((v, i) => (i % 2 === 0 ? [`${v}: ${headers[i + 1]}`] : [])),
    `Content-Length: ${Buffer.byteLength(exit.body)}`,
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${exit.body}`);
  deps.logger.info({ status: exit.status, request_id: requestId, ms: Date.now() - started }, 'request refused by the HTTP parser');
}

export function createListener(deps: HandlerDeps): http.Server {
  const handler = createHandler(deps);
  // Sockets with an answer under way, or whose last answer closes them: a parser error on bytes
  // that follow must not write a second answer into the same stream.
  const answered = new WeakSet<object>();
  // The request whose body is being read on a socket: a parser error in that body is nginx's
  // "client sent invalid chunked body", answered 400 for that request.
  const reading = new WeakMap<object, { req: IncomingMessage; res: ServerResponse }>();
  const handle: http.RequestListener = (req, res) => {
    reading.set(req.socket, { req, res });
    res.once('finish', () => {
      reading.delete(req.socket);
      if (/close/i.test(String(res.getHeader('connection') ?? ''))) answered.add(req.socket);
    });
    handler(req, res);
  };
  const server = http.createServer({ maxHeaderSize: HEADER_TOTAL_LIMIT + 1024, requireHostHeader: false }, handle);
  server.on('checkContinue', handle);
  server.on('checkExpectation', handle);
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    res.once('finish', () => socket.end());
    handle(req, res);
  });
  server.on('clientError', (err: ParserError, socket: Duplex) => {
    const status = clientErrorStatus(err);
    const current = reading.get(socket);
    if (status === null || !socket.writable || answered.has(socket) || current?.res.headersSent) {
      socket.destroy();
      return;
    }
    if (current) current.res.statusCode = status;
    refuse(deps, socket, current?.req ?? new IncomingMessage(socket as Socket), status);
  });
  server.keepAliveTimeout = KEEPALIVE_TIMEOUT_MS;
  return server;
}
