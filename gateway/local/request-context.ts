import type { IncomingMessage } from 'node:http';
import { renderError } from './error-template';
import type { Exit } from './plugins/definition';
import { parseQuery, type QueryArgs } from './query';
import type { Consumer, Credential, GatewayConfig, Route } from './types';

/**
 * One request on its way through the gateway. As in OpenResty, the request headers and query
 * that plugins read are the ones earlier plugins changed (key-auth's hide_credentials removes the
 * key before later plugins run), and they are what the service receives. The client's original
 * headers and query stay available for the few decisions that need them.
 */
export class RequestContext {
  readonly headers: Map<string, string[]>;
  query: QueryArgs;
  /** Set when a plugin rewrote the query (Kong's set_query): the service then gets it re-encoded. */
  queryRewritten = false;
  readonly clientHeaders: ReadonlyMap<string, readonly string[]>;
  readonly clientQuery: QueryArgs;
  /** Headers added to the response to the client, whoever produced it. */
  readonly responseHeaders = new Map<string, string>();
  consumer: Consumer | null = null;
  credential: Credential | null = null;
  /** Request body read by a plugin (request-size-limiting on a body without Content-Length). */
  bufferedBody: Buffer | null = null;
  /** Per-plugin scratch space (Kong's kong.ctx.plugin). */
  readonly pluginState = new Map<string, unknown>();

  constructor(
    readonly req: IncomingMessage,
    readonly method: string,
    /** The normalized path the router matched. */
    readonly path: string,
    readonly rawQuery: string | null,
    readonly requestId: string,
    readonly config: GatewayConfig,
    readonly route: Route,
  ) {
    const headers = new Map<string, string[]>();
    for (const [name, values] of Object.entries(req.headersDistinct)) {
      if (values) headers.set(name.toLowerCase(), [...values]);
    }
    this.headers = headers;
    this.clientHeaders = new Map([...headers].map(([k, v]) => [k, [...v]]));
    this.query = parseQuery(rawQuery);
    this.clientQuery = parseQuery(rawQuery);
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

  setQuery(args: QueryArgs): void {
    this.query = args;
    this.queryRewritten = true;
  }
}
