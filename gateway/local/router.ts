/**
 * Route matching as in Kong 3.9's default router (traditional_compatible, kong/router/compat.lua):
 * - a path starting with `~` is a regex, anchored at the start of the path (not at the end);
 *   any other path is a plain prefix;
 * - the request path is normalized first (percent-decoding of unreserved characters, dot segments
 *   removed, slashes merged), the query string is not part of it;
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

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** kong.tools.uri.normalize(path, true). */
export function normalizePath(raw: string): string {
  let decoded = raw.replace(/%([0-9a-fA-F]{2})/g, (m, hex: string) => {
    const c = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : m.toUpperCase();
  });
  decoded = decoded.replace(/\/{2,}/g, '/');
  const out: string[] = [];
  const segments = decoded.split('/');
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] ?? '';
    const last = i === segments.length - 1;
    if (seg === '.') {
      if (last) out.push('');
    } else if (seg === '..') {
      if (out.length > 1) out.pop();
      if (last) out.push('');
    } else {
      out.push(seg);
    }
  }
  const joined = out.join('/');
  return joined.startsWith('/') ? joined : `/${joined}`;
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
