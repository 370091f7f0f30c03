// Validation and normalisation of ingest items (DESIGN.md section 5). Pure: the caller passes the clock and the
// known events. Each bad item is rejected on its own with a catalogue code and a reason.

import { BOOKMAKERS, MARKETS, OUTRIGHTS, sportByKey } from './catalogue.js';
import { ERRORS, type ErrorCode } from './errors.js';
import { MAX_POINT } from './price-store.js';
import { MAX_PRICE } from './odds.js';
import type { EventStatus, MarketDef, PitcherRef, ProbablePitchers, SportDef } from './types.js';

export const BOOK_INDEX: ReadonlyMap<string, number> = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));
export const MARKET_INDEX: ReadonlyMap<string, number> = new Map(MARKETS.map((m, i) => [m.key, i]));
const H2H_3_WAY = MARKET_INDEX.get('h2h_3_way')!;
const SPREADS = MARKET_INDEX.get('spreads')!;
export const OUTRIGHT_MARKET = MARKET_INDEX.get(OUTRIGHTS)!;

/** Outcome slots per shape (see records.ts); an outright selection's Yes and No take the over/under slots. */
export const SLOT = { HOME: 0, AWAY: 1, DRAW: 2, OVER: 0, UNDER: 1, YES: 0, NO: 1 } as const;

/**
 * What an event is. `game`: a match between a home and an away team (the default). `futures`: a season-long
 * market without teams (a championship, an award, a season total), open until the season ends. `event_market`:
 * one contest or question without a single home and away team (a tournament or race winner, a prediction-market
 * question). Futures and event markets carry a `title` instead of teams, and hold outrights and player props,
 * never game lines; `/props` serves them only when asked (`include_futures`, `include_event_markets`).
 */
export type EventKind = 'game' | 'futures' | 'event_market';
const KINDS: ReadonlySet<string> = new Set(['game', 'futures', 'event_market']);

/** the last epoch millisecond a JavaScript Date holds (beyond it toISOString throws) */
const MAX_DATE_MS = 8.64e15;
/** Event start times and observation times are taken from 2000-01-01 to 2100-01-01 (UTC): outside it a value is a
 *  feed's mistake (epoch seconds read as milliseconds land in January 1970) and would be served as a date no one
 *  can use. */
export const EARLIEST_TIME_MS = Date.UTC(2000, 0, 1);
export const LATEST_TIME_MS = Date.UTC(2100, 0, 1);

/** How far in the future a `ts` may be (clock skew between a feed and this server). */
export const MAX_FUTURE_SKEW_MS = 60_000;
const MAX_NAME = 200;
const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface Rejection {
  error_code: ErrorCode;
  message: string;
}

export interface EventRecord {
  id: string;
  sport: SportDef;
  commence: number;
  /** parseEvent always sets it; absent means a game (records built by hand, as in bench/) */
  kind?: EventKind;
  /** '' on futures and event markets */
  home: string;
  away: string;
  /** the name of a futures or event-market event ("NBA Championship 2026-27"); null or absent on games */
  title?: string | null;
  status: EventStatus;
  pitchers: ProbablePitchers | null;
}

export interface PriceRecord {
  book: number;
  market: number;
  /** line point (home side for spreads), NaN when the market has none */
  point: number;
  player: string | null;
  outcome: number;
  price: number;
  ts: number;
}

function reject(code: ErrorCode, message?: string): Rejection {
  return { error_code: code, message: message ?? ERRORS[code].message };
}

export function isRejection(x: unknown): x is Rejection {
  return typeof x === 'object' && x !== null && 'error_code' in x;
}

/** A name (team, player, title): blanks collapsed; null when empty, too long, holding a control character (a NUL in
 *  a team's name was stored, then failed every closing-line write of the events after it: PostgreSQL text holds
 *  no NUL) or a lone UTF-16 surrogate (JSON's "\ud800": no character, which PostgreSQL refuses as well, and the
 *  history writer dropped the event's whole closing set with it) */
function text(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const s = v.trim().replace(/\s+/g, ' ');
  return s.length > 0 && s.length <= MAX_NAME && !/[\u0000-\u001f\u007f]/.test(s) && wellFormed(s) ? s : null;
}

/** no lone surrogate (String.prototype.isWellFormed, in Node 20's V8 but not in the ES2023 library types) */
function wellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}

