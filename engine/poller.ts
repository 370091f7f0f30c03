// The poller interface every feed reports through (issue 7): pulses (a poll that worked, per feed and per
// source), failures, a circuit breaker and exponential backoff with full jitter. Pure: time and randomness are
// passed in, so every transition is tested without timers.
//
// Breaker: `closed` while polls work; `failureThreshold` consecutive failures open it; an open breaker waits
// its backoff, then lets one trial poll through (`half_open`); a pulse closes it, a failure opens it again
// with the next, longer backoff. Backoff n (n consecutive failures) = random in [base, min(max, base * 2^(n-1))].

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface PollerOptions {
  failureThreshold: number;
  baseBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_POLLER: PollerOptions = { failureThreshold: 5, baseBackoffMs: 1000, maxBackoffMs: 60_000 };

export class Poller {
  state: BreakerState = 'closed';
  consecutiveFailures = 0;
  totalFailures = 0;
  pulses = 0;
  /** ms of the wait in force after the last failure, 0 when none */
  backoffMs = 0;
  /** when the next poll may run (ms); 0 when not backing off */
  nextAttemptAt = 0;
  lastPulseAt = 0;
  lastFailureAt = 0;
  lastError: string | null = null;
  /** last pulse per source key */
  readonly sourcePulses = new Map<string, number>();
  /** a feed's own facts added to its snapshot (The Odds API: quota and cadence), null when none */
  describe: ((now: number) => Record<string, unknown>) | null = null;

  constructor(readonly name: string, private readonly opts: PollerOptions = DEFAULT_POLLER,
    private readonly random: () => number = Math.random) {}

  /** true when a poll may run now (an open breaker whose wait is over turns half-open) */
  canPoll(now: number): boolean {
    if (now < this.nextAttemptAt) return false;
    if (this.state === 'open') this.state = 'half_open';
    return true;
  }

  /** a poll that worked, with the sources it heard from */
  pulse(now: number, sources: Iterable<string> = []): void {
    this.pulses++;
    this.lastPulseAt = now;
    this.consecutiveFailures = 0;
    this.backoffMs = 0;
    this.nextAttemptAt = 0;
    this.state = 'closed';
    for (const s of sources) this.sourcePulses.set(s, now);
  }

  /** A poll that failed. `atLeastMs`: the upstream asked for this wait (429 Retry-After); the backoff is the
   *  longer of it and the jittered one. */
  failure(now: number, error: string, atLeastMs = 0): void {
    this.totalFailures++;
    this.consecutiveFailures++;
    this.lastFailureAt = now;
    this.lastError = error;
    const cap = Math.min(this.opts.maxBackoffMs, this.opts.baseBackoffMs * 2 ** Math.min(30, this.consecutiveFailures - 1));
    this.backoffMs = Math.max(atLeastMs, Math.round(this.opts.baseBackoffMs + this.random() * (cap - this.opts.baseBackoffMs)));
    this.nextAttemptAt = now + this.backoffMs;
    if (this.state === 'half_open' || this.consecutiveFailures >= this.opts.failureThreshold) this.state = 'open';
  }

  snapshot(now: number): Record<string, unknown> {
    const base = {
      feed: this.name,
      circuit: this.state,
      consecutive_failures: this.consecutiveFailures,
      total_failures: this.totalFailures,
      pulses: this.pulses,
      backoff_ms: this.backoffMs,
      next_attempt_in_ms: this.nextAttemptAt > now ? this.nextAttemptAt - now : 0,
      last_pulse_age_s: this.lastPulseAt > 0 ? Math.max(0, (now - this.lastPulseAt) / 1000) : null,
      last_failure_age_s: this.lastFailureAt > 0 ? Math.max(0, (now - this.lastFailureAt) / 1000) : null,
      last_error: this.lastError,
    };
    return this.describe === null ? base : { ...base, ...this.describe(now) };
  }
}
