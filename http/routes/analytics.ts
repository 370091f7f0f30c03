// GET /v1/sports/{sport_key}/arbitrage, /ev, /consensus, /middles (issue 3). Every row set is maintained
// inside the shards on each price update and held by the hub's AnalyticsView; a request filters and pages it.
// Only ages (age_seconds, from the read model's last_update of each leg) and the requester's exclusions are
// applied here. Consensus over a chosen subset of bookmakers is the one view computed per request, from the
// read model, since no maintained set can cover every subset.
// Every derived number (percents, stakes, effective and fair prices, nets) is served tidied to 12 significant digits
// (engine/odds.ts tidy) and compared with the request's thresholds as served: the rows' math runs on exact doubles.

import { PAGE_HEADERS } from '../openapi.js';
import { FIXED, MIDDLE_MARKET, SHARP_BOOK_IDS } from '../../engine/analytics.js';
import { consensusOdds } from '../../engine/analytics-rows.js';
import { edgePct, hasEdge, holdPct, isArbitrageSum, kelly, middle, profitPct } from '../../engine/analytics-math.js';
import { BOOKMAKERS, MARKETS, OUTRIGHTS, SPORTS, UMBRELLAS, resolveSportKeys } from '../../engine/catalogue.js';
import { DEVIG_METHODS } from '../../engine/devig.js';
import { MARKET_INDEX, SLOT, outcomeLabel } from '../../engine/ingest.js';
import { decimalToAmerican, tidy } from '../../engine/odds.js';
import type { EventView } from '../../engine/read-model.js';
import { ARB, CONS, EVQ, FAIR, MID } from '../../engine/records.js';
import { effectiveAt } from '../../engine/price-store.js';
import { STALE_MS } from '../../engine/sla.js';
import { invalid, type ParamSpec, type Params } from '../params.js';
import type { Reply, RequestCtx, Route } from '../router.js';
import { compile } from '../serialize.js';
import { isoMillis, isoSeconds, type Services } from '../services.js';
import { sportKeys } from './discovery.js';
import { activeBooks } from './odds.js';
import { cmp } from '../../engine/compare.js';
import { RowCache, joinRows, rowBytes } from '../row-cache.js';

const BOOK_KEYS = BOOKMAKERS.map((b) => b.key);
const BOOK_INDEX = new Map(BOOKMAKERS.map((b, i) => [b.key, i]));
const MARKET_KEYS = MARKETS.map((m) => m.key);
const SHARP_KEYS = SHARP_BOOK_IDS.map((id) => BOOKMAKERS[id].key);
const OUTRIGHT = MARKET_INDEX.get(OUTRIGHTS)!;
const SPREADS = MARKET_INDEX.get('spreads')!;
const IS_EXCHANGE = BOOKMAKERS.map((b) => b.kind === 'exchange');
const IS_PREDICTION = BOOKMAKERS.map((b) => b.kind === 'prediction');
const IS_DFS = BOOKMAKERS.map((b) => b.kind === 'dfs');
/** commission per book id, as the price store ranks its ladders: exchanges only */

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const nullableNum = { type: ['number', 'null'] } as const;
const eventFields = {
  // home_team and away_team are absent on futures and event markets, which carry event_title instead (SPEC)
  event_id: str, sport_key: str, commence_time: str, home_team: str, away_team: str, event_title: str,
  // per row, for a node running the simulator beside a real feed (FEED=sim,theoddsapi): the response's X-Data-Source
  // names both, and a client could not tell a simulated arbitrage from a real one
  simulated: { type: 'boolean', description: "true on the built-in simulator's events: simulated prices, no bookmaker's own" },
  market: str, point: nullableNum, player: nullableStr,
} as const;

export const ArbRowSchema = {
  type: 'object',
  properties: {
    ...eventFields,
    profit_pct: num, implied_sum: num, is_live: bool, is_exchange_anchored: bool, detected_at: str, age_seconds: num,
    legs: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          book: str, outcome: str, point: nullableNum, price: num, price_american: int, effective_price: num,
          stake_pct: num, stake: num,
        },
      },
    },
  },
} as const;

export const EvRowSchema = {
  type: 'object',
  properties: {
    ...eventFields,
    game_date: str, side: str, book: str, price: num, price_american: int, effective_price: num,
    book_implied_pct: num, fair_prob_pct: num, fair_price: num, edge_pct: num, kelly_fraction: num,
    sharp_book: str, devig: str, books_compared: int, is_live: bool, age_seconds: num,
  },
} as const;

export const ConsensusRowSchema = {
  type: 'object',
  properties: {
    ...eventFields,
    is_live: bool,
    hold_pct: { type: ['number', 'null'], description: '(sum of consensus_prob - 1) * 100; null on an outright selection quoted Yes alone (its outcomes hold Yes only)' },
    books: int,
    outcomes: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: str, point: nullableNum, consensus_prob: num, consensus_odds: num, best_price: num, best_book: str,
          worst_price: num, worst_book: str, books: int,
        },
      },
    },
  },
} as const;

const legSchema = { type: 'object', properties: { book: str, side: str, line: num, price: num, effective_price: num } } as const;

export const MiddleRowSchema = {
  type: 'object',
  properties: {
    event_id: str, sport_key: str, commence_time: str, home_team: str, away_team: str, event_title: str,
    simulated: eventFields.simulated, market: str, player: nullableStr,
    is_live: bool, books: int, over: legSchema, under: legSchema,
    window: { type: 'object', properties: { low: num, high: num, width: num } },
    hit_numbers: { type: 'array', items: num },
    push_numbers: { type: 'array', items: { type: 'object', properties: { number: num, net: num } } },
    profit_if_hit: { type: ['number', 'null'] }, net_if_below: num, net_if_above: num, break_even_hit_rate: { type: ['number', 'null'] },
  },
} as const;

