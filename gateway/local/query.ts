/**
 * The two query-string codecs a request meets inside Kong 3.9.1:
 * - reading: ngx.req.get_uri_args, what kong.request.get_query() returns (kong/pdk/request.lua):
 *   `k=v` pairs split on `&`, `+` and %XX decoded, a repeated name becomes a list, a bare `k` is
 *   `true`, `k=` is "", empty names are dropped, and only the first lua_max_uri_args (100,
 *   kong/templates/kong_defaults.lua) arguments are read;
 * - removing: kong.service.request.clear_query_arg(name) (kong/pdk/service/request.lua) sets
 *   ngx.var.args to resty.ada.search.remove(args, name) when the query is not empty: ada's WHATWG
 *   URLSearchParams, parsed, the name deleted, serialized again. The remaining pairs keep their
 *   order and repetitions, but every one is re-encoded (space as `+`, every byte but
 *   A-Z a-z 0-9 * - . _ as %XX, a bare `k` as `k=`). Node's URLSearchParams implements the same
 *   WHATWG algorithms.
 */

export type QueryValue = string | true | Array<string | true>;
export type QueryArgs = Map<string, QueryValue>;

/** lua_max_uri_args, Kong's default. */
export const MAX_URI_ARGS = 100;

function unescape(s: string): string {
  const plus = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    // ngx.unescape_uri leaves malformed escapes as they are
    return plus.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
}

export interface ParsedQuery {
  args: QueryArgs;
  /** get_uri_args's "truncated": arguments past the limit were left out. */
  truncated: boolean;
}

export function parseQuery(raw: string | null, maxArgs = MAX_URI_ARGS): ParsedQuery {
  const args: QueryArgs = new Map();
  if (!raw) return { args, truncated: false };
  let count = 0;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = unescape(eq === -1 ? part : part.slice(0, eq));
    if (name === '') continue;
    if (count === maxArgs) return { args, truncated: true };
    count += 1;
    const value: string | true = eq === -1 ? true : unescape(part.slice(eq + 1));
    const prev = args.get(name);
    if (prev === undefined) args.set(name, value);
    else if (Array.isArray(prev)) prev.push(value);
    else args.set(name, [prev, value]);
  }
  return { args, truncated: false };
}

/** resty.ada.search.remove(args, name): the new ngx.var.args. */
export function removeQueryArg(args: string, name: string): string {
  const params = new URLSearchParams(args);
  params.delete(name);
  return params.toString();
}
