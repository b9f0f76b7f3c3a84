/**
 * The load generator: autocannon in a process of its own (forked by bench/run.ts), so its CPU
 * is never counted against the server under test. One message in, one result out, per run.
 */
import autocannon from 'autocannon';

export interface LoadRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** GET <idPath><one of ids, at random> instead of the URL's path (get by id). */
  idPath?: string;
  ids?: string[];
  connections: number;
  /** Seconds to run for, or `amount` requests in all. */
  duration?: number;
  amount?: number;
  /** Seconds a single request may take before autocannon counts a timeout. */
  timeout: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  /**
   * Latencies in ms, measured per response with process.hrtime (autocannon's own histogram has
   * 1 ms steps); -1 when nothing was answered (NaN would not survive IPC).
   */
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return -1;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function runLoad(request: LoadRequest): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let latencies = new Float64Array(1 << 16);
    let count = 0;
    const ids = request.ids ?? [];
    const instance = autocannon(
      {
        url: request.url,
        connections: request.connections,
        // autocannon refuses an explicit undefined duration.
        ...(request.amount ? { amount: request.amount } : { duration: request.duration }),
        timeout: request.timeout,
        requests: [
          {
            method: request.method,
            headers: request.headers,
            body: request.body,
            ...(request.idPath
              ? {
                  setupRequest: (req: { path?: string }) => {
                    req.path = `${request.idPath}${ids[Math.floor(Math.random() * ids.length)]}`;
                    return req;
                  },
                }
              : {}),
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        const sorted = latencies.subarray(0, count).sort();
        const statuses: Record<string, number> = {};
        for (const [code, { count: n }] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = Number(n);
        resolve({
          requests: count,
          seconds: result.duration,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          statuses,
          errors: result.errors,
          timeouts: result.timeouts,
        });
      },
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTime;
    });
  });
}

if (require.main === module) {
  process.on('message', (message: { id: number; request: LoadRequest }) => {
    runLoad(message.request).then(
      (result) => process.send!({ id: message.id, result }),
      (error: Error) => process.send!({ id: message.id, error: error.message }),
    );
  });
}