const arbJson = compile({ type: 'array', items: ArbRowSchema });
const evJson = compile({ type: 'array', items: EvRowSchema });
const consRowJson = compile(ConsensusRowSchema);

/** a consensus row as served, and what /consensus sorts an event's rows by */
interface ConsensusItem {
  /** the row's JSON in UTF-8; empty for a line that serves no row */
  bytes: Buffer;
  market: number;
  player: number;
  point: number;
}
const midRowJson = compile(MiddleRowSchema);
/** what a record that serves no row keeps */
const NO_ROW = Buffer.alloc(0);

/** a middle's row as served, and what /middles sorts by */
interface MiddleItem {
  /** the row's JSON in UTF-8; empty for a record that serves no row */
  bytes: Buffer;
  width: number;
  breakEven: number | null;
  eventId: string;
  market: string;
  player: string | null;
  overLine: number;
  underLine: number;
}

/** SPEC Pagination bounds of offset */
const ARB_MAX_OFFSET = 10_000;
const EV_MAX_OFFSET = 2000;
/** the x-result-* headers of `page` (http/openapi.ts) */
const ANALYTICS_PAGE_HEADERS = [...PAGE_HEADERS, 'x-result-total-available'];

const pageParams = (dflt: number, max: number, maxOffset: number): ParamSpec[] => [
  { name: 'limit', type: 'integer', default: dflt, min: 1, max, description: `Rows per page (1 to ${max})` },
  { name: 'offset', type: 'integer', default: 0, min: 0, max: maxOffset, description: `Rows to skip (0 to ${maxOffset})` },
];

/** Whether an event is in play at `now`: started, and not a season-long future (which trades until it settles, its
 *  start long past, and is never in play: /live and /odds?live=true leave it out; /inplay/arbs listed its arbitrages
 *  and /arbitrage hid them without include_live) */
function inPlay(ev: EventView, now: number): boolean {
  return ev.kind !== 'futures' && ev.commence <= now;
}

/** One page of rows with the x-result-* headers of SPEC. x-next-offset is sent only when the next page can be asked
 *  for: past `maxOffset` (the offset parameter's bound) more rows exist, but only a larger limit reaches them. */
function page<T>(rows: T[], p: Params, json: (rows: T[]) => string | Buffer, maxOffset: number): Reply {
  const limit = p.limit as number;
  const offset = p.offset as number;
  const slice = rows.slice(offset, offset + limit);
  const more = offset + slice.length < rows.length;
  const headers: [string, string][] = [
    ['x-result-page-size', String(slice.length)],
    ['x-result-limit', String(limit)],
    ['x-result-offset', String(offset)],
    ['x-result-has-more', String(more)],
    ['x-result-total-available', String(rows.length)],
  ];
  if (more && offset + slice.length <= maxOffset) headers.push(['x-next-offset', String(offset + slice.length)]);
  return { status: 200, body: json(slice), headers };
}

/** /consensus and /middles: a page of rows serialised ahead (joinRows), at most ROWS_MAX_LIMIT (a market of many
 *  lines a game makes middles by the square of its lines: 319,403 rows, 279 MB in one 3-credit answer, in an audit) */
const ROWS_MAX_LIMIT = 10_000;
const ROWS_MAX_OFFSET = 10_000;

function outcomeName(ev: EventView, market: number, o: number): string {
  return outcomeLabel(ev, market, o);
}

/** The point as the outcome sees it: spreads' away side carries the negated home line. */
function outcomePoint(market: number, point: number, o: number): number | null {
  if (point !== point) return null;
  return market === SPREADS && o === SLOT.AWAY ? -point || 0 : point;
}

/** A quote age bound tighter than the books' stale thresholds (in play, a quote a minute old is seldom still
 *  there to take): `age_seconds` on every row says how old its oldest leg is, and this keeps the older ones out
 *  before paging. */
const MAX_AGE_PARAM: ParamSpec = {
  name: 'maxAgeSec', type: 'integer', min: 1, max: 3600,
  description: 'Only quotes at most this many seconds old count (each book\'s stale threshold still applies): on /arbitrage an older leg gives way to the next best quote, as an excluded book does; on /ev a row whose price or sharp line is older is left out',
};
/** ms of MAX_AGE_PARAM's bound; Infinity when not given */
function maxAgeMs(p: Params): number {
  return p.maxAgeSec === undefined ? Infinity : (p.maxAgeSec as number) * 1000;
}

/** The filters arbRows() applies, shared by /arbitrage and /v1/inplay/arbs. */
const arbFilterParams: ParamSpec[] = [
  { name: 'minProfit', type: 'number', default: 0, min: 0, description: 'Minimum profit percent (no upper bound: a crossed line on bad data can pay over 100 %)' },
  { name: 'exclude_exchanges', type: 'boolean', default: false, description: 'Take no leg from an exchange' },
  { name: 'exclude_books', type: 'csv', values: BOOK_KEYS, maxItems: 200, description: 'Book keys excluded from either side' },
  { name: 'markets', type: 'csv', values: MARKET_KEYS, maxItems: 100, description: 'Market keys' },
  MAX_AGE_PARAM,
];
const SPORT_KEYS = SPORTS.map((x) => x.key);
const SPORT_FILTER_KEYS = [...SPORT_KEYS, ...UMBRELLAS.map((u) => u.key)];

const H2H = MARKET_INDEX.get('h2h')!;
const H2H_3_WAY = MARKET_INDEX.get('h2h_3_way')!;

