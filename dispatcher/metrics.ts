import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { SubscriptionLag } from '../db/webhooks/delivery';

export type DeliveryOutcome = 'delivered' | 'failed' | 'refused' | 'disabled';

export interface DispatcherMetrics {
  registry: Registry;
  observeDelivery(outcome: DeliveryOutcome, seconds: number): void;
  /** A subscription started failing, was disabled, or recovered: counted once per change, not per attempt. */
  subscriptionChanged(to: 'failing' | 'disabled' | 'recovered'): void;
  /** How many subscriptions' secrets this dispatcher's keyring cannot open. */
  observeUnopenable(count: number): void;
  /** The database's clock minus this host's. */
  observeSkew(ms: number): void;
  /** Read at each scrape: every subscription's position, head of the feed and oldest undelivered event. */
  watchLag(read: () => Promise<{ head: number; subscriptions: SubscriptionLag[] }>): void;
}

/** The dispatcher's Prometheus metrics (WEBHOOK_METRICS_PORT), one series per subscription id, never per partner name. */
export function createDispatcherMetrics(): DispatcherMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const attempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Delivery attempts, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'Time from sending an event to its answer, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const changes = new Counter({
    name: 'webhook_subscription_changes_total',
    help: 'Subscriptions that started failing, were disabled, or recovered',
    labelNames: ['to'] as const,
    registers: [registry],
  });
  const skew = new Gauge({
    name: 'webhook_clock_skew_seconds',
    help: "The database's clock minus this host's (signatures follow the database's); past 30 s it is logged",
    registers: [registry],
  });
  const unopenable = new Gauge({
    name: 'webhook_subscriptions_unopenable',
    help: "Subscriptions whose signing secret this dispatcher's keyring cannot open: deliveries to them wait (docs/operations.md, Rotating the webhook sealing key)",
    registers: [registry],
  });
  let read: Parameters<DispatcherMetrics['watchLag']>[0] | undefined;
  let last: Promise<{ head: number; subscriptions: SubscriptionLag[] }> | undefined;
  // One query per scrape however many gauges read it; while the database is away they are left out, and webhook_dispatcher_database_up says why.
  const snapshot = () =>
    (last ??= read!().finally(() => setTimeout(() => (last = undefined), 100))).catch(() => undefined);
  const perSubscription = (name: string, help: string, value: (lag: SubscriptionLag, head: number) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['subscription', 'status'] as const,
      registers: [registry],
      async collect() {
        if (!read) return;
        this.reset();
        const lags = await snapshot();
        for (const lag of lags?.subscriptions ?? [])
          this.set({ subscription: lag.id, status: lag.status }, value(lag, lags!.head));
      },
    });
  perSubscription(
    'webhook_subscription_lag_seconds',
    'Age of the oldest event not yet delivered to the subscription (0 when caught up)',
    (lag) => (lag.oldestUndelivered ? Math.max(0, (Date.now() - lag.oldestUndelivered.getTime()) / 1000) : 0),
  );
  perSubscription(
    'webhook_subscription_oldest_undelivered_timestamp_seconds',
    'When the oldest event not yet delivered happened (0 when caught up)',
    (lag) => (lag.oldestUndelivered ? lag.oldestUndelivered.getTime() / 1000 : 0),
  );
  perSubscription(
    'webhook_subscription_position',
    'Feed position (sequence number) the subscription has been delivered up to',
    (lag) => lag.position,
  );
  perSubscription(
    'webhook_subscription_failed_attempts',
    'Failed attempts at the event the subscription is stuck on',
    (lag) => lag.attempts,
  );
  new Gauge({
    name: 'webhook_feed_head_position',
    help: "The change feed's last sequence number",
    registers: [registry],
    async collect() {
      const lags = read && (await snapshot());
      if (lags) this.set(lags.head);
    },
  });
  return {
    registry,
    observeDelivery(outcome, seconds) {
      attempts.inc({ outcome });
      duration.observe({ outcome }, seconds);
    },
    subscriptionChanged(to) {
      changes.inc({ to });
    },
    observeUnopenable(count) {
      unopenable.set(count);
    },
    observeSkew(ms) {
      skew.set(ms / 1000);
    },
    watchLag(reader) {
      read = reader;
    },
  };
}
