/**
 * Query strings as OpenResty sees them (ngx.req.get_uri_args): `k=v` pairs split on `&`, `+` and
 * %XX decoded, a repeated name becomes a list, a bare `k` is `true`, `k=` is "", empty names are
 * dropped. Re-encoding follows Kong's kong.service.request.set_query: names sorted, values
 * percent-encoded, so a query Kong rewrites reaches the service normalised.
 */

export type QueryValue = string | true | Array<string | true>;
export type QueryArgs = Map<string, QueryValue>;

function unescape(s: string): string {
  const plus = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    // ngx.unescape_uri leaves malformed escapes as they are
    return plus.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
}

export function parseQuery(raw: string | null): QueryArgs {
  const args: QueryArgs = new Map();
  if (!raw) return args;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = unescape(eq === -1 ? part : part.slice(0, eq));
    if (name === '') continue;
    const value: string | true = eq === -1 ? true : unescape(part.slice(eq + 1));
    const prev = args.get(name);
    if (prev === undefined) args.set(name, value);
    else if (Array.isArray(prev)) prev.push(value);
    else args.set(name, [prev, value]);
  }
  return args;
}

function escape(s: string): string {
  return Array.from(Buffer.from(s, 'utf8'))
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

export function encodeQuery(args: QueryArgs): string {
  const names = [...args.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  for (const name of names) {
    const value = args.get(name);
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (v === undefined) continue;
      parts.push(v === true ? escape(name) : `${escape(name)}=${escape(v)}`);
    }
  }
  return parts.join('&');
}