/** `h2h` asks for the moneyline, which a three-way sport stores as `h2h_3_way` (as ingest and /odds read it). */
function marketFilter(p: Params): Set<number> | null {
  if (p.markets === undefined) return null;
  const set = new Set((p.markets as string[]).map((k) => MARKET_INDEX.get(k)!));
  if (set.has(H2H)) set.add(H2H_3_WAY);
  return set;
}

export function analyticsRoutes(s: Services): Route[] {
  const hub = s.hub;
  const rm = hub.readModel;
  const view = hub.analytics;
  const midRows = new RowCache<MiddleItem>();
  /** consensus rows without and with the prediction markets' quotes */
  const consRows = new RowCache<ConsensusItem>();
  const consRowsWithPrediction = new RowCache<ConsensusItem>();

  /** Events of the requested sports, in commence order; started ones only with includeLive. */
  const events = (ctx: RequestCtx, includeLive: boolean): EventView[] => {
    const list: EventView[] = [];
    for (const key of sportKeys(ctx.args[0])) {
      for (const ev of rm.sportEvents(key)) {
        if (ev.status === 'final') continue;
        if (!includeLive && inPlay(ev, ctx.now)) continue;
        list.push(ev);
      }
    }
    return list.sort((a, b) => a.commence - b.commence || (a.id < b.id ? -1 : 1));
  };

  /** last_update of one book's quote on a line, from the read model (0 when gone) */
  const lastUpdate = (ev: EventView, market: number, player: number, point: number, book: number, o: number): number => {
    const r = rm.find(ev.idx, market, player, book);
    if (r < 0 || rm.price(r, o) === 0) return 0;
    const rp = rm.point(r);
    if (!(rp === point || (rp !== rp && point !== point))) return 0;
    return Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o));
  };
  /** The best fresh quote of one outcome of a line among the books `skip` leaves, from the read model, ranked as the
   *  store's ladders rank (effective price, then the earliest line change, then book id) into book/price/eff[o];
   *  book[o] stays -1 when there is none. For the arbitrages whose maintained alternatives are all excluded. */
  const bestQuote = (ev: EventView, market: number, player: number, point: number, o: number, skip: (book: number) => boolean,
    now: number, maxAge: number, book: Int32Array, price: Float64Array, eff: Float64Array): void => {
    let changed = Infinity;
    for (const r of ev.records) {
      if (rm.market(r) !== market || rm.player(r) !== player) continue;
      const rp = rm.point(r);
      if (!(rp === point || (rp !== rp && point !== point))) continue;
      const b = rm.book(r);
      const d = rm.price(r, o);
      // an inconsistent own moneyline pair counts nowhere (ReadModel.consistent), as in the shards
      if (d === 0 || IS_DFS[b] || skip(b) || !rm.consistent(r)) continue;
      const c = rm.changedAt(r, o);
      const lu = Math.max(c, rm.verifiedAt(r, o));
      // stale, or of a started game observed before the start (a pregame price: freshAt)
      if (now - lu > Math.min(STALE_MS[b], maxAge) || (lu < ev.commence && inPlay(ev, now))) continue;
      const e = effectiveAt(d, b);
      if (book[o] >= 0 && !(e > eff[o] || (e === eff[o] && (c < changed || (c === changed && b < book[o]))))) continue;
      book[o] = b;
      price[o] = d;
      eff[o] = e;
      changed = c;
    }
  };
  /** a book's quote on a line is there and not older than its book's stale threshold (nor `maxAge` ms) at `now` */
  const freshAt = (ev: EventView, market: number, player: number, point: number, book: number, o: number, now: number,
    maxAge: number): boolean => {
    const lu = lastUpdate(ev, market, player, point, book, o);
    // of a started game, a quote observed before the start is a pregame price: the shards drop it at the first tick
    // after the start (Hub.tick), the request in the second before
    return lu !== 0 && now - lu <= Math.min(STALE_MS[book], maxAge) && !(lu < ev.commence && inPlay(ev, now));
  };
  const playerName = (id: number): string | null => (id < 0 ? null : hub.players.name(id));
  // A row's event fields are written out in each row's literal: a literal opening with a spread of a head object
  // (`{ ...head(ev), market, ... }`) cost about 1 us per field after the spread on Node 20, 5 to 46 us a row, where
  // the literal costs 0.2 us; /ev spent about 5 ms a request on 160 rows. Games carry teams, futures and event
  // markets `event_title` (SPEC); a field left undefined is not serialised.
  const homeOf = (ev: EventView) => (ev.kind === 'game' ? ev.home : undefined);
  const awayOf = (ev: EventView) => (ev.kind === 'game' ? ev.away : undefined);
  const titleOf = (ev: EventView) => (ev.kind === 'game' ? undefined : ev.title ?? '');

  /** The open arbitrages of `list` (events) that the request's filters keep, best profit first. */
  const arbRows = (ctx: RequestCtx, list: readonly EventView[]) => {
    const p = ctx.params;
    const excluded = new Set(((p.exclude_books as string[] | undefined) ?? []).map((k) => BOOK_INDEX.get(k)!));
    const noExchanges = p.exclude_exchanges === true;
    const markets = marketFilter(p);
    const skip = (book: number) => excluded.has(book) || (noExchanges && IS_EXCHANGE[book]);
    const maxAge = maxAgeMs(p);
    const rows = [];
    const pickBook = new Int32Array(3);
    const pickPrice = new Float64Array(3);
    const pickEff = new Float64Array(3);
    for (const ev of list) {
      const a = view.event(ev.idx);
      if (a === undefined) continue;
      for (const rec of a.arbs.values()) {
        const market = rec[ARB.MARKET];
        if (markets !== null && !markets.has(market)) continue;
        const n = rec[ARB.N];
        let S = 0;
        for (let o = 0; o < n && S === S; o++) {
          pickBook[o] = -1;
          let k = 0;
          for (; k < ARB.ALTS; k++) {
            const leg = ARB.LEGS + (o * ARB.ALTS + k) * ARB.LSIZE;
            const book = rec[leg + ARB.BOOK];
            if (book < 0) break;
            if (skip(book)) continue;
            // the shard's timing wheel withdraws a quote within a tick (250 ms) of its stale threshold: at the threshold
            // itself the request leaves it out (issue 3: a stale quote never forms an arbitrage)
            if (!freshAt(ev, market, rec[ARB.PLAYER], rec[ARB.POINT], book, o, ctx.now, maxAge)) continue;
            pickBook[o] = book;
            pickPrice[o] = rec[leg + ARB.PRICE];
            pickEff[o] = rec[leg + ARB.EFF];
            break;
          }
          // all ARB.ALTS maintained alternatives excluded: the next fresh quote is only in the read model
          if (k === ARB.ALTS) bestQuote(ev, market, rec[ARB.PLAYER], rec[ARB.POINT], o, skip, ctx.now, maxAge, pickBook, pickPrice, pickEff);
          if (pickBook[o] < 0) S = Number.NaN;
          else S += 1 / pickEff[o];
        }
        if (!isArbitrageSum(S)) continue;
        const profit = profitPct(S);
        if (profit < (p.minProfit as number)) continue;
        const point = rec[ARB.POINT];
        const player = rec[ARB.PLAYER];
        let oldest = Infinity;
        let anchored = false;
        const legs = [];
        for (let o = 0; o < n; o++) {
          const book = pickBook[o];
          const eff = pickEff[o];
          const share = tidy((1 / eff / S) * 100);
          anchored ||= IS_EXCHANGE[book];
          oldest = Math.min(oldest, lastUpdate(ev, market, player, point, book, o) || ctx.now);
          legs.push({
            book: BOOKMAKERS[book].key, outcome: outcomeName(ev, market, o), point: outcomePoint(market, point, o),
            price: pickPrice[o], price_american: decimalToAmerican(pickPrice[o]), effective_price: tidy(eff),
            stake_pct: share, stake: share,
          });
        }
        rows.push({
          event_id: ev.id, sport_key: ev.sport, commence_time: isoSeconds(ev.commence), home_team: homeOf(ev), away_team: awayOf(ev), event_title: titleOf(ev), simulated: ev.source === 'sim',
          market: MARKETS[market].key, point: point !== point ? null : point, player: playerName(player),
          profit_pct: profit, implied_sum: tidy(S), is_live: inPlay(ev, ctx.now), is_exchange_anchored: anchored,
          detected_at: isoMillis(rec[ARB.DETECTED_AT]), age_seconds: Math.max(0, (ctx.now - oldest) / 1000), legs,
        });
      }
    }
    // ties in a fixed order, whatever the order the view holds its records in (it changes as arbitrages close and reopen)
    rows.sort((x, y) => y.profit_pct - x.profit_pct || cmp(x.event_id, y.event_id) || cmp(x.market, y.market)
      || cmp(x.player ?? '', y.player ?? '') || (x.point ?? 0) - (y.point ?? 0));
    return rows;
  };

  const arbitrage: Route = {
    method: 'GET',
    path: '/v1/sports/{sport_key}/arbitrage',
    auth: 'key',
    tag: 'analytics',
    summary: 'Open arbitrages (best fresh price per outcome across books), best profit first',
    params: [
      { name: 'include_live', type: 'boolean', default: false, description: 'Include games already started' },
      ...arbFilterParams,
      ...pageParams(10_000, 10_000, ARB_MAX_OFFSET),
    ],
    cost: () => 10,
    response: { type: 'array', items: ArbRowSchema },
    responseHeaders: ANALYTICS_PAGE_HEADERS,
    handle: (ctx) => hub.consistent(() => page(arbRows(ctx, events(ctx, ctx.params.include_live === true)), ctx.params, arbJson, ARB_MAX_OFFSET)),
  };

  /** GET /v1/inplay/arbs: the arbitrages of events in play across sports, the set /arbitrage serves with
   *  include_live for each sport, kept to started events as /live keeps them (within max_age_hours). */
  const inplay: Route = {
    method: 'GET',
    path: '/v1/inplay/arbs',
    auth: 'key',
    tag: 'analytics',
    summary: 'Open arbitrages on events in play (started within max_age_hours) across sports, best profit first',
    params: [
      { name: 'sports', type: 'csv', values: SPORT_FILTER_KEYS, maxItems: 100, description: 'Sport keys (umbrella keys such as soccer expand to their leagues); default every sport' },
      { name: 'max_age_hours', type: 'number', default: 6, min: 0.5, max: 24, description: 'Events started within this many hours (as /live)' },
      ...arbFilterParams,
      ...pageParams(10_000, 10_000, ARB_MAX_OFFSET),
    ],
    cost: () => 10,
    response: { type: 'array', items: ArbRowSchema },
    responseHeaders: ANALYTICS_PAGE_HEADERS,
    handle: (ctx) => hub.consistent(() => {
      const p = ctx.params;
      const keys = p.sports === undefined ? SPORT_KEYS : [...new Set((p.sports as string[]).flatMap((k) => resolveSportKeys(k)!))];
      const since = ctx.now - (p.max_age_hours as number) * 3_600_000;
      const list: EventView[] = [];
      for (const key of keys) {
        for (const e of rm.sportEvents(key)) if (e.status !== 'final' && inPlay(e, ctx.now) && e.commence >= since) list.push(e);
      }
      return page(arbRows(ctx, list), p, arbJson, ARB_MAX_OFFSET);
    }),
  };

  const ev: Route = {
    method: 'GET',
    path: '/v1/sports/{sport_key}/ev',
    auth: 'key',
    tag: 'analytics',
    summary: "+EV prices: soft books against a sharp book's no-vig line, best edge first",
    params: [
      { name: 'include_live', type: 'boolean', default: false, description: 'Include games already started' },
      { name: 'sharpBook', type: 'string', default: 'pinnacle', description: `Sharp reference book: one of ${SHARP_KEYS.join(', ')}` },
      { name: 'minEdge', alias: 'min_edge_pct', type: 'number', default: 2, min: 0, description: 'Minimum edge percent (alias min_edge_pct; both given must agree). No upper bound: a longshot can hold an edge over 100 %' },
      { name: 'markets', type: 'csv', values: MARKET_KEYS, maxItems: 100, description: 'Market keys' },
      { name: 'min_books', type: 'integer', min: 1, max: 50, description: 'Minimum books quoting the line' },
      { name: 'devig', type: 'enum', values: DEVIG_METHODS, default: 'multiplicative', description: 'De-vig method of the fair line' },
      MAX_AGE_PARAM,
      ...pageParams(200, 500, EV_MAX_OFFSET),
    ],
    cost: () => 10,
    response: { type: 'array', items: EvRowSchema },
    responseHeaders: ANALYTICS_PAGE_HEADERS,
    handle: (ctx) => hub.consistent(() => {
      const p = ctx.params;
      const sharpKey = p.sharpBook as string;
      const sharp = BOOK_INDEX.get(sharpKey);
      if (sharp === undefined) invalid('sharpBook', `unknown book ${sharpKey}`, sharpKey);
      if (!SHARP_BOOK_IDS.includes(sharp)) invalid('sharpBook', `${sharpKey} is not a sharp reference book; use one of ${SHARP_KEYS.join(', ')}`, sharpKey);
      const method = DEVIG_METHODS.indexOf(p.devig as (typeof DEVIG_METHODS)[number]);
      const minEdge = p.minEdge as number;
      const minBooks = (p.min_books as number | undefined) ?? 0;
      const maxAge = maxAgeMs(p);
      const markets = marketFilter(p);
      const d = view.evData();
      const cons = view.consData();
      const bit = 1 << SHARP_BOOK_IDS.indexOf(sharp);
      const rows = [];
      for (const e of events(ctx, p.include_live === true)) {
        const a = view.event(e.idx);
        if (a === undefined) continue;
        for (const r of a.ev.slots) {
          const off = r * EVQ.STRIDE;
          if ((d[off + EVQ.MASK] & bit) === 0) continue; // no positive edge against this sharp under any method
          const market = d[off + EVQ.MARKET];
          if (markets !== null && !markets.has(market)) continue;
          const point = d[off + EVQ.POINT];
          const player = d[off + EVQ.PLAYER];
          const o = d[off + EVQ.OUTCOME];
          // the sharp's current no-vig line (a quote's mask and its line arrive in the same batch)
          const f = view.fairOf(e.idx, market, point, player, sharp);
          if (f < 0) continue;
          if ((view.fairData()[f * FAIR.STRIDE + FAIR.VALID] & (1 << method)) === 0) continue; // no valid line by this method
          const fair = view.fairData()[f * FAIR.STRIDE + FAIR.P + method * 3 + o];
          const book = d[off + EVQ.BOOK];
          // the quote's price now (the record holds it as of its last mask change)
          const price = rm.quotePrice(e.idx, market, point, player, o, book);
          if (price === 0) continue;
          const eff = effectiveAt(price, book);
          if (!hasEdge(fair, eff)) continue; // no positive edge under this method
          const edge = edgePct(fair, eff);
          if (edge < minEdge) continue;
          const c = view.consOf(e.idx, market, point, player);
          // books compared: every book whose fresh quote counts on the line, prediction markets included
          const books = c < 0 ? 0 : cons[c * CONS.STRIDE + CONS.BOOKS] + cons[c * CONS.STRIDE + CONS.PBOOKS];
          if (books < minBooks) continue;
          // the price and the sharp's line as of now: a quote past its stale threshold leaves at once, not at the
          // shard's next tick of its timing wheel
          let oldest = lastUpdate(e, market, player, point, book, o) || ctx.now;
          let fresh = ctx.now - oldest <= STALE_MS[book];
          for (let so = 0; so < (MARKETS[market].shape === 'three_way' ? 3 : 2); so++) {
            const lu = lastUpdate(e, market, player, point, sharp, so) || ctx.now;
            oldest = Math.min(oldest, lu);
            fresh &&= ctx.now - lu <= STALE_MS[sharp];
          }
          // of a started game, the oldest leg observed before the start is a pregame price (freshAt)
          if (!fresh || (oldest < e.commence && inPlay(e, ctx.now)) || ctx.now - oldest > maxAge) continue;
          rows.push({
            event_id: e.id, sport_key: e.sport, commence_time: isoSeconds(e.commence), home_team: homeOf(e), away_team: awayOf(e), event_title: titleOf(e), simulated: e.source === 'sim',
            game_date: isoSeconds(e.commence).slice(0, 10),
            market: MARKETS[market].key, point: outcomePoint(market, point, o), player: playerName(player),
            side: outcomeName(e, market, o), book: BOOKMAKERS[book].key, price, price_american: decimalToAmerican(price),
            effective_price: tidy(eff), book_implied_pct: tidy(100 / eff), fair_prob_pct: tidy(fair * 100),
            fair_price: tidy(1 / fair), edge_pct: edge, kelly_fraction: tidy(kelly(fair, eff)),
            sharp_book: sharpKey, devig: p.devig as string, books_compared: books, is_live: inPlay(e, ctx.now),
            age_seconds: Math.max(0, (ctx.now - oldest) / 1000),
          });
        }
      }
      // ties in a fixed order, whatever the order the view holds its records in
      rows.sort((x, y) => y.edge_pct - x.edge_pct || cmp(x.event_id, y.event_id) || cmp(x.market, y.market)
        || cmp(x.player ?? '', y.player ?? '') || (x.point ?? 0) - (y.point ?? 0) || cmp(x.side, y.side) || cmp(x.book, y.book));
      return page(rows, p, evJson, EV_MAX_OFFSET);
    }),
  };

  const consensus: Route = {
    method: 'GET',
    path: '/v1/sports/{sport_key}/consensus',
    auth: 'key',
    tag: 'analytics',
    summary: 'Per line and outcome: mean implied probability across books, consensus odds, best and worst price, hold',
    params: [
      { name: 'include_prediction_markets', type: 'boolean', description: 'Mix prediction-market prices into the rollup. Default false; when omitted, true if bookmakers names a prediction-market book (as /props does for include_event_markets)' },
      { name: 'bookmakers', type: 'csv', values: BOOK_KEYS, maxItems: 200, description: 'Only these books (computed per request)' },
      { name: 'markets', type: 'csv', values: MARKET_KEYS, maxItems: 100, description: 'Market keys' },
      ...pageParams(ROWS_MAX_LIMIT, ROWS_MAX_LIMIT, ROWS_MAX_OFFSET),
    ],
    cost: () => 3,
    response: { type: 'array', items: ConsensusRowSchema },
    responseHeaders: ANALYTICS_PAGE_HEADERS,
    handle: (ctx) => hub.consistent(() => {
      const p = ctx.params;
      const markets = marketFilter(p);
      if (p.bookmakers !== undefined) activeBooks(p.bookmakers as string[]);
      const subset = p.bookmakers === undefined ? null : new Set((p.bookmakers as string[]).map((k) => BOOK_INDEX.get(k)!));
      // naming a prediction market asks for it, unless the request says otherwise
      const withPrediction = p.include_prediction_markets === undefined
        ? subset !== null && [...subset].some((b) => IS_PREDICTION[b])
        : p.include_prediction_markets === true;
      const rows: { bytes: Buffer }[] = [];
      for (const e of events(ctx, true)) {
        const live = inPlay(e, ctx.now);
        if (subset === null) {
          // a started game whose pregame quotes the shards have not dropped yet (the next tick does): its maintained
          // consensus still counts them, and a pregame price is not an in-play one
          if (live && !hub.inPlay(e, ctx.now)) continue;
          maintainedRows(e, withPrediction, markets, live, rows);
          continue;
        }
        for (const l of subsetLines(e, subset, withPrediction, ctx.now)) {
          if (markets !== null && !markets.has(l.market)) continue;
          const json = consensusJson(e, l, live);
          if (json !== '') rows.push({ bytes: Buffer.from(json) });
        }
      }
      return page(rows, p, joinRows, ROWS_MAX_OFFSET);
    }),
  };

  /** A line's consensus row, serialised; '' when an outcome has no counted quote (no row is served), but for an
   *  outright selection quoted Yes alone: sportsbooks offer a selection to win and nothing against it, so its row
   *  has the Yes outcome alone and no hold (hold_pct null: a lone side has no book to sum). */
  function consensusJson(e: EventView, l: LineAgg, live: boolean): string {
    const n = MARKETS[l.market].shape === 'three_way' ? 3 : 2;
    const outcomes = [];
    let hold = 0;
    let lone = false;
    for (let o = 0; o < n; o++) {
      const x = l.outcomes[o];
      if (x.cnt === 0 && l.market === OUTRIGHT && o === SLOT.NO && outcomes.length === 1) {
        lone = true;
        continue;
      }
      if (x.cnt === 0) return '';
      const prob = x.sum / x.cnt;
      hold += prob;
      outcomes.push({
        name: outcomeName(e, l.market, o), point: outcomePoint(l.market, l.point, o), consensus_prob: tidy(prob),
        consensus_odds: consensusOdds(prob), best_price: x.best, best_book: BOOKMAKERS[x.bestBook].key,
        worst_price: x.worst, worst_book: BOOKMAKERS[x.worstBook].key, books: x.cnt,
      });
    }
    return consRowJson({
      event_id: e.id, sport_key: e.sport, commence_time: isoSeconds(e.commence), home_team: homeOf(e), away_team: awayOf(e), event_title: titleOf(e), simulated: e.source === 'sim',
      market: MARKETS[l.market].key, point: l.point !== l.point ? null : l.point,
      player: playerName(l.player), is_live: live, hold_pct: lone ? null : holdPct(hold), books: l.books, outcomes,
    });
  }

  interface OutcomeAgg { sum: number; cnt: number; best: number; bestBook: number; worst: number; worstBook: number }
  interface LineAgg { market: number; point: number; player: number; books: number; outcomes: OutcomeAgg[] }
  const agg = (): OutcomeAgg => ({ sum: 0, cnt: 0, best: 0, bestBook: -1, worst: 0, worstBook: -1 });
  const addQuote = (x: OutcomeAgg, price: number, book: number) => {
    // in the shards' fixed point (FIXED), so a subset naming every book serves what the maintained consensus serves
    x.sum += Math.round(FIXED / price) / FIXED;
    x.cnt++;
    if (x.bestBook < 0 || price > x.best || (price === x.best && book < x.bestBook)) { x.best = price; x.bestBook = book; }
    if (x.worstBook < 0 || price < x.worst || (price === x.worst && book < x.worstBook)) { x.worst = price; x.worstBook = book; }
  };
  const merge = (x: OutcomeAgg, sum: number, cnt: number, best: number, bestBook: number, worst: number, worstBook: number) => {
    if (cnt === 0) return;
    x.sum += sum;
    x.cnt += cnt;
    if (x.bestBook < 0 || best > x.best || (best === x.best && bestBook < x.bestBook)) { x.best = best; x.bestBook = bestBook; }
    if (x.worstBook < 0 || worst < x.worst || (worst === x.worst && worstBook < x.worstBook)) { x.worst = worst; x.worstBook = worstBook; }
  };

  /** The rows of the shards' consensus records of an event's lines, in (market, player, point) order, onto `out`:
   *  made again only for the records that changed since they were last served (RowCache). */
  function maintainedRows(e: EventView, withPrediction: boolean, markets: Set<number> | null, live: boolean, out: { bytes: Buffer }[]): void {
    const a = view.event(e.idx);
    if (a === undefined) return;
    const d = view.consData();
    const cache = withPrediction ? consRowsWithPrediction : consRows;
    const items: ConsensusItem[] = [];
    for (const r of a.cons.slots) {
      const off = r * CONS.STRIDE;
      if (markets !== null && !markets.has(d[off + CONS.MARKET])) continue;
      const stamp = view.consStamp(r);
      const item = cache.get(r, stamp, e, live) ?? cache.set(r, stamp, e, live, {
        bytes: rowBytes(consensusJson(e, maintainedLine(d, off, withPrediction), live)),
        market: d[off + CONS.MARKET], player: d[off + CONS.PLAYER], point: d[off + CONS.POINT],
      });
      if (item.bytes.length !== 0) items.push(item);
    }
    items.sort((x, y) => x.market - y.market || x.player - y.player || x.point - y.point);
    for (const item of items) out.push(item);
  }

  /** one consensus record (at `off` of `d`) as a line's aggregate */
  function maintainedLine(d: Float64Array, off: number, withPrediction: boolean): LineAgg {
    const books = d[off + CONS.BOOKS] + (withPrediction ? d[off + CONS.PBOOKS] : 0);
    const l: LineAgg = { market: d[off + CONS.MARKET], point: d[off + CONS.POINT], player: d[off + CONS.PLAYER], books, outcomes: [agg(), agg(), agg()] };
    for (let o = 0; o < 3; o++) {
      const b = off + CONS.O + o * CONS.OSIZE;
      merge(l.outcomes[o], d[b + CONS.SUM], d[b + CONS.CNT], d[b + CONS.BEST], d[b + CONS.BEST_BOOK], d[b + CONS.WORST], d[b + CONS.WORST_BOOK]);
      if (withPrediction) merge(l.outcomes[o], d[b + CONS.PSUM], d[b + CONS.PCNT], d[b + CONS.PBEST], d[b + CONS.PBEST_BOOK], d[b + CONS.PWORST], d[b + CONS.PWORST_BOOK]);
    }
    return l;
  }

  /** consensus over a subset of books, from the read model's current fresh quotes (the shards' rule) */
  function subsetLines(e: EventView, subset: Set<number>, withPrediction: boolean, now: number): LineAgg[] {
    const byLine = new Map<string, LineAgg>();
    for (const r of e.records) {
      const book = rm.book(r);
      if (!subset.has(book) || IS_DFS[book] || (!withPrediction && IS_PREDICTION[book])) continue;
      const market = rm.market(r);
      const player = rm.player(r);
      const point = rm.point(r);
      const key = `${market}|${player}|${point}`;
      let l = byLine.get(key);
      if (l === undefined) byLine.set(key, (l = { market, point, player, books: 0, outcomes: [agg(), agg(), agg()] }));
      let counted = false;
      for (let o = 0; o < 3 && rm.consistent(r); o++) {
        const price = rm.price(r, o);
        const lu = Math.max(rm.changedAt(r, o), rm.verifiedAt(r, o));
        // stale, or of a started game observed before the start (a pregame price: freshAt)
        if (price === 0 || now - lu > STALE_MS[book] || (lu < e.commence && inPlay(e, now))) continue;
        addQuote(l.outcomes[o], price, book);
        counted = true;
      }
      // books: those whose fresh quotes went into the numbers, as the maintained consensus counts them
      if (counted) l.books++;
    }
    return [...byLine.values()].sort((x, y) => x.market - y.market || x.player - y.player || x.point - y.point);
  }

  const middles: Route = {
    method: 'GET',
    path: '/v1/sports/{sport_key}/middles',
    auth: 'key',
    tag: 'analytics',
    summary: 'Middles: Over at a low line and Under at a higher line on two books; widest window first',
    params: [
      { name: 'min_gap', type: 'number', default: 1, min: 0, max: 50, description: 'Minimum window width' },
      { name: 'min_books', type: 'integer', default: 2, min: 1, max: 200, description: 'Minimum books quoting the market' },
      { name: 'markets', type: 'csv', values: MARKET_KEYS, maxItems: 100, description: 'Market keys, e.g. totals or a player prop key' },
      { name: 'include_props', type: 'boolean', default: true, description: 'Include player props alongside totals and spreads' },
      { name: 'max_width', type: 'number', default: 0, min: 0, max: 50, description: 'Widest window returned; 0 means no cap' },
      ...pageParams(ROWS_MAX_LIMIT, ROWS_MAX_LIMIT, ROWS_MAX_OFFSET),
    ],
    cost: () => 3,
    response: { type: 'array', items: MiddleRowSchema },
    responseHeaders: ANALYTICS_PAGE_HEADERS,
    handle: (ctx) => hub.consistent(() => {
      const p = ctx.params;
      const markets = marketFilter(p);
      const minGap = p.min_gap as number;
      const maxWidth = p.max_width as number;
      const minBooks = p.min_books as number;
      // filters that leave nothing to serve are a mistake in the request, not an empty market
      const props = ((p.markets as string[] | undefined) ?? []).filter((k) => MARKETS[MARKET_INDEX.get(k)!].kind === 'prop');
      if (p.include_props === false && props.length > 0) {
        invalid('include_props', `include_props=false leaves out the player props markets names (${props.join(', ')})`, false);
      }
      if (maxWidth > 0 && maxWidth < minGap) invalid('max_width', `max_width ${maxWidth} is below min_gap ${minGap}: no window is both`, maxWidth);
      const lineless = ((p.markets as string[] | undefined) ?? []).filter((k) => MIDDLE_MARKET[MARKET_INDEX.get(k)!] === 0);
      if (lineless.length > 0) {
        invalid('markets', `${lineless.join(', ')}: no middle is made on them (a middle pairs two lines of spreads, totals or a player prop)`, (p.markets as string[]).join(','));
      }
      const rows: MiddleItem[] = [];
      for (const e of events(ctx, true)) {
        const a = view.event(e.idx);
        if (a === undefined) continue;
        const live = inPlay(e, ctx.now);
        // a started game whose pregame quotes the shards have not dropped yet: its middles may pair them (consensus)
        if (live && !hub.inPlay(e, ctx.now)) continue;
        const d = view.midData();
        for (const r of a.mids.slots) {
          const off = r * MID.STRIDE;
          const market = d[off + MID.MARKET];
          if (markets !== null && !markets.has(market)) continue;
          if (p.include_props === false && MARKETS[market].kind === 'prop') continue;
          if (d[off + MID.BOOKS] < minBooks) continue;
          const stamp = view.midStamp(r);
          const item = midRows.get(r, stamp, e, live) ?? midRows.set(r, stamp, e, live, middleItem(e, d, off, live));
          // the window as served (12 significant digits: 2.7 - 1.3 is 1.4000000000000001 in doubles)
          if (item.bytes.length === 0 || item.width < minGap || (maxWidth > 0 && item.width > maxWidth)) continue;
          rows.push(item);
        }
      }
      // a window with nothing to hit (null) ranks after those that can hit (NaN for two of them: the next key decides)
      rows.sort((x, y) => y.width - x.width || (x.breakEven ?? Infinity) - (y.breakEven ?? Infinity)
        || cmp(x.eventId, y.eventId) || cmp(x.market, y.market) || cmp(x.player ?? '', y.player ?? '')
        || x.overLine - y.overLine || x.underLine - y.underLine);
      return page(rows, p, joinRows, ROWS_MAX_OFFSET);
    }),
  };

  /** A middle's row (the MID record at `off` of `d`), serialised, with what the route sorts by; no bytes for a
   *  record middle() does not take (nothing is served for it). */
  function middleItem(e: EventView, d: Float64Array, off: number, live: boolean): MiddleItem {
    const market = d[off + MID.MARKET];
    const lo = d[off + MID.LO];
    const hi = d[off + MID.HI];
    const m = middle(lo, d[off + MID.OVER_EFF], hi, d[off + MID.UNDER_EFF]);
    const spreads = market === SPREADS;
    const player = playerName(d[off + MID.PLAYER]);
    const overLine = spreads ? -lo || 0 : lo;
    const key = MARKETS[market].key;
    if (m === null) return { bytes: NO_ROW, width: 0, breakEven: null, eventId: e.id, market: key, player, overLine, underLine: hi };
    const row = {
      event_id: e.id, sport_key: e.sport, commence_time: isoSeconds(e.commence), home_team: homeOf(e), away_team: awayOf(e), event_title: titleOf(e), simulated: e.source === 'sim',
      market: key, player, is_live: live, books: d[off + MID.BOOKS],
      over: { book: BOOKMAKERS[d[off + MID.OVER_BOOK]].key, side: spreads ? e.home : 'Over', line: overLine, price: d[off + MID.OVER_PRICE], effective_price: tidy(d[off + MID.OVER_EFF]) },
      under: { book: BOOKMAKERS[d[off + MID.UNDER_BOOK]].key, side: spreads ? e.away : 'Under', line: hi, price: d[off + MID.UNDER_PRICE], effective_price: tidy(d[off + MID.UNDER_EFF]) },
      window: m.window, hit_numbers: m.hit_numbers,
      push_numbers: m.push_numbers.map((x) => ({ number: x.number, net: tidy(x.net) })),
      profit_if_hit: m.profit_if_hit === null ? null : tidy(m.profit_if_hit), net_if_below: tidy(m.net_if_below), net_if_above: tidy(m.net_if_above),
      break_even_hit_rate: m.break_even_hit_rate === null ? null : tidy(m.break_even_hit_rate),
    };
    return { bytes: rowBytes(midRowJson(row)), width: m.window.width, breakEven: row.break_even_hit_rate, eventId: e.id, market: key, player, overLine, underLine: hi };
  }

  return [arbitrage, inplay, ev, consensus, middles];
}
