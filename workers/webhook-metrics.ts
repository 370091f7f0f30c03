// The webhook counters of GET /metrics (prom-client): outbox rows written per event type, attempts by outcome,
// total failures, deliveries skipped (rate_limited, out_of_credits), subscriptions auto-disabled, and the outbox
// backlog (deliveries still on their schedule), counted in PostgreSQL at scrape time.

import { Counter, Gauge, type Registry } from 'prom-client';

/** how long a scrape waits for the outbox backlog count (as /health for its ping) */
const BACKLOG_TIMEOUT_MS = 2000;

export class WebhookMetrics {
  private readonly enqueued: Counter<'event_type'>;
  private readonly attempts: Counter<'outcome'>;
  private readonly failures: Counter;
  private readonly skips: Counter<'reason'>;
  private readonly disables: Counter;

  /** `registry` null: counted, not exported (a service built without the HTTP front, as in the benchmark) */
  constructor(registry: Registry | null, backlog: () => Promise<number>) {
    const registers = registry === null ? [] : [registry];
    let counting: Promise<number> | null = null;
    this.enqueued = new Counter({
      name: 'linewire_webhook_events_enqueued_total',
      help: 'Webhook events written to the outbox for delivery, one per event and subscription, by event type',
      labelNames: ['event_type'], registers,
    });
    this.attempts = new Counter({
      name: 'linewire_webhook_attempts_total',
      help: 'Webhook delivery attempts (scheduled, test and replay) by outcome: delivered (2xx), http_error (another status), no_response (refused, unreachable, timeout)',
      labelNames: ['outcome'], registers,
    });
    this.failures = new Counter({
      name: 'linewire_webhook_deliveries_failed_total',
      help: 'Webhook deliveries failed after every attempt of their schedule (total failures)',
      registers,
    });
    this.skips = new Counter({
      name: 'linewire_webhook_deliveries_skipped_total',
      help: 'Webhook deliveries without an attempt, by reason: rate_limited and out_of_credits (recorded), rate_limited_unrecorded (past the recorded share of a rate window: counted only)',
      labelNames: ['reason'], registers,
    });
    this.disables = new Counter({
      name: 'linewire_webhook_subscriptions_disabled_total',
      help: 'Webhook subscriptions deactivated after consecutive total failures',
      registers,
    });
    new Gauge({
      name: 'linewire_webhook_outbox_backlog',
      help: 'Webhook deliveries in the outbox still on their schedule (pending or retrying)',
      registers,
      async collect() {
        // a database that does not answer must not fail the whole scrape, nor hold it (it held /metrics for as long as
        // the database was stuck): the gauge keeps its last value, and one count waits at a time
        counting ??= backlog().finally(() => { counting = null; });
        let timer: NodeJS.Timeout | undefined;
        try {
          this.set(await Promise.race([counting, new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('no answer')), BACKLOG_TIMEOUT_MS);
          })]));
        } catch {
          /* reported by the database's own health checks */
        } finally {
          clearTimeout(timer);
        }
      },
    });
    for (const o of ['delivered', 'http_error', 'no_response']) this.attempts.inc({ outcome: o }, 0);
    for (const r of ['rate_limited', 'out_of_credits', 'rate_limited_unrecorded']) this.skips.inc({ reason: r }, 0);
  }

  /** an outbox row committed */
  written(eventType: string, status: 'pending' | 'rate_limited'): void {
    if (status === 'pending') this.enqueued.inc({ event_type: eventType });
    else this.skips.inc({ reason: 'rate_limited' });
  }

  attempt(statusCode: number | null): void {
    this.attempts.inc({ outcome: statusCode === null ? 'no_response' : statusCode >= 200 && statusCode < 300 ? 'delivered' : 'http_error' });
  }

  failed(): void {
    this.failures.inc();
  }

  skipped(reason: 'out_of_credits'): void {
    this.skips.inc({ reason });
  }

  /** a rate-limited event past the window's recorded share: no outbox row */
  skippedUnrecorded(): void {
    this.skips.inc({ reason: 'rate_limited_unrecorded' });
  }

  disabled(n: number): void {
    this.disables.inc(n);
  }
}