/** ISO 8601 with a zone, or epoch milliseconds (a time a Date can hold). NaN when neither. */
export function parseTime(v: unknown): number {
  if (typeof v === 'number') return Number.isInteger(v) && v > 0 && v <= MAX_DATE_MS ? v : Number.NaN;
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(v)) return Number.NaN;
  // Date.parse rolls impossible days forward (2026-02-30 becomes March 2): refuse them instead
  const [y, m, d] = [Number(v.slice(0, 4)), Number(v.slice(5, 7)), Number(v.slice(8, 10))];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (m < 1 || m > 12 || day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return Number.NaN;
  return Date.parse(v);
}

const STATUSES: ReadonlySet<string> = new Set(['upcoming', 'live', 'final']);
const PERSON_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

function pitcher(v: unknown): PitcherRef | null | undefined {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'object' || Array.isArray(v)) return undefined;
  const p = v as Record<string, unknown>;
  const name = text(p.name);
  if (name === null || typeof p.person_id !== 'string' || !PERSON_ID.test(p.person_id)) return undefined;
  return { name, person_id: p.person_id };
}

/** undefined when malformed */
function parsePitchers(v: unknown): ProbablePitchers | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const p = v as Record<string, unknown>;
  const home = pitcher(p.home);
  const away = pitcher(p.away);
  const venue = p.venue === undefined || p.venue === null ? null : text(p.venue);
  const status = p.game_status === undefined || p.game_status === null ? null : text(p.game_status);
  if (home === undefined || away === undefined || venue === null && p.venue != null || status === null && p.game_status != null) return undefined;
  return { home, away, venue, game_status: status };
}

export function parseEvent(raw: unknown, now: number, known?: EventRecord): EventRecord | Rejection {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return reject('INVALID_ITEM');
  const e = raw as Record<string, unknown>;
  if (typeof e.id !== 'string' || !EVENT_ID.test(e.id)) {
    return reject('INVALID_EVENT', 'id must be 1 to 128 characters of letters, digits, _ . : -');
  }
  if (typeof e.sport_key !== 'string') return reject('INVALID_EVENT', 'sport_key is required');
  const sport = sportByKey(e.sport_key);
  if (sport === undefined) return reject('UNKNOWN_SPORT', `unknown sport_key ${JSON.stringify(e.sport_key)}`);
  if (known !== undefined && known.sport.key !== sport.key) {
    return reject('INVALID_EVENT', `event ${e.id} belongs to ${known.sport.key}; sport_key cannot change`);
  }
  // kept to the second, as it is served (v4's commence_time has seconds): a fraction would hide the event from the
  // filters on the second it is shown with (date=, commenceTimeTo=)
  const commence = Math.floor(parseTime(e.commence_time) / 1000) * 1000;
  if (Number.isNaN(commence)) {
    return reject('INVALID_EVENT', 'commence_time must be ISO 8601 with a zone, or epoch milliseconds');
  }
  if (commence < EARLIEST_TIME_MS || commence >= LATEST_TIME_MS) {
    return reject('INVALID_EVENT', `commence_time must fall in 2000 to 2099 (epoch milliseconds, not seconds): ${String(e.commence_time)}`);
  }
  // omitted: the known event's kind (an update need not repeat it), else a game
  let kind: EventKind = known?.kind ?? 'game';
  if (e.kind !== undefined && e.kind !== null) {
    if (typeof e.kind !== 'string' || !KINDS.has(e.kind)) return reject('INVALID_EVENT', 'kind must be game, futures or event_market');
    kind = e.kind as EventKind;
  }
  if (known !== undefined && (known.kind ?? 'game') !== kind) {
    return reject('INVALID_EVENT', `event ${e.id} is a ${known.kind ?? 'game'} event; kind cannot change`);
  }
  let home = '';
  let away = '';
  let title: string | null = null;
  if (kind === 'game') {
    const h = text(e.home_team);
    const a = text(e.away_team);
    if (h === null || a === null) return reject('INVALID_EVENT', `home_team and away_team must be 1 to ${MAX_NAME} characters, without control characters`);
    if (h.toLowerCase() === a.toLowerCase()) return reject('INVALID_EVENT', 'home_team and away_team must differ');
    // the quotes are held by side (home, away; a spread's sign with them): a team moving to the other side would
    // carry the other team's prices. A rename of a side stays allowed.
    if (known !== undefined && (known.kind ?? 'game') === 'game'
      && (h.toLowerCase() === known.away.toLowerCase() || a.toLowerCase() === known.home.toLowerCase())) {
      return reject('INVALID_EVENT', `event ${e.id} has ${known.home} at home and ${known.away} away; the teams cannot change sides `
        + '(its quotes are held by side): send it with status final and create the game under a new id');
    }
    if (e.title !== undefined && e.title !== null) {
      return reject('INVALID_EVENT', 'title is for futures and event_market events; a game is named by its teams');
    }
    home = h;
    away = a;
  } else {
    if (e.home_team != null || e.away_team != null) {
      return reject('INVALID_EVENT', `a ${kind} event has no home_team or away_team; name it with title`);
    }
    title = text(e.title);
    if (title === null) return reject('INVALID_EVENT', `a ${kind} event needs a title of 1 to ${MAX_NAME} characters, without control characters`);
  }
  let status: EventStatus;
  if (e.status === undefined || e.status === null) status = commence <= now ? 'live' : 'upcoming';
  else if (typeof e.status === 'string' && STATUSES.has(e.status)) status = e.status as EventStatus;
  else return reject('INVALID_EVENT', 'status must be upcoming, live or final');
  let pitchers = known?.pitchers ?? null;
  if (e.probable_pitchers !== undefined && e.probable_pitchers !== null) {
    if (sport.family !== 'baseball' || kind !== 'game') return reject('INVALID_EVENT', 'probable_pitchers is for baseball games only');
    const parsed = parsePitchers(e.probable_pitchers);
    if (parsed === undefined) {
      return reject('INVALID_EVENT', 'probable_pitchers must be {home, away: {name, person_id} or null, venue, game_status}');
    }
    pitchers = parsed;
  }
  return { id: e.id, sport, commence, kind, home, away, title, status, pitchers };
}

