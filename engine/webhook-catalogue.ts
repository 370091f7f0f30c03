// The webhook contract in one place: event types of both variants with what fires them and the JSON schema of
// their `data`, the tier limits of DESIGN.md section 3, and the retry schedule. /v1/meta/webhooks and
// /openapi.json publish this object, so the document cannot drift from what is sent.

export type Variant = 'A' | 'B';

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const nstr = { type: ['string', 'null'] } as const;
const nnum = { type: ['number', 'null'] } as const;

/** event_title: only on futures and event markets (whose home_team and away_team are ''), never required */
const game = { sport_key: str, home_team: str, away_team: str, commence_time: str, event_title: str } as const;
const quoteA = {
  ...game, match_id: str, market: str, point: nnum, player: nstr, side: str, book: str,
} as const;
const quoteB = {
  ...game, event_id: str, market: str, point: nnum, player: nstr, outcome: str, book: str,
} as const;
const evFields = {
  price: num, price_american: int, effective_price: num, fair_prob_pct: num, fair_price: num, edge_pct: num,
  sharp_book: str, devig: str,
} as const;
const obj = (properties: Record<string, object>, required?: string[]) =>
  ({ type: 'object', required: required ?? Object.keys(properties).filter((k) => k !== 'event_title'), properties }) as const;

export interface EventTypeDef {
  variant: Variant;
  fires: string;
  data: object;
}

export const EVENT_TYPES: Readonly<Record<string, EventTypeDef>> = Object.freeze({
  arb_flagged: {
    variant: 'A',
    fires: 'a new arbitrage on a pregame event, any market: the best fresh prices of a line\'s outcomes across books have implied probabilities summing below 1',
    data: obj({
      sport_key: str, match_id: str, home_team: str, away_team: str, event_title: str, market: str, edge_pct: num,
      legs: { type: 'array', items: obj({ book: str, side: str, price: num, effective_price: num }) },
    }),
  },
  live_arb: {
    variant: 'A',
    fires: 'the same as arb_flagged on an event already in play; data as arb_flagged',
    data: obj({
      sport_key: str, match_id: str, home_team: str, away_team: str, event_title: str, market: str, edge_pct: num,
      legs: { type: 'array', items: obj({ book: str, side: str, price: num, effective_price: num }) },
    }),
  },
  ev_alert: {
    variant: 'A',
    fires: 'a soft book\'s fresh price enters the +EV set against a sharp book\'s no-vig line (multiplicative de-vig) with edge at or above 2 %',
    data: obj({ ...quoteA, ...evFields }),
  },
  line_move: {
    variant: 'A',
    fires: 'a book moves a line at least 0.5 points (kind points) or a price at least 5 American cents (kind price) away from the last value reported',
    data: obj({
      ...quoteA, kind: { type: 'string', enum: ['points', 'price'] },
      from: obj({ point: nnum, price: num, price_american: int }), to: obj({ point: nnum, price: num, price_american: int }),
      move_points: num, move_cents: num,
    }),
  },
  odds_drop: {
    variant: 'A',
    fires: 'a decimal price more than 10 % below the mean of the same quote\'s prices over the previous 5 minutes',
    data: obj({ ...quoteA, price: num, average_price: num, drop_pct: num, window_s: int }),
  },
  new_event: {
    variant: 'A',
    fires: 'the first price of an event not seen before (once per event and subscription, across restarts)',
    data: obj({ ...game, match_id: str }),
  },
  test: {
    variant: 'A',
    fires: 'POST /v1/webhooks/{webhook_id}/test (either variant)',
    data: obj({ message: str, webhook_id: { type: ['integer', 'string'] } }),
  },
  'arbitrage.opened': {
    variant: 'B',
    fires: 'a new cross-book moneyline arbitrage (h2h or h2h_3_way, at least two books) with edge at or above filters.min_edge_pct (default 0)',
    data: obj({
      ...game, arb_id: str, event_id: str, market: str, edge_pct: num, implied_sum: num, is_live: bool, detected_at: str,
      legs: { type: 'array', items: obj({ book: str, outcome: str, price: num, effective_price: num, stake_pct: num }) },
    }),
  },
  'arbitrage.closed': {
    variant: 'B',
    fires: 'an arbitrage announced by arbitrage.opened closes (reason prices: a leg moved, went stale or left; service_stopped: a node alone shut down, its prices do not outlive it)',
    data: obj({ ...game, arb_id: str, event_id: str, market: str, edge_pct_at_open: num, opened_at: str, closed_at: str, duration_s: num, reason: str }),
  },
  'ev.flagged': {
    variant: 'B',
    fires: 'as ev_alert, with edge at or above filters.min_edge_pct (default 2)',
    data: obj({ ...quoteB, ...evFields }),
  },
  'line_move.steam': {
    variant: 'B',
    fires: 'at least 3 books move the price of the same outcome in the same direction within 10 seconds',
    data: obj({
      ...game, event_id: str, market: str, point: nnum, player: nstr, outcome: str,
      direction: { type: 'string', enum: ['shortening', 'drifting'] }, window_s: int,
      books: { type: 'array', items: obj({ book: str, from: num, to: num, at: str }) },
    }),
  },
  'source_quality.breach': {
    variant: 'B',
    fires: 'a book that was ok (newest write within tight_s) reaches breach (older than slack_s) or stale (older than stale_s); thresholds of GET /v1/meta/per-book-sla',
    data: obj({
      book: str, title: str, sla_class: str, from: str, to: str, age_s: num,
      thresholds: obj({ tight_s: num, slack_s: num, stale_s: num }),
    }),
  },
  'source_quality.recovery': {
    variant: 'B',
    fires: 'a book announced by source_quality.breach is ok again',
    data: obj({
      book: str, title: str, sla_class: str, from: str, to: str, age_s: num, breached_for_s: num,
      thresholds: obj({ tight_s: num, slack_s: num, stale_s: num }),
    }),
  },
  'parser.degraded': {
    variant: 'B',
    fires: 'over the last 60 s more than 10 % of a feed\'s price items were rejected (at least 20 items); re-armed once the rate is below 5 %',
    data: obj({ feed: str, window_s: int, observations: int, rejected: int, rejected_pct: num, threshold_pct: num }),
  },
});

