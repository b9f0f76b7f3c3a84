import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Served {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves a request listener (e.g. app.callback()) on an ephemeral loopback port. */
export async function serve(listener: http.RequestListener): Promise<Served> {
  const server = http.createServer(listener);
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
  body: any;
  text: string;
}

/** fetch() that reads the body once and parses it when it is JSON. */
export async function call(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = undefined;
  if ((response.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text);
  return { status: response.status, headers: response.headers, body, text };
}
