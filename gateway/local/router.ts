/** Routing as Kong 3.9's traditional_compatible router does it for our routes: `~` regex paths anchored at the start, then the catch-all prefix `/`. */
import { isUtf8 } from 'node:buffer';
import type { Route } from './types';

/** kong/tools/uri.lua RESERVED_CHARS: escapes of these stay escaped (upper-cased) when normalizing. */
const RESERVED = new Set("!*'();:@&=+$,/?%#[]");

/** Every non-reserved %XX decoded (one byte per character, as nginx's strings), dot segments removed, slashes merged. */
export function normalizePath(raw: string): string {
  let uri = raw.replace(/%([0-9a-fA-F]{2})/g, (m, hex: string) => {
    const c = String.fromCharCode(Number.parseInt(hex, 16));
    return RESERVED.has(c) ? m.toUpperCase() : c;
  });
  if (!uri.includes('.') && !uri.includes('//')) return uri;
  const out: string[] = [];
  while (uri.length > 0) {
    if (uri === '/.' || uri === '/..') {
      if (uri === '/..') out.pop();
      uri = '/';
    } else if (uri === '.' || uri === '..') uri = '';
    else if (uri.startsWith('../') || uri.startsWith('./')) uri = uri.slice(uri.indexOf('/') + 1);
    else if (uri.startsWith('/./') || uri.startsWith('//')) uri = uri.slice(uri.startsWith('//') ? 1 : 2);
    else if (uri.startsWith('/../')) {
      uri = uri.slice(3);
      out.pop();
    } else {
      const i = uri.indexOf('/', 1);
      out.push(i === -1 ? uri : uri.slice(0, i));
      uri = i === -1 ? '' : uri.slice(i);
    }
  }
  return out.join('');
}

/** kong.tools.uri.escape: how the normalized path is written to the service. */
export function escapeUri(uri: string): string {
  return uri.replace(
    /[^!#$&'()*+,/:;=?@[\]A-Za-z0-9\-_.~%]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

export class Router {
  constructor(private readonly routes: Route[]) {
    this.routes = [...routes].sort(
      (a, b) => Number(b.methods !== null) - Number(a.methods !== null) || Number(a.prefixOnly) - Number(b.prefixOnly),
    );
  }

  match(method: string, path: string): Route | null {
    // Kong's router matches UTF-8 paths only (one byte per character here).
    if (!isUtf8(Buffer.from(path, 'latin1'))) return null;
    return (
      this.routes.find(
        (r) => (r.methods === null || r.methods.includes(method)) && r.paths.some((p) => p.test(path)),
      ) ?? null
    );
  }
}
