import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderError } from './error-template';
import { readBody, type BodyResult } from './nginx/request-body';
import type { Exit } from './plugins/definition';
import { parseQuery, removeQueryArg, type ParsedQuery, type QueryArgs } from './query';
import type { Consumer, Credential, GatewayConfig, Route } from './types';

/**
 * One request on its way through the gateway. As in OpenResty, the request headers and query
 * that plugins read are the ones earlier plugins changed (key-auth's hide_credentials removes the
 * key before later plugins run), and they are what the service receives.
 */
/** The request's headers as nginx keeps them: lower-cased names, every value in arrival order. */
export type HeaderMap = Map<string, readonly string[]>;

/** Built once per request from the raw header lines (Node's headers/headersDistinct are built lazily, each by its own pass). */
export function headerMap(rawHeaders: readonly string[]): HeaderMap {
  const map: Map<string, string[]> = new Map();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const values = map.get(name);
    if (values) values.push(rawHeaders[i + 1]!);
    else map.set(name, [rawHeaders[i + 1]!]);
  }
  return map;
}

export class RequestContext {
  /** The live request headers plugins read and change; their value arrays are replaced, never changed in place. */
  readonly headers: HeaderMap;
  /** ngx.var.args: the query string as sent (null without `?`), until a plugin clears an argument. */
  args: string | null;
  private parsedQuery: { args: string | null; parsed: ParsedQuery } | null = null;
  /** Headers added to the response to the client, whoever produced it. */
  readonly responseHeaders = new Map<string, string>();
  consumer: Consumer | null = null;
  credential: Credential | null = null;
  private body: Promise<BodyResult> | null = null;
  /** Per-plugin scratch space (Kong's kong.ctx.plugin). */
  readonly pluginState = new Map<string, unknown>();
  /** kong.response.get_source(): "exit" when a plugin answered, "service" when proxied, else "error". */
  source: 'exit' | 'service' | 'error' = 'error';
  /** The status sent to the client, once known (kong.response.get_status() in the log phase). */
  status: number | null = null;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** client_max_body_size in bytes (null: no limit). */
    private readonly bodyLimit: number | null,
    readonly method: string,
    /** The normalized path the router matched. */
    readonly path: string,
    /** The path as sent (ngx.var.request_uri without its query). */
    readonly rawPath: string,
    args: string | null,
    readonly requestId: string,
    readonly config: GatewayConfig,
    /** null on Kong's own answers before routing (no route, nginx's refusals). */
    readonly route: Route | null,
    /** kong.client.get_forwarded_ip(): $remote_addr (no trusted_ips, so the realip module is off). */
    readonly clientIp: string,
    /** The headers as the client sent them (headerMap), never changed. */
    readonly clientHeaders: HeaderMap,
  ) {
    this.headers = new Map(clientHeaders);
    this.args = args;
  }

  /** ngx.req.read_body(): the whole body, read once (null without one), or tooLarge past client_max_body_size. */
  readBody(): Promise<BodyResult> {
    this.body ??= readBody(this.req, this.res, this.bodyLimit, this.clientHeaders);
    return this.body;
  }

  private parse(): ParsedQuery {
    if (!this.parsedQuery || this.parsedQuery.args !== this.args) {
      this.parsedQuery = { args: this.args, parsed: parseQuery(this.args) };
    }
    return this.parsedQuery.parsed;
  }

  /** kong.request.get_query(): the live query, parsed like ngx.req.get_uri_args (first 100 arguments). */
  get query(): QueryArgs {
    return this.parse().args;
  }

  /** get_query's second result: "truncated" when the query has more than 100 arguments. */
  get queryTruncated(): boolean {
    return this.parse().truncated;
  }

  /** kong.service.request.clear_query_arg(name). */
  clearQueryArg(name: string): void {
    if (this.args) this.args = removeQueryArg(this.args, name);
  }

  /**
   * ngx.req.get_headers()[name]: a string, or a list when the header was sent more than once.
   * Lookups are case-insensitive and, on a miss, retried with underscores turned into dashes.
   */
  getHeader(name: string): string | string[] | undefined {
    const lower = name.toLowerCase();
    const values = this.headers.get(lower) ?? this.headers.get(lower.replace(/_/g, '-'));
    if (!values || values.length === 0) return undefined;
    return values.length === 1 ? values[0] : [...values];
  }

  /** kong.request.get_header: the first value. */
  getFirstHeader(name: string): string | undefined {
    const v = this.getHeader(name);
    return Array.isArray(v) ? v[0] : v;
  }

  setHeader(name: string, value: string): void {
    this.headers.set(name.toLowerCase(), [value]);
  }

  clearHeader(name: string): void {
    this.headers.delete(name.toLowerCase());
  }

  /** kong.response.error: the message through the error template. */
  error(status: number, message: string, headers: Record<string, string> = {}): Exit {
    return renderError(this.config.errorTemplate, status, message, this.requestId, headers);
  }
}
