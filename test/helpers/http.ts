import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateResponse } from './openapi';
import type { Parsed } from './parsed';

export interface Served {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves a request listener (e.g. app.callback(), which answers through its promise) on an ephemeral loopback port. */
export async function serve(
  listener: (req: http.IncomingMessage, res: http.ServerResponse) => unknown,
): Promise<Served> {
  const server = http.createServer((req, res) => void listener(req, res));
  // As service/server.ts: Node 24 would refuse over 1000 fields itself; headerBlock counts them.
  server.maxHeadersCount = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Parsed;
  text: string;
}

/**
 * fetch() that reads the body once, parses it when it is JSON, and checks the response against
 * docs/openapi.json (test/helpers/openapi.ts): an undocumented answer fails the test.
 */
export async function call(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = undefined;
  const contentType = response.headers.get('content-type');
  if ((contentType ?? '').includes('json') && text !== '') body = JSON.parse(text);
  validateResponse({
    method: init.method ?? 'GET',
    url,
    status: response.status,
    contentType,
    body,
    text,
    headers: Object.fromEntries(response.headers),
  });
  return { status: response.status, headers: response.headers, body, text };
}

/** The answer is `status` with the JSON error body { error: message }, nothing more in it. */
export function expectJsonError(res: Pick<JsonResponse, 'status' | 'body'>, status: number, message: string): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: message });
}

/** A query an endpoint refuses: the test's label, the query string, and the exact message of the 400. */
export type QueryRefusal = [label: string, query: string, message: string];

/** One test per case, in the block it is called in: `get(query)` answers 400 with exactly the case's message. */
export function refusesQueries(get: (query: string) => Promise<JsonResponse>, cases: QueryRefusal[]): void {
  test.each(cases)('%s', async (_label, query, message) => {
    expectJsonError(await get(query), 400, message);
  });
}
