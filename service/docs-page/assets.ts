import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { PAGE_HTML, PAGE_SCRIPT, PAGE_STYLE } from './page';

/** One file the reference page is made of, ready to send. */
export interface Asset {
  type: string;
  cacheControl: string;
  body: Buffer;
  gzipped: Buffer | null;
  etag: string;
}

const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));

function asset(type: string, cacheControl: string, body: Buffer): Asset {
  // Swagger UI's bundle is 1.7 MB and 0.46 MB gzipped; tiny files are not worth the header.
  const gzipped = body.length > 1024 ? gzipSync(body, { level: 9 }) : null;
  return { type, cacheControl, body, gzipped, etag: `"${hash('sha256', body, 'base64url')}"` };
}

// The page and the document say at once what a deploy changed; the library's files may be kept a few minutes (their names carry no version).
const REVALIDATE = 'public, no-cache';
const FEW_MINUTES = 'public, max-age=300';

/** Every path the docs route serves, and nothing else. */
export function docsAssets(document: () => unknown): Map<string, () => Asset> {
  const once = (make: () => Asset) => {
    let made: Asset | undefined;
    return () => (made ??= make());
  };
  const page = once(() => asset('text/html; charset=utf-8', REVALIDATE, Buffer.from(PAGE_HTML)));
  const vendor = (file: string, type: string) =>
    once(() => asset(type, FEW_MINUTES, readFileSync(path.join(SWAGGER_UI, file))));
  return new Map([
    ['/docs', page],
    ['/docs/', page],
    [
      '/docs/openapi.json',
      once(() => asset('application/json; charset=utf-8', REVALIDATE, Buffer.from(JSON.stringify(document())))),
    ],
    ['/docs/reference.js', once(() => asset('text/javascript; charset=utf-8', FEW_MINUTES, Buffer.from(PAGE_SCRIPT)))],
    ['/docs/reference.css', once(() => asset('text/css; charset=utf-8', FEW_MINUTES, Buffer.from(PAGE_STYLE)))],
    ['/docs/swagger-ui-bundle.js', vendor('swagger-ui-bundle.js', 'text/javascript; charset=utf-8')],
    ['/docs/swagger-ui.css', vendor('swagger-ui.css', 'text/css; charset=utf-8')],
  ]);
}
