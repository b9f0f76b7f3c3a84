import type { Server, ServerResponse } from 'node:http';

export interface Drain {
  /** Stops accepting connections and lets in-flight requests finish; after `graceMs` destroys whatever sockets are still open. */
  (graceMs: number): Promise<boolean>;
}

/** Graceful close with a deadline for an HTTP server. */
export function drainOnStop(server: Server): Drain {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  // Prepended: it must run before the app's handler, which may answer at once.
  server.prependListener('request', (_request, response: ServerResponse) => {
    // A request whose head was still arriving when the drain began: its answer closes the socket.
    if (draining) {
      response.shouldKeepAlive = false;
      return;
    }
    inFlight.add(response);
    // Stryker disable next-line ArrowFunction,StringLiteral: equivalent, memory only
    response.once('close', () => inFlight.delete(response));
  });

  return (graceMs) => {
    draining = true;
    return new Promise<boolean>((resolve) => {
      const deadline = setTimeout(() => {
        server.closeAllConnections();
        resolve(false);
      }, graceMs);
      // close() also closes the connections idle right now (Node 19 and later).
      server.close(() => {
        clearTimeout(deadline);
        resolve(true);
      });
      for (const response of inFlight) {
        if (!response.headersSent) response.shouldKeepAlive = false;
        // Already promised keep-alive: close the socket once it is idle again.
        else response.once('finish', () => setImmediate(() => server.closeIdleConnections()));
      }
    });
  };
}
