// The tiers (DESIGN.md section 3): monthly credits, the per-second cap, WebSocket coalescing and open streams, and
// webhook limits, in one table that the meter, the WebSocket front and GET /v1/pricing all read. Billing periods are calendar
// months from the account's start, computed here without I/O or clocks (the caller passes `now`).

import { WEBHOOK_TIERS } from './webhook-catalogue.js';

export type Tier = 'free' | 'starter' | 'pro' | 'business' | 'enterprise' | 'scale';

export interface TierDef {
  readonly tier: Tier;
  readonly monthlyCredits: number;
  /** requests per second per account; 0 means no per-second cap (paid tiers are metered on credits only) */
  readonly requestsPerSecond: number;
  /** WebSocket coalescing window in ms, or null when the tier has no WebSocket access */
  readonly wsWindowMs: number | null;
  /** WebSocket streams an account may hold open at once (per node), or null when the tier has no WebSocket access */
  readonly wsStreams: number | null;
}

export const TIERS: readonly TierDef[] = Object.freeze([
  { tier: 'free', monthlyCredits: 1_000, requestsPerSecond: 60, wsWindowMs: null, wsStreams: null },
  { tier: 'starter', monthlyCredits: 20_000, requestsPerSecond: 0, wsWindowMs: null, wsStreams: null },
  { tier: 'pro', monthlyCredits: 100_000, requestsPerSecond: 0, wsWindowMs: null, wsStreams: null },
  { tier: 'business', monthlyCredits: 1_000_000, requestsPerSecond: 0, wsWindowMs: 1000, wsStreams: 50 },
  { tier: 'enterprise', monthlyCredits: 5_000_000, requestsPerSecond: 0, wsWindowMs: 500, wsStreams: 200 },
  { tier: 'scale', monthlyCredits: 50_000_000, requestsPerSecond: 0, wsWindowMs: 0, wsStreams: 1000 },
] as const);

const BY_TIER = new Map<string, TierDef>(TIERS.map((t) => [t.tier, t]));

export function isTier(s: string): s is Tier {
  return BY_TIER.has(s);
}

export function tierDef(t: Tier): TierDef {
  return BY_TIER.get(t)!;
}

/** Monthly credit allowance per tier. */
export const TIER_CREDITS: Readonly<Record<Tier, number>> = Object.freeze(
  Object.fromEntries(TIERS.map((t) => [t.tier, t.monthlyCredits])) as Record<Tier, number>,
);

/** Webhook limits of a tier, or null when it has none (free and starter). */
export function webhookLimits(t: Tier): { hooks: number; perMinute: number } | null {
  return WEBHOOK_TIERS[t] ?? null;
}

/** Tiers a self-serve checkout can sell (every paid tier). */
export const PAID_TIERS: readonly Tier[] = TIERS.filter((t) => t.tier !== 'free').map((t) => t.tier);

/**
 * `ms` plus `months` calendar months in UTC, the day clamped to the target month's last day (Jan 31 + 1 month is
 * Feb 28 or 29), as PostgreSQL's `+ interval '1 month'` does.
 */
export function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(y, m, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

/**
 * The billing period holding `now` once the period ending at `end` is over: monthly periods anchored at `end`
 * ([end, end + 1 month), [end + 1 month, end + 2 months), ...). Null while `now` is before `end`. A clock that
 * jumped several months lands in the period that holds `now`, not the next one.
 */
export function periodAt(end: number, now: number): { start: number; end: number } | null {
  if (now < end) return null;
  let n = 1;
  let next = addMonths(end, 1);
  while (now >= next && n < 12_000) {
    n++;
    next = addMonths(end, n);
  }
  return { start: addMonths(end, n - 1), end: next };
}
