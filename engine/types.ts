// Shapes shared by every layer. Strings here are the wire form (ingest, REST); the store itself works on
// interned integer ids (see interner.ts).

export type Region = 'us' | 'us2' | 'uk' | 'eu' | 'fr' | 'au' | 'ca' | 'mx' | 'latam' | 'br' | 'asia';

export type BookKind = 'sportsbook' | 'exchange' | 'prediction' | 'dfs';
export type BookStatus = 'active' | 'merged' | 'decommissioned' | 'not_yet_integrated';
export type BookEndpoint = 'game_lines' | 'live' | 'props' | 'prediction' | 'event_markets' | 'historical';

export interface SportDef {
  key: string;
  group: string;
  title: string;
  description: string;
  active: boolean;
  has_outrights: boolean;
  /** true when the moneyline is three-way (soccer: home, draw, away) */
  three_way: boolean;
  /** family used to pick prop markets: 'basketball', 'baseball', 'americanfootball', 'icehockey', ... */
  family: string;
}

export interface UmbrellaDef {
  key: string;
  title: string;
  /** prefix of the child keys, e.g. 'soccer_' */
  prefix: string;
}

export interface BookDef {
  key: string;
  title: string;
  kind: BookKind;
  regions: Region[];
  status: BookStatus;
  merged_into?: string;
  note?: string;
  /** commission on net winnings, 0..1: an exchange's, or a prediction market's fee on profits (PredictIt); else 0 */
  commission: number;
  /** a prediction market's fee per contract bought, `rate * P * (1 - P)` of a $1 contract at price P (Kalshi's
   *  published taker fee); else 0 */
  trading_fee_rate: number;
  endpoints: BookEndpoint[];
  /** DFS pick'em: payout multiplier of a 2-leg entry (dfs only, else 0) */
  dfs_two_leg_payout: number;
}

export type OutcomeShape = 'two_way' | 'three_way' | 'over_under';

export interface MarketDef {
  key: string;
  label: string;
  kind: 'game' | 'prop';
  shape: OutcomeShape;
  /** sport families the market applies to (props); empty for game markets (all families) */
  families: string[];
}

export type EventStatus = 'upcoming' | 'live' | 'final';

export interface PitcherRef {
  name: string;
  /** canonical person id, stable across books and days */
  person_id: string;
}

/** Baseball only: the announced starting pitchers. */
export interface ProbablePitchers {
  home: PitcherRef | null;
  away: PitcherRef | null;
  venue: string | null;
  game_status: string | null;
}

/** An event as ingested. `commence_time` is ISO 8601 or epoch ms. */
export interface EventInput {
  id: string;
  sport_key: string;
  commence_time: string | number;
  /** a game's teams; absent on futures and event markets, which carry a title */
  home_team?: string;
  away_team?: string;
  /** game (default), futures or event_market (engine/ingest.ts EventKind) */
  kind?: 'game' | 'futures' | 'event_market';
  title?: string;
  status?: EventStatus;
  probable_pitchers?: ProbablePitchers;
}

/** One price observation as ingested (DESIGN.md section 5). */
export interface PriceInput {
  book: string;
  event_id: string;
  market: string;
  outcome: string;
  point?: number | null;
  player?: string | null;
  /** decimal odds > 1 */
  price: number;
  /** epoch ms; default now */
  ts?: number;
}

/** A withdrawal as ingested: the book no longer offers the market (for a prop, the player's; for an outright, the
 *  selection named by `player`) on the event, and its quotes there leave the store (engine/ingest.ts). */
export interface WithdrawalInput {
  book: string;
  event_id: string;
  market: string;
  player?: string | null;
  price: null;
  /** epoch ms; default now. A quote observed after it stays. */
  ts?: number;
}

export interface IngestBatch {
  events: EventInput[];
  prices: PriceInput[];
}
