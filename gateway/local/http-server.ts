/** The proxy's HTTP server: Node's, set up like nginx's for Kong. */
import http, { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { HEADER_TOTAL_LIMIT, parserErrorStatus, type ParserError } from './nginx';
import { headerMap } from './nginx';
import { RequestContext } from './request-context';
import { clientAddress, createRequestHandler, filterHeaders, newRequestId, type HandlerDeps } from './request-handler';

/** Writes Kong's answer to bytes nginx refused, straight on the socket, and closes it. */
function refuse(deps: HandlerDeps, socket: Duplex, req: IncomingMessage, status: number): void {
  const requestId = newRequestId();
  const { config } = deps.current();
  const remote = clientAddress((socket as Socket).remoteAddress);
  const ctx = new RequestContext({
    req,
    res: new ServerResponse(req),
    method: req.method ?? 'GET',
    path: '/',
    rawPath: '/',
    args: null,
    requestId,
    config,
    route: null,
    clientIp: remote,
    clientHeaders: headerMap(req.rawHeaders),
  });
  const exit = ctx.refusal(status);
  const headers = filterHeaders(ctx, config.globalPlugins, Object.entries(exit.headers), true);
  const lines = [`HTTP/1.1 ${exit.status} ${http.STATUS_CODES[exit.status]}`, `Date: ${new Date().toUTCString()}`];
  for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  lines.push(`Content-Length: ${Buffer.byteLength(exit.body)}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${exit.body}`);
  deps.logger.info({ status: exit.status, request_id: requestId }, 'request refused by the HTTP parser');
}

type RequestLine = { method: string; url: string; httpVersion: string };

/** The packet with its heads' lines ended by CRLF, as nginx ends a line at LF with or without CR (ngx_http_parse.c). */
function withCrlf(packet: Buffer): Buffer {
  const text = packet.toString('latin1');
  const parts: string[] = [];
  let at = 0;
  while (at < text.length) {
    const blank = /\r?\n\r?\n/g;
    blank.lastIndex = at;
    const found = blank.exec(text);
    const headEnd = found ? found.index + found[0].length : text.length;
    const head = text.slice(at, headEnd);
    parts.push(head.replace(/\r?\n/g, '\r\n'));
    at = headEnd;
    if (!found || /^transfer-encoding[ \t]*:/im.test(head)) break;
    const length = Number(/^content-length[ \t]*:[ \t]*(\d+)[ \t]*\r?$/im.exec(head)?.[1] ?? 0);
    parts.push(text.slice(at, at + length));
    at = Math.min(text.length, at + length);
  }
  return Buffer.concat([Buffer.from(parts.join(''), 'latin1'), packet.subarray(at)]);
}

/** nginx reads heads Node's parser refuses (bare-LF lines, unknown methods, raw bytes above 0x7f, HTTP/1.x above 1): rewritten into one Node reads and handed to the server again. */
function reparse(server: http.Server, socket: Socket, err: ParserError, lines: WeakMap<object, RequestLine>): boolean {
  if (!err.rawPacket) return false;
  const packet = withCrlf(err.rawPacket);
  const lineEnd = packet.indexOf('\r\n');
  const m = /^([A-Z_-]+) (\S+) HTTP\/1\.(\d)$/.exec(packet.subarray(0, lineEnd).toString('latin1'));
  const known = http.METHODS.includes(m?.[1] ?? '');
  const lineRead = known && m?.[3] === '1' && !/[\x80-\xff]/.test(m[2]!);
  if (!m || (lineRead && packet.equals(err.rawPacket))) return false;
  const target = m[2]!.replace(/[\x80-\xff]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const duplex = new Duplex({
    read: () => undefined,
    write: (chunk: Buffer, _enc, done) => void socket.write(chunk, done),
    final: (done) => void socket.end(done),
  });
  Object.assign(duplex, { remoteAddress: socket.remoteAddress });
  lines.set(duplex, { method: m[1]!, url: m[2]!, httpVersion: `1.${m[3]}` });
  socket.removeAllListeners('data').removeAllListeners('end');
  socket
    .on('data', (chunk) => duplex.push(chunk))
    .on('end', () => duplex.push(null))
    .on('close', () => duplex.destroy());
  duplex.push(
    Buffer.concat([
      Buffer.from(`${known ? m[1] : 'GET'} ${target} HTTP/1.${m[3] === '0' ? 0 : 1}`, 'latin1'),
      packet.subarray(lineEnd),
    ]),
  );
  server.emit('connection', duplex);
  return true;
}

export function createHttpServer(deps: HandlerDeps): http.Server {
  const handler = createRequestHandler(deps);
  // Sockets whose last answer closes them: a parser error on bytes that follow gets no second answer.
  const answered = new WeakSet<object>();
  // The request whose body is being read: a parser error in it (a bad chunk) is answered for it.
  const reading = new WeakMap<object, { req: IncomingMessage; res: ServerResponse }>();
  const lines = new WeakMap<object, RequestLine>();
  const handle: http.RequestListener = (req, res) => {
    Object.assign(req, lines.get(req.socket));
    lines.delete(req.socket);
    reading.set(req.socket, { req, res });
    res.once('finish', () => {
      reading.delete(req.socket);
      if (/close/i.test(String(res.getHeader('connection') ?? ''))) answered.add(req.socket);
    });
    handler(req, res);
  };
  const server = http.createServer({ maxHeaderSize: HEADER_TOTAL_LIMIT + 1024, requireHostHeader: false }, handle);
  // Node 24 refuses a head of over 1000 fields as too large; nginx reads them all and counts them (431, nginx.ts).
  server.maxHeadersCount = 0;
  server.on('checkContinue', handle).on('checkExpectation', handle);
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    res.once('finish', () => socket.end());
    handle(req, res);
  });
  server.on('clientError', (err: ParserError, socket: Duplex) => {
    if (reparse(server, socket as Socket, err, lines)) return;
    const status = parserErrorStatus(err);
    const current = reading.get(socket);
    if (status === null || !socket.writable || answered.has(socket) || current?.res.headersSent)
      return void socket.destroy();
    if (current) current.res.statusCode = status;
    refuse(deps, socket, current?.req ?? new IncomingMessage(socket as Socket), status);
  });
  server.keepAliveTimeout = 75_000;
  return server;
}
