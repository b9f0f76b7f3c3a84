/** One request on its way through the gateway: the headers and query plugins change are what the service receives. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Consumer, Credential, Service } from './entities';
import { kongError, nginxAnswer, type Exit } from './kong-error';
import { readBody, type BodyResult, type HeaderMap } from './nginx';

/** What a request reads of the configuration it is served under. */
export interface ContextConfig {
  errorTemplate: string;
  credentialsByKey: ReadonlyMap<string, Credential>;
  consumersByIdOrUsername: ReadonlyMap<string, Consumer>;
}

export type QueryValue = string | true | Array<string | true>;

function unescape(s: string): string {
  const plus = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    // ngx.unescape_uri leaves malformed escapes as they are
    return plus.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
}

/** ngx.req.get_uri_args (kong.request.get_query). */
export function parseQuery(raw: string | null): { args: Map<string, QueryValue>; truncated: boolean } {
  const args = new Map<string, QueryValue>();
  let count = 0;
  for (const part of raw ? raw.split('&') : []) {
    const eq = part.indexOf('=');
    const name = unescape(eq === -1 ? part : part.slice(0, eq));
    if (name === '') continue;
    if (count === 100) return { args, truncated: true };
    count += 1;
    const value: string | true = eq === -1 ? true : unescape(part.slice(eq + 1));
    const prev = args.get(name);
    if (prev === undefined) args.set(name, value);
    else if (Array.isArray(prev)) prev.push(value);
    else args.set(name, [prev, value]);
  }
  return { args, truncated: false };
}

/** A request as it arrived: what the server and the router made of it. */
export interface RequestArrival {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** The normalized path the router matched. */
  path: string;
  /** The path as sent (without its query). */
  rawPath: string;
  /** ngx.var.args: the query as sent (null without `?`). */
  args: string | null;
  requestId: string;
  config: ContextConfig;
  route: { service: Service } | null;
  /** kong.client.get_forwarded_ip(): $remote_addr. */
  clientIp: string;
  /** The headers as the client sent them. */
  clientHeaders: HeaderMap;
}

export class RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  /** The normalized path the router matched. */
  readonly path: string;
  /** The path as sent (without its query). */
  readonly rawPath: string;
  /** ngx.var.args: the query as sent (null without `?`), until a plugin clears an argument. */
  args: string | null;
  readonly requestId: string;
  readonly config: ContextConfig;
  readonly route: { service: Service } | null;
  /** kong.client.get_forwarded_ip(): $remote_addr. */
  readonly clientIp: string;
  /** The headers as the client sent them, never changed. */
  readonly clientHeaders: HeaderMap;
  /** The live request headers plugins read and change. */
  readonly headers: HeaderMap;
  private parsed: { args: string | null; query: ReturnType<typeof parseQuery> } | null = null;
  /** Headers added to the response to the client, whoever produced it. */
  readonly responseHeaders = new Map<string, string>();
  consumer: Consumer | null = null;
  credential: Credential | null = null;
  private body: Promise<BodyResult> | null = null;
  /** kong.ctx.plugin. */
  readonly pluginState = new Map<string, unknown>();
  /** kong.response.get_source(), and the status sent (for the log phase). */
  source: 'exit' | 'service' | 'error' = 'error';
  status: number | null = null;

  constructor(arrival: RequestArrival) {
    this.req = arrival.req;
    this.res = arrival.res;
    this.method = arrival.method;
    this.path = arrival.path;
    this.rawPath = arrival.rawPath;
    this.args = arrival.args;
    this.requestId = arrival.requestId;
    this.config = arrival.config;
    this.route = arrival.route;
    this.clientIp = arrival.clientIp;
    this.clientHeaders = arrival.clientHeaders;
    this.headers = new Map(arrival.clientHeaders);
  }

  /** ngx.req.read_body(): the whole body, read once (null without one). */
  readBody(): Promise<BodyResult> {
    return (this.body ??= readBody(this.req, this.clientHeaders));
  }

  /** kong.request.get_query() of the live query, and whether it was truncated. */
  get query(): ReturnType<typeof parseQuery> {
    if (this.parsed?.args !== this.args) this.parsed = { args: this.args, query: parseQuery(this.args) };
    return this.parsed.query;
  }

  /** clear_query_arg: resty.ada.search.remove, WHATWG URLSearchParams (the rest re-encoded), as Node's. */
  clearQueryArg(name: string): void {
    const params = new URLSearchParams(this.args ?? '');
    params.delete(name);
    if (this.args) this.args = params.toString();
  }

  /** ngx.req.get_headers()[name]: a list when sent more than once; `_` retried as `-` on a miss. */
  getHeader(name: string): string | string[] | undefined {
    const lower = name.toLowerCase();
    const values = this.headers.get(lower) ?? this.headers.get(lower.replace(/_/g, '-')) ?? [];
    return values.length <= 1 ? values[0] : [...values];
  }

  getFirstHeader = (name: string): string | undefined => [this.getHeader(name)].flat()[0];

  /** $jobs_request_id (gateway/kong/nginx-http-jobs.conf): the client's X-Request-ID lines as $http_x_request_id joins them, else $kong_request_id. */
  get correlationId(): string {
    return (this.clientHeaders.get('x-request-id') ?? []).join(', ') || this.requestId;
  }
  setHeader = (name: string, value: string): void => void this.headers.set(name.toLowerCase(), [value]);
  clearHeader = (name: string): void => void this.headers.delete(name.toLowerCase());

  /** kong.response.error: the message through the error template. */
  error(status: number, message: string, headers: Record<string, string> = {}): Exit {
    return kongError(this.config.errorTemplate, this.requestId, { status, message, headers });
  }

  /** nginx's own refusal, through Kong's error handler. */
  refusal(status: number): Exit {
    return nginxAnswer(this.config.errorTemplate, status, this.requestId);
  }
}
