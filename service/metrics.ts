import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PoolStats } from '../db/client';
import { HOUSEKEEPING_TASKS, type HousekeepingTask } from './housekeeping';

// From a cached 304 to a request that waited its whole turn (DB_QUERY_TIMEOUT_MS at most 25 s).
type RequestLabel = 'route' | 'method' | 'status';

const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25];

/** What admission counts (service/middleware/admission.ts keeps them), as the metrics read them. */
export interface AdmissionStats {
  inUse: number;
  waiting: number;
  /** Refused on arrival: the wait they faced was longer than queueTimeoutMs (or the fixed queue was full). */
  refused: number;
  /** Waited queueTimeoutMs without a turn. */
  timedOut: number;
  /** Their client went away while they waited. */
  abandoned: number;
  /** The running average time a request holds its turn (0 before the first one ended). */
  serviceMs: number;
}

/** Why a request's X-Gateway-Secret was refused: none sent, or one that matches no configured secret. */
export type GatewaySecretRejection = 'missing' | 'mismatch';

export interface ServiceMetrics {
  registry: Registry;
  /** Requests the app answered, by route pattern (not path, which would be a series per id), method and status: request-outcome.ts counts them. */
  requestCount: Counter<RequestLabel>;
  requestDuration: Histogram<RequestLabel>;
  /** One request the HTTP parser refused (or a CONNECT), answered outside the app. */
  observeMalformed(status: number): void;
  /** One request refused for its gateway secret (service/middleware/gateway-trust.ts), by why. */
  observeGatewaySecretRejection(reason: GatewaySecretRejection): void;
  watchAdmission(stats: () => AdmissionStats): void;
  /** The API listener's open connections. */
  watchConnections(count: () => Promise<number>): void;
  watchPool(stats: () => PoolStats): void;
  /** `count` is asked at each scrape; a failure leaves the gauge NaN rather than an old number. */
  watchPendingChanges(count: () => Promise<number>): void;
  /** One failed run of a periodic task (service/housekeeping.ts). */
  observeHousekeepingFailure(task: HousekeepingTask): void;
}

/** The service's Prometheus metrics, in a registry of their own (one per running service). */
export function createMetrics(): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests answered by the app, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from a request reaching the app until its answer was ready, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers: [registry],
  });
  const malformed = new Counter({
    name: 'http_malformed_requests_total',
    help: 'Requests refused before reaching the app (parser errors, time-outs, CONNECT), by status',
    labelNames: ['status'] as const,
    registers: [registry],
  });

  // Both reasons exist from the start at 0, so an alert on their increase sees the first one.
  const gatewaySecretRejections = new Counter({
    name: 'jobs_gateway_secret_rejections_total',
    help: 'Requests refused with 401 because X-Gateway-Secret was missing or matched no configured secret, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['missing', 'mismatch'] as const) gatewaySecretRejections.inc({ reason }, 0);
  const housekeepingFailures = new Counter({
    name: 'jobs_housekeeping_failures_total',
    help: 'Failed runs of the service periodic tasks (folding the counters, cleaning expired idempotency keys), by task',
    labelNames: ['task'] as const,
    registers: [registry],
  });
  for (const task of HOUSEKEEPING_TASKS) housekeepingFailures.inc({ task }, 0);

  /** A gauge read at scrape time. */
  const gauge = (name: string, help: string, read: () => number | Promise<number>) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(await read());
      },
    });
  /** A counter kept elsewhere (a running total), copied at scrape time. */
  const total = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });

  return {
    registry,
    requestCount: requests,
    requestDuration: latency,
    observeMalformed(status) {
      malformed.inc({ status: String(status) });
    },
    observeGatewaySecretRejection(reason) {
      gatewaySecretRejections.inc({ reason });
    },
    observeHousekeepingFailure(task) {
      housekeepingFailures.inc({ task });
    },
    watchAdmission(stats) {
      gauge('admission_in_use', 'Admission turns held by running requests', () => stats().inUse);
      gauge('admission_waiting', 'Requests waiting for an admission turn', () => stats().waiting);
      gauge(
        'admission_service_seconds',
        'Running average time a request holds its turn',
        () => stats().serviceMs / 1000,
      );
      total(
        'admission_refused_total',
        'Requests refused on arrival: their expected wait was past DB_QUERY_TIMEOUT_MS',
        () => stats().refused,
      );
      total(
        'admission_timed_out_total',
        'Requests that waited DB_QUERY_TIMEOUT_MS without a turn',
        () => stats().timedOut,
      );
      total(
        'admission_abandoned_total',
        'Requests whose client left while they waited for a turn',
        () => stats().abandoned,
      );
    },
    watchConnections(count) {
      gauge('http_open_connections', 'Connections open on the API port', count);
    },
    watchPool(stats) {
      gauge('db_pool_connections_open', 'Connections the primary pool has open', () => stats().open);
      gauge(
        'db_pool_connections_in_use',
        'Connections of the primary pool running a query or transaction',
        () => stats().inUse,
      );
      gauge('db_pool_waiting', 'Callers waiting for a connection of the primary pool', () => stats().waiting);
    },
    watchPendingChanges(count) {
      gauge('jobs_change_feed_pending_rows', 'Committed job changes waiting for a feed number', () =>
        count().catch(() => NaN),
      );
    },
  };
}
