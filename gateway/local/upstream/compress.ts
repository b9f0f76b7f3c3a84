/** nginx's gzip filter on proxied responses with kong.conf's nginx_proxy_gzip*. */
import zlib from 'node:zlib';
import type { RequestContext } from '../request-context';

const TYPES = new Set(['application/json', 'text/html']);

/** ngx_http_gzip_accept_encoding: the first "gzip" at the start or after "," or " ", with no q or 0 < q <= 1. */
export function acceptsGzip(header: string): boolean {
  const at = /(?:^|[, ])gzip/i.exec(header);
  const rest = at && /^ *(?:$|,|;([^,]*))/.exec(header.slice(at.index + at[0].length));
  if (!rest) return false;
  if (!rest[1]?.trim()) return true;
  const q = /^ *q=([01](?:\.\d{0,3})?)$/.exec(rest[1].trimEnd());
  return q !== null && Number(q[1]) > 0 && Number(q[1]) <= 1;
}

/** The gzip header filter on a proxied response's flat headers (changed in place): the stream for the body, or null. */
export function gzipResponse(ctx: RequestContext, status: number, headers: string[]): zlib.Gzip | null {
  const get = (name: string): string | undefined =>
    headers.find((_, i) => i % 2 === 1 && headers[i - 1]!.toLowerCase() === name);
  const length = get('content-length');
  const type = get('content-type')?.split(';')[0]!.trim().toLowerCase() ?? '';
  if (
    ![200, 403, 404].includes(status) ||
    get('content-encoding') ||
    Number(length ?? Infinity) < 1024 ||
    !TYPES.has(type)
  )
    return null;
  headers.push('Vary', 'Accept-Encoding');
  if (ctx.req.httpVersion === '1.0' || !acceptsGzip(ctx.getFirstHeader('accept-encoding') ?? '')) return null;
  for (let i = headers.length - 2; i >= 0; i -= 2) {
    const [name, value] = [headers[i]!.toLowerCase(), headers[i + 1]!];
    if (name === 'etag' && value.startsWith('"')) headers[i + 1] = `W/${value}`;
    else if (
      name === 'content-length' ||
      name === 'accept-ranges' ||
      (name === 'etag' && !(value.length > 2 && value.startsWith('W/')))
    )
      headers.splice(i, 2);
  }
  headers.push('Content-Encoding', 'gzip');
  return ctx.method === 'HEAD' ? null : zlib.createGzip({ level: 3 });
}