export function typesOf(variant: Variant): string[] {
  return Object.keys(EVENT_TYPES).filter((k) => EVENT_TYPES[k].variant === variant && k !== 'test');
}

/** Types a subscription may name (test is sent on request, not subscribed to). */
export function isEventType(variant: Variant, type: string): boolean {
  return Object.prototype.hasOwnProperty.call(EVENT_TYPES, type) && EVENT_TYPES[type].variant === variant && type !== 'test';
}

export interface TierLimit {
  hooks: number;
  perMinute: number;
}

/** DESIGN.md section 3; tiers absent here (free, starter) get 403 TIER_REQUIRED. */
export const WEBHOOK_TIERS: Readonly<Record<string, TierLimit>> = Object.freeze({
  pro: { hooks: 5, perMinute: 60 },
  business: { hooks: 25, perMinute: 300 },
  scale: { hooks: 50, perMinute: 1000 },
  enterprise: { hooks: 100, perMinute: 5000 },
});

export const CREDITS_PER_DELIVERY = 5;
/** how delivered events are listed in an account's usage (GET /v1/usage?by_endpoint=true) */
export const WEBHOOK_DELIVERY_LABEL = 'webhook delivery';
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = Object.freeze([30_000, 300_000]);
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** consecutive total failures that deactivate a subscription */
export const DISABLE_AFTER = 5;
/** POST .../test and .../replay sends per subscription in any rate window (a minute): a test costs nothing, and
 *  without a bound any pro key had the service send unbounded POSTs to its URL (the webhook audit); a replay may
 *  re-send a minute's worth of rate_limited deliveries */
export const SYNC_LIMITS = Object.freeze({ test: 10, replay: 60 });
/** Events past a subscription's per-minute rate wait for a later minute, at most this many minutes ahead. */
export const DEFER_MINUTES = 5;
export const EV_ALERT_MIN_EDGE = 2;
export const FORMATS = ['json', 'slack', 'discord'] as const;
export type Format = (typeof FORMATS)[number];
export const USER_AGENT = 'linewire-webhooks/1.0';
export const META_VERSION = '0.1';

/** What a subscription receives, compiled once per subscription. */
export interface SubscriptionFilter {
  variant: Variant;
  events: ReadonlySet<string>;
  /** null: every sport */
  sports: ReadonlySet<string> | null;
  /** Variant B filters.min_edge_pct; null: the type's default */
  minEdge: number | null;
}

/** Whether an arbitrage.opened event reaches a subscription's filters (its sport, its min_edge_pct), whichever of the
 *  arbitrage types it subscribes to: the subscriptions it reaches are the ones told of the arbitrage, and only they
 *  get its arbitrage.closed (workers/webhook-service.ts). */
export function arbReaches(f: SubscriptionFilter, ev: { sport: string | null; edge: number }): boolean {
  if (f.sports !== null && ev.sport !== null && !f.sports.has(ev.sport)) return false;
  return ev.edge >= (f.minEdge ?? 0);
}

/** Whether an event goes to a subscription: its variant's type, subscribed, its sport (events without a sport
 *  pass sport filters), and its edge against the threshold of the type. An arbitrage.closed goes by another rule:
 *  to the subscriptions its opening reached (arbReaches). */
export function matches(f: SubscriptionFilter, ev: { type: string; sport: string | null; edge: number; floor?: number }): boolean {
  if (!f.events.has(ev.type)) return false;
  if (f.sports !== null && ev.sport !== null && !f.sports.has(ev.sport)) return false;
  // an arbitrage or a +EV row announced again as it grew (floor: the edge announced before) goes only to those it
  // did not reach then
  const reached = (min: number) => ev.edge >= min && !(ev.floor !== undefined && ev.floor >= min);
  switch (ev.type) {
    case 'ev_alert':
      return reached(EV_ALERT_MIN_EDGE);
    case 'ev.flagged':
      return reached(f.minEdge ?? EV_ALERT_MIN_EDGE);
    case 'arbitrage.opened':
      return reached(f.minEdge ?? 0);
    default:
      return true;
  }
}
