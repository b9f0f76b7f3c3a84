/**
 * Route matching as in Kong 3.9's default router (traditional_compatible, kong/router/compat.lua):
 * - a path starting with `~` is a regex, anchored at the start of the path (not at the end);
 *   any other path is a plain prefix;
 * - the request path is normalized first (kong/tools/uri.lua normalize, below), the query string
 *   is not part of it;
 * - every (route, path) pair gets a priority; the highest matching one wins: more matching
 *   criteria first (methods, paths), then regex paths before prefix paths, then higher
 *   regex_priority among regex paths, then longer prefixes; equal priorities keep file order.
 */
import type { Route, RoutePath } from './types';

export function compileRoutePath(source: string): RoutePath {
  if (source.startsWith('~')) {
    try {
      return { source, regex: new RegExp(`^${source.slice(1)}`), prefix: null };
    } catch (err) {
      throw new Error(`invalid regex ${source}: ${(err as Error).message}`);
    }
  }
  if (!source.startsWith('/')) throw new Error(`${source}: a path must start with / (or ~ for a regex)`);
  return { source, regex: null, prefix: source };
}

/** kong/tools/uri.lua RESERVED_CHARS: escapes of these stay escaped (upper-cased) when normalizing. */
const RESERVED = new Set("!*'();:@&=+$,/?%#[]");

/**
 * kong.tools.uri.normalize(path, true), which the router applies to the request path
 * (kong/router/utils.lua strip_uri_args): every %XX triplet whose byte is not reserved is decoded
 * (unreserved characters and "others" alike), reserved ones are upper-cased, dot segments are
 * removed and slashes merged. Strings here hold one byte per character (latin1), as nginx's do.
 */
export function normalizePath(raw: string): string {
  if (raw === '' || raw === '/') return raw;
  let uri = raw.replace(/%([0-9a-fA-F]{2})/g, (m, hex: string) => {
    const c = String.fromCharCode(Number.parseInt(hex, 16));
    return RESERVED.has(c) ? m.toUpperCase() : c;
  });
  if (!uri.includes('.') && !uri.includes('//')) return uri;
  const out: string[] = [];
  while (uri.length > 0) {
    if (uri === '/.') uri = '/';
    else if (uri === '/..') {
      uri = '/';
      out.pop();
    } else if (uri === '.' || uri === '..') uri = '';
    else if (uri.startsWith('../')) uri = uri.slice(3);
    else if (uri.startsWith('./')) uri = uri.slice(2);
    else if (uri.startsWith('/./')) uri = uri.slice(2);
    else if (uri.startsWith('/../')) {
      uri = uri.slice(3);
      out.pop();
    } else if (uri.startsWith('//')) uri = uri.slice(1);
    else {
      const i = uri.indexOf('/', 1);
      out.push(i === -1 ? uri : uri.slice(0, i));
      uri = i === -1 ? '' : uri.slice(i);
    }
  }
  return out.join('');
}

/** kong.tools.uri.escape: bytes outside RFC 3986's path-safe set (and `%`) as %XX; how the upstream URI is written. */
export function escapeUri(uri: string): string {
  return uri.replace(/[^!#$&'()*+,/:;=?@[\]A-Za-z0-9\-_.~%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

interface Matcher {
  route: Route;
  path: RoutePath | null;
  priority: [number, number, number, number];
}

export class Router {
  private readonly matchers: Matcher[];

  constructor(routes: Route[]) {
    const matchers: Matcher[] = [];
    for (const route of routes) {
      const weight = (route.methods ? 1 : 0) + (route.paths.length > 0 ? 1 : 0);
      const paths: Array<RoutePath | null> = route.paths.length > 0 ? route.paths : [null];
      for (const path of paths) {
        const isRegex = path?.regex ? 1 : 0;
        matchers.push({
          route,
          path,
          priority: [weight, isRegex, isRegex ? route.regexPriority : 0, path?.prefix?.length ?? 0],
        });
      }
    }
    // Array.prototype.sort is stable: equal priorities keep the order of kong.yaml.
    this.matchers = matchers.sort((a, b) => {
      for (let i = 0; i < 4; i++) {
        const d = (b.priority[i] ?? 0) - (a.priority[i] ?? 0);
        if (d !== 0) return d;
      }
      return 0;
    });
  }

  match(method: string, normalizedPath: string): Route | null {
    for (const { route, path } of this.matchers) {
      if (route.methods && !route.methods.includes(method)) continue;
      if (path === null) return route;
      if (path.regex ? path.regex.test(normalizedPath) : normalizedPath.startsWith(path.prefix ?? '')) return route;
    }
    return null;
  }
}