function isQuarter(p: number): boolean {
  return Number.isFinite(p) && Math.abs(p) <= MAX_POINT && Number.isInteger(p * 4);
}

/** Resolves the market, honouring that a three-way sport's moneyline is `h2h_3_way`, that game lines need teams
 *  and that outrights belong to events without them. */
function resolveMarket(key: string, ev: EventRecord): number | Rejection {
  const sport = ev.sport;
  let idx = MARKET_INDEX.get(key);
  if (idx === undefined) return reject('UNKNOWN_MARKET', `unknown market ${JSON.stringify(key)}`);
  const kind = ev.kind ?? 'game';
  if (MARKETS[idx].kind === 'game' && kind !== 'game') {
    return reject('MARKET_NOT_OFFERED', `${key} needs a home and an away team; ${ev.id} is a ${kind} event (use ${OUTRIGHTS})`);
  }
  if (idx === OUTRIGHT_MARKET && kind === 'game') {
    return reject('MARKET_NOT_OFFERED', `${OUTRIGHTS} are held on futures and event_market events; ${ev.id} is a game`);
  }
  if (key === 'h2h' && sport.three_way) idx = H2H_3_WAY;
  const m = MARKETS[idx];
  if (m.key === 'h2h_3_way' && !sport.three_way) {
    return reject('MARKET_NOT_OFFERED', `h2h_3_way is not offered for ${sport.key} (two-way moneyline)`);
  }
  if (m.kind === 'prop' && !m.families.includes(sport.family)) {
    return reject('MARKET_NOT_OFFERED', `${m.key} does not apply to ${sport.key}`);
  }
  return idx;
}

/** The wire name of outcome slot `o` of a market on an event: a team or Draw, Over or Under, and Yes or No on
 *  outrights (whose selection is the line's player). */
export function outcomeLabel(ev: { home: string; away: string }, market: number, o: number): string {
  if (market === OUTRIGHT_MARKET) return o === SLOT.YES ? 'Yes' : 'No';
  if (MARKETS[market].shape === 'over_under') return o === SLOT.OVER ? 'Over' : 'Under';
  return o === SLOT.HOME ? ev.home : o === SLOT.AWAY ? ev.away : 'Draw';
}

