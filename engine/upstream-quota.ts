// An upstream's usage quota and the poll cadence it allows (The Odds API: credits per period, reported on every
// response as x-requests-remaining / -used / -last). Pure: the clock is passed in.
//
// Cadence: spread what is left evenly over the time left in the period,
//
//   interval = max(min_interval, time_left × cycle_cost / (remaining − reserve))
//
// where cycle_cost is what one full poll cycle cost last time (the sum of x-requests-last over its requests;
// an estimate before the first cycle), time_left runs to the next period start, and reserve is credits kept
// back. When remaining − reserve cannot pay one more cycle the quota is spent: no polling until the period
// rolls over. Example: 20,000 credits left, 15 days to go, 6 credits a cycle: 15 × 86,400 s × 6 / 20,000 =
// 389 s between cycles. A cycle that cost nothing (no events upstream) runs again after min_interval.

export interface CadenceInput {
  /** credits left (NaN: not known yet) */
  remaining: number;
  reserve: number;
  /** credits one cycle costs */
  cycleCost: number;
  /** ms until the period rolls over */
  msLeft: number;
  minMs: number;
}

export interface Cadence {
  intervalMs: number;
  /** the credits left cannot pay one more cycle */
  spent: boolean;
}

export function cadence(inp: CadenceInput): Cadence {
  if (Number.isNaN(inp.remaining)) return { intervalMs: inp.minMs, spent: false };
  const spendable = inp.remaining - inp.reserve;
  if (spendable <= 0 || inp.cycleCost > spendable) return { intervalMs: Math.max(inp.minMs, inp.msLeft), spent: true };
  if (inp.cycleCost <= 0) return { intervalMs: inp.minMs, spent: false };
  return { intervalMs: Math.max(inp.minMs, Math.ceil((inp.msLeft * inp.cycleCost) / spendable)), spent: false };
}

/**
 * The next period start strictly after `now`: 00:00 UTC on `resetDay` of a month (a day past the month's end
 * falls on its last day). The Odds API renews a subscription's credits monthly, on the day it started.
 */
export function nextPeriodStart(now: number, resetDay: number): number {
  const d = new Date(now);
  let y = d.getUTCFullYear();
  let m = d.getUTCMonth();
  for (let i = 0; i < 3; i++) {
    const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    const at = Date.UTC(y, m, Math.min(resetDay, last));
    if (at > now) return at;
    m++;
    if (m === 12) {
      m = 0;
      y++;
    }
  }
  /* c8 ignore next */
  throw new Error('unreachable');
}

/** What is known of the quota; every field set in the constructor (NaN / 0 when unknown). */
export class Quota {
  remaining = Number.NaN;
  used = Number.NaN;
  last = Number.NaN;
  /** when the headers were last read (ms), 0 never */
  observedAt = 0;
  /** polling is stopped until then (quota spent), 0 when not */
  exhaustedUntil = 0;
  /** why it stopped: 'OUT_OF_USAGE_CREDITS' (the upstream said so), 'remaining' (remaining − reserve cannot pay a cycle) */
  exhaustedReason: string | null = null;

  constructor(readonly resetDay: number, readonly reserve: number) {}

  /** Reads one response's headers (absent ones keep the previous value). */
  observe(now: number, u: { remaining: number; used: number; last: number }): void {
    if (!Number.isNaN(u.remaining)) this.remaining = u.remaining;
    if (!Number.isNaN(u.used)) this.used = u.used;
    if (!Number.isNaN(u.last)) this.last = u.last;
    if (!Number.isNaN(u.remaining) || !Number.isNaN(u.used) || !Number.isNaN(u.last)) this.observedAt = now;
  }

  periodEnd(now: number): number {
    return nextPeriodStart(now, this.resetDay);
  }

  exhaust(now: number, reason: string): void {
    this.exhaustedUntil = this.periodEnd(now);
    this.exhaustedReason = reason;
  }

  /** true while polling must wait for the period to roll over (clears itself once it has) */
  exhausted(now: number): boolean {
    if (this.exhaustedUntil === 0) return false;
    if (now < this.exhaustedUntil) return true;
    // a new period: the old remaining says nothing any more (the next response tells)
    this.remaining = Number.NaN;
    this.resume();
    return false;
  }

  /** credits are there again (a new period, or the upstream reports some left) */
  resume(): void {
    this.exhaustedUntil = 0;
    this.exhaustedReason = null;
  }

  cadence(now: number, cycleCost: number, minMs: number): Cadence {
    return cadence({ remaining: this.remaining, reserve: this.reserve, cycleCost, msLeft: this.periodEnd(now) - now, minMs });
  }

  snapshot(now: number) {
    const n = (v: number) => (Number.isNaN(v) ? null : v);
    return {
      remaining: n(this.remaining),
      used: n(this.used),
      last: n(this.last),
      reserve: this.reserve,
      observed_age_s: this.observedAt > 0 ? Math.max(0, (now - this.observedAt) / 1000) : null,
      period_ends_at: new Date(this.periodEnd(now)).toISOString(),
      exhausted: this.exhaustedUntil > now,
      exhausted_reason: this.exhaustedUntil > now ? this.exhaustedReason : null,
      resumes_at: this.exhaustedUntil > now ? new Date(this.exhaustedUntil).toISOString() : null,
    };
  }
}