function outcomeSlot(m: MarketDef, name: string, ev: EventRecord): number {
  const n = name.toLowerCase();
  if (m.shape === 'over_under') return n === 'over' ? SLOT.OVER : n === 'under' ? SLOT.UNDER : -1;
  if (n === ev.home.toLowerCase()) return SLOT.HOME;
  if (n === ev.away.toLowerCase()) return SLOT.AWAY;
  if (m.shape === 'three_way' && n === 'draw') return SLOT.DRAW;
  return -1;
}

export function parsePrice(raw: unknown, events: (id: string) => EventRecord | undefined, now: number): PriceRecord | Rejection {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return reject('INVALID_ITEM');
  const p = raw as Record<string, unknown>;
  if (typeof p.book !== 'string') return reject('UNKNOWN_BOOK', 'book is required');
  const book = BOOK_INDEX.get(p.book);
  if (book === undefined) return reject('UNKNOWN_BOOK', `unknown book ${JSON.stringify(p.book)}`);
  const bdef = BOOKMAKERS[book];
  if (bdef.status !== 'active') {
    return reject('INACTIVE_BOOK', `${bdef.key} is ${bdef.status}${bdef.merged_into ? ` into ${bdef.merged_into}` : ''}`);
  }
  if (typeof p.event_id !== 'string') return reject('EVENT_NOT_FOUND', 'event_id is required');
  const ev = events(p.event_id);
  if (ev === undefined) return reject('EVENT_NOT_FOUND', `unknown event_id ${JSON.stringify(p.event_id)}: send it in events first`);
  if (ev.status === 'final') return reject('INVALID_EVENT', `event ${ev.id} is final`);
  if (typeof p.market !== 'string') return reject('UNKNOWN_MARKET', 'market is required');
  const market = resolveMarket(p.market, ev);
  if (isRejection(market)) return market;
  const m = MARKETS[market];
  // a DFS board offers player props only: a game line sent for one was served by /odds at its per-entry payout
  if (bdef.kind === 'dfs' && m.kind !== 'prop') return reject('MARKET_NOT_OFFERED', `${bdef.key} is a DFS pick'em board: it offers player props only`);
  if (p.price === null) return parseWithdrawal(p, market, book, now);
  if (typeof p.outcome !== 'string') return reject('INVALID_OUTCOME', 'outcome is required');
  if (market === OUTRIGHT_MARKET) return parseOutright(p, market, book, now);
  // the same folding as team names got in parseEvent, so an outcome sent exactly as the event's team matches
  const outcome = outcomeSlot(m, p.outcome.trim().replace(/\s+/g, ' '), ev);
  if (outcome < 0) {
    const want = m.shape === 'over_under' ? 'Over or Under' : `${ev.home}, ${ev.away}${m.shape === 'three_way' ? ' or Draw' : ''}`;
    return reject('INVALID_OUTCOME', `outcome ${JSON.stringify(p.outcome)} is not one of ${want}`);
  }
  const hasPoint = p.point !== undefined && p.point !== null;
  let point = Number.NaN;
  if (m.key === 'h2h' || m.key === 'h2h_3_way') {
    if (hasPoint) return reject('INVALID_POINT', `${m.key} takes no point`);
  } else {
    if (!hasPoint || typeof p.point !== 'number' || !isQuarter(p.point)) {
      return reject('INVALID_POINT', `${m.key} needs a point: a multiple of 0.25 within ±${MAX_POINT}`);
    }
    point = market === SPREADS && outcome === SLOT.AWAY ? -p.point : p.point;
    if (point === 0) point = 0; // no -0 in keys
  }
  let player: string | null = null;
  const hasPlayer = p.player !== undefined && p.player !== null;
  if (m.kind === 'prop') {
    player = text(p.player);
    if (player === null) return reject('INVALID_PLAYER', `${m.key} needs a player name of 1 to ${MAX_NAME} characters, without control characters`);
  } else if (hasPlayer) {
    return reject('INVALID_PLAYER', `${m.key} takes no player`);
  }
  const price = parsePriceValue(p.price);
  if (isRejection(price)) return price;
  const ts = parseTs(p.ts, now);
  if (isRejection(ts)) return ts;
  return { book, market, point, player, outcome, price, ts };
}

/**
 * A withdrawal: `price: null` says the book no longer offers the market (for a prop, the player's; for an outright,
 * the selection named by `player` or `outcome`) on the event: its quotes there leave the store, whatever their point
 * or outcome (a feed's complete snapshot without them; the connector audit found a pulled line served, and in an
 * arbitrage, until the event ended). `price` 0 in the observation (PriceStore.withdraw); `ts` as for a price: a
 * quote the book sent after it stays.
 */
function parseWithdrawal(p: Record<string, unknown>, market: number, book: number, now: number): PriceRecord | Rejection {
  const m = MARKETS[market];
  let player: string | null = null;
  if (market === OUTRIGHT_MARKET) {
    player = text(p.player ?? p.outcome);
    if (player === null) return reject('INVALID_PLAYER', `a withdrawal of ${OUTRIGHTS} names the selection (player, or outcome)`);
  } else if (m.kind === 'prop') {
    player = text(p.player);
    if (player === null) return reject('INVALID_PLAYER', `${m.key} needs a player name of 1 to ${MAX_NAME} characters, without control characters`);
  } else if (p.player !== undefined && p.player !== null) {
    return reject('INVALID_PLAYER', `${m.key} takes no player`);
  }
  const ts = parseTs(p.ts, now);
  if (isRejection(ts)) return ts;
  return { book, market, point: Number.NaN, player, outcome: 0, price: 0, ts };
}

function parsePriceValue(price: unknown): number | Rejection {
  if (typeof price !== 'number' || !(price > 1) || !(price <= MAX_PRICE)) {
    return reject('INVALID_PRICE', `price must be decimal odds above 1 (and at most ${MAX_PRICE}), or null to withdraw the book's market`);
  }
  return price;
}

function parseTs(ts: unknown, now: number): number | Rejection {
  if (ts === undefined || ts === null) return now;
  if (typeof ts !== 'number' || !Number.isInteger(ts)) return reject('INVALID_TIMESTAMP', 'ts must be an integer: epoch milliseconds');
  if (ts < EARLIEST_TIME_MS) {
    return reject('INVALID_TIMESTAMP', `ts ${ts} is before 2000-01-01: ts is epoch milliseconds, not seconds`);
  }
  if (ts > now + MAX_FUTURE_SKEW_MS) return reject('INVALID_TIMESTAMP', `ts is more than ${MAX_FUTURE_SKEW_MS / 1000} s in the future`);
  // within the skew allowance a ts ahead of this clock is taken as now: kept as sent, a quote stamped 50 s ahead
  // would be served with a last_update in the future and would make every real-time update of the next 50 s
  // "older" than it, so ignored
  return Math.min(ts, now);
}

/**
 * An outright price, in either form: The Odds API's, the selection as `outcome` (its price is the Yes side:
 * the selection wins), or the contract form, the selection as `player` with `outcome` "Yes" or "No" (a
 * prediction market's two contracts on it). No point. The selection is interned like a player name, so two
 * books' spellings of one selection meet on one line.
 */
function parseOutright(p: Record<string, unknown>, market: number, book: number, now: number): PriceRecord | Rejection {
  if (p.point !== undefined && p.point !== null) return reject('INVALID_POINT', `${OUTRIGHTS} take no point`);
  const name = text(p.outcome);
  if (name === null) return reject('INVALID_OUTCOME', `outcome must be 1 to ${MAX_NAME} characters, without control characters`);
  const side = name.toLowerCase();
  let player: string | null;
  let outcome: number;
  if (p.player !== undefined && p.player !== null) {
    player = text(p.player);
    if (player === null) return reject('INVALID_PLAYER', `player (the selection) must be 1 to ${MAX_NAME} characters, without control characters`);
    if (side !== 'yes' && side !== 'no') {
      return reject('INVALID_OUTCOME', `with player (the selection) given, outcome must be Yes or No, not ${JSON.stringify(p.outcome)}`);
    }
    outcome = side === 'yes' ? SLOT.YES : SLOT.NO;
  } else {
    if (side === 'yes' || side === 'no') {
      return reject('INVALID_OUTCOME', `outcome ${JSON.stringify(p.outcome)} names no selection: send the selection as outcome, or as player with outcome Yes or No`);
    }
    player = name;
    outcome = SLOT.YES;
  }
  const price = parsePriceValue(p.price);
  if (isRejection(price)) return price;
  const ts = parseTs(p.ts, now);
  if (isRejection(ts)) return ts;
  return { book, market, point: Number.NaN, player, outcome, price, ts };
}
