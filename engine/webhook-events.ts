// Turns the engine's change records into webhook events (issue 6). Pure and synchronous: the caller feeds it
// change batches (CHG records), analytics changes (ARB / EVR copies of AnalyticsChanges) and a clock tick with
// the per-book newest writes and the ingest counters; it calls `emit` for every event. Which subscription gets
// an event (variant, types, sport, edge threshold, rate) is decided by the caller.
//
// Per-quote state (last price, line-move anchors, 5-minute samples) is kept only while some subscription wants
// a type that needs it (`setWanted`), so a service without webhooks pays one loop over NEW records per batch.
//
// The once-a-second checks' state (each book's verdict and newest write, the feed's parser flag) is reported
// through `persist` at every change and restored with `restore`: the caller commits it with the outbox rows of the
// events emitted with it, which makes the checks' transitions exactly-once across a kill (see CheckState).

import { edgePct, isArbitrageSum, profitPct } from './analytics-math.js';
import { staleMs } from './analytics-rows.js';
import { BOOKMAKERS, MARKETS } from './catalogue.js';
import { DEVIG_METHODS } from './devig.js';
import { OUTRIGHT_MARKET, SLOT } from './ingest.js';
import { decimalToAmerican, tidy } from './odds.js';
import { ARB, CHANGE, CHG, EVR } from './records.js';
import { slaClassOf } from './sla.js';
import { classify } from './status.js';

export interface WebhookEvent {
  type: string;
  /** sport of the event, null for source and feed events (sport filters do not apply) */
  sport: string | null;
  /** edge percent for arbitrage and EV events (min_edge_pct applies), else NaN */
  edge: number;
  /** The event's key: the same event found again (by another node of a cluster, or by this one after a restart)
   *  has the same key, and a subscription's outbox holds a key once. Built from the data the event describes
   *  (ids, catalogue keys, the data times of the quotes involved), never from a node's clock or interned ids.
   *  null for the checks' events, which are claimed with their transition instead (`check`). */
  dedupe: string | null;
  /** arbitrage.opened, ev_alert or ev.flagged announced again as the arbitrage or the +EV row grew: the edge it had
   *  been announced at, so only subscriptions whose threshold lies above it (they were not told) receive it */
  floor?: number;
  /** check events: the check (`kind:key`) whose transition, persisted right after the event, announces it */
  check: string | null;
  at: number;
  data: Record<string, unknown>;
}

export interface EventInfo {
  id: string;
  sport: string;
  home: string;
  away: string;
  commence: number;
  status: string;
  /** game, futures or event_market: the last two have a title and no teams (their payloads carry event_title) */
  kind?: string;
  title?: string | null;
}

export interface EvaluatorOptions {
  event(idx: number): EventInfo | undefined;
  player(id: number): string | null;
  emit(ev: WebhookEvent): void;
  /** true the first time an event id is ever seen (the caller remembers ids across restarts; absent: every event
   *  seen first in this process is new) */
  firstSeen?(id: string): boolean;
  /** A check's state changed from `from` (or, `from` equal to its state, a book's newest write moved on by
   *  STATE_HEARTBEAT_MS). The caller persists it in the same transaction as the outbox rows of the events emitted
   *  with it, so the two survive a kill together; in a cluster the move is made only from `from`, so the node that
   *  makes it first announces it (the others take over the stored state through `restore`). */
  persist?(s: CheckState, from: string): void;
  /** The data time of a quote (max of line_changed_at and verified_at; 0 when there is none), for event keys. */
  quoteTime?(event: number, market: number, player: number, book: number, outcome: number): number;
  /** feed label for parser.degraded */
  feed: string;
}

/**
 * What the once-a-second checks compare against, as persisted (sql/migrations/007_webhook_state.sql):
 * - kind `book`, key the book key: `state` unknown (never seen ok) | healthy | breached, `since` when breached,
 *   `detail` the class the breach reached (breach or stale), `newestAt` the newest write the check has seen;
 * - kind `parser`, key the feed label: `state` ok | degraded, `since` when degraded.
 */
export interface CheckState {
  kind: 'book' | 'parser';
  key: string;
  state: string;
  since: number | null;
  detail: string | null;
  newestAt: number | null;
}

export const LINE_MOVE_POINTS = 0.5;
export const LINE_MOVE_CENTS = 5;
export const ODDS_DROP_PCT = 10;
export const ODDS_DROP_WINDOW_MS = 300_000;
export const STEAM_BOOKS = 3;
export const STEAM_WINDOW_MS = 10_000;
export const PARSER_WINDOW_MS = 60_000;
export const PARSER_MIN_ITEMS = 20;
export const PARSER_DEGRADED_PCT = 10;
/** the parser check keeps one counter sample per this interval (it also runs after every acknowledged ingest) */
export const PARSER_SAMPLE_MS = 1000;
/** books' newest writes are persisted once one moved on by this much (every book that moved, at once), and a
 *  book's at every change of its verdict: after a restart a book not written since is judged on it, so a breach
 *  that began while the process was down is found */
export const STATE_HEARTBEAT_MS = 10_000;
const MAX_SAMPLES = 32;
const MULTIPLICATIVE = DEVIG_METHODS.indexOf('multiplicative');
const MONEYLINE = new Set(MARKETS.flatMap((m, i) => (m.key === 'h2h' || m.key === 'h2h_3_way' ? [i] : [])));
const SPREADS = MARKETS.findIndex((m) => m.key === 'spreads');

const iso = (ms: number) => new Date(ms).toISOString();
/** a start as REST serves it, to the second (`2026-11-27T02:15:00Z`; it is kept to the second at ingest) */
const isoSeconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
/** futures and event markets have no teams (home_team and away_team are ''): their title, as REST's event_title */
const titleOf = (ev: EventInfo): { event_title?: string } => (ev.kind === undefined || ev.kind === 'game' ? {} : { event_title: ev.title ?? '' });

/** American "cents": the distance on the American scale with the gap between -100 and +100 closed. */
export function cents(decimal: number): number {
  const a = decimalToAmerican(decimal);
  return a >= 100 ? a - 100 : a + 100;
}

export function outcomeName(ev: EventInfo, market: number, o: number): string {
  // an outright's sides are Yes and No, as REST names them (they were sent as Over and Under)
  if (market === OUTRIGHT_MARKET) return o === SLOT.YES ? 'Yes' : 'No';
  if (MARKETS[market].shape === 'over_under') return o === SLOT.OVER ? 'Over' : 'Under';
  return o === SLOT.HOME ? ev.home : o === SLOT.AWAY ? ev.away : 'Draw';
}

/** The point as an outcome sees it: spreads' away side carries the negated home line. */
export function outcomePoint(market: number, point: number, o: number): number | null {
  if (point !== point) return null;
  return market === SPREADS && o === SLOT.AWAY ? -point || 0 : point;
}

function signed(p: number): string {
  return p > 0 ? `+${p}` : String(p);
}

/** Variant A `side`: the outcome with its point (spreads signed), e.g. "Boston Celtics -3.5", "Over 220.5". */
export function sideLabel(ev: EventInfo, market: number, point: number, o: number): string {
  const name = outcomeName(ev, market, o);
  const p = outcomePoint(market, point, o);
  if (p === null) return name;
  return market === SPREADS ? `${name} ${signed(p)}` : `${name} ${p}`;
}

function playerSide(player: string | null, side: string): string {
  return player === null ? side : `${player} ${side}`;
}

class QuoteState {
  last = 0;
  /** line_move: price reported last (or first seen) */
  anchor = 0;
  /** odds_drop: recent prices and their times */
  readonly prices: number[] = [];
  readonly times: number[] = [];
}

class SteamState {
  readonly books: number[] = [];
  readonly dirs: number[] = [];
  readonly from: number[] = [];
  readonly to: number[] = [];
  readonly at: number[] = [];
}

interface ArbOpen {
  arbId: string;
  /** the edge at opening, and the highest it was announced at since (arbGrew) */
  edge: number;
  top: number;
  openedAt: number;
}

type BookHealth = 'unknown' | 'healthy' | 'breached';

export class WebhookEvaluator {
  private readonly seen = new Set<number>();
  private readonly quotes = new Map<string, QuoteState>();
  /** line_move: point reported last per book-line */
  private readonly anchors = new Map<string, number>();
  private readonly steam = new Map<string, SteamState>();
  private readonly arbs = new Map<string, ArbOpen>();
  private readonly health: BookHealth[] = BOOKMAKERS.map(() => 'unknown');
  private readonly breachedAt: number[] = BOOKMAKERS.map(() => 0);
  private readonly breachClass: string[] = BOOKMAKERS.map(() => '');
  /** each book's newest write as last persisted (restored at start: the judgement of a book not written since) */
  private readonly storedNewest = new Float64Array(BOOKMAKERS.length);
  private readonly moved: number[] = [];
  private readonly parserSamples: { t: number; obs: number; rej: number }[] = [];
  private parserDegraded = false;
  private wanted = new Set<string>();
  private quoteLevel = false;
  private lastSweep = 0;

  constructor(private readonly o: EvaluatorOptions) {}

  /** The event types some active subscription wants. */
  setWanted(types: Iterable<string>): void {
    this.wanted = new Set(types);
    const q = this.wanted.has('line_move') || this.wanted.has('odds_drop') || this.wanted.has('line_move.steam');
    if (!q) {
      this.quotes.clear();
      this.anchors.clear();
      this.steam.clear();
    }
    this.quoteLevel = q;
  }

  wants(type: string): boolean {
    return this.wanted.has(type);
  }

  /** A change batch as applied to the read model. */
  changes(rec: Float64Array, n: number, now: number): void {
    const newEvent = this.wanted.has('new_event');
    for (let i = 0, off = 0; i < n; i++, off += CHG.STRIDE) {
      const kind = rec[off + CHG.KIND];
      if (kind === CHANGE.NEW) {
        const idx = rec[off + CHG.EVENT];
        if (!this.seen.has(idx)) {
          this.seen.add(idx);
          const ev = this.o.event(idx);
          // an event seen before a restart is not new again (SPEC: "an event not previously tracked")
          if (ev !== undefined && (this.o.firstSeen?.(ev.id) ?? true) && newEvent) {
            this.o.emit({
              type: 'new_event', sport: ev.sport, edge: Number.NaN, dedupe: `new_event:${ev.id}`, check: null, at: now,
              data: this.gameA(ev),
            });
          }
        }
      }
      if (!this.quoteLevel) continue;
      if (kind === CHANGE.NEW || kind === CHANGE.PRICE) this.quote(rec, off, kind, now);
      else if (kind === CHANGE.REMOVED) {
        // the quote is gone (line moved, event over): its state goes too; the book-line's anchor point stays
        this.quotes.delete(`${rec[off + CHG.EVENT]}:${rec[off + CHG.MARKET]}:${rec[off + CHG.PLAYER]}:${rec[off + CHG.BOOK]}:${rec[off + CHG.POINT]}:${rec[off + CHG.OUTCOME]}`);
      }
    }
    if (this.quoteLevel && now - this.lastSweep > ODDS_DROP_WINDOW_MS) this.sweep(now);
  }

  private quote(rec: Float64Array, off: number, kind: number, now: number): void {
    const idx = rec[off + CHG.EVENT];
    const market = rec[off + CHG.MARKET];
    const point = rec[off + CHG.POINT];
    const player = rec[off + CHG.PLAYER];
    const o = rec[off + CHG.OUTCOME];
    const book = rec[off + CHG.BOOK];
    const price = rec[off + CHG.PRICE];
    const t = rec[off + CHG.LINE_CHANGED_AT] || now;
    const ev = this.o.event(idx);
    if (ev === undefined) return;
    // observed longer ago than its book's stale threshold (a feed's backlog, a replay): the state follows it, but
    // nothing is announced, as no arbitrage or EV row is formed from such a quote; a move of long ago is no news
    const late = now - Math.max(t, rec[off + CHG.VERIFIED_AT]) > staleMs(book);
    const lineKey = `${idx}:${market}:${player}:${book}`;
    const key = `${lineKey}:${point}:${o}`;
    let q = this.quotes.get(key);
    const fresh = q === undefined;
    if (q === undefined) this.quotes.set(key, (q = new QuoteState()));
    const prev = q.last;
    q.last = price;

    if (this.wanted.has('line_move')) {
      const anchorPoint = this.anchors.get(lineKey);
      if (kind === CHANGE.NEW && point === point && anchorPoint !== undefined && anchorPoint === anchorPoint && o === 0) {
        const move = Math.abs(point - anchorPoint);
        if (move >= LINE_MOVE_POINTS) {
          this.anchors.set(lineKey, point);
          if (!late) this.lineMove(ev, market, point, player, o, book, 'points', anchorPoint, q.anchor || price, price, move, 0, t, now);
        }
      } else if (anchorPoint === undefined) this.anchors.set(lineKey, point);
      // a quote first seen, or tracked so far only for odds_drop or steam (no anchor: 0), anchors at its price; a move
      // is measured from there (it was reported from a price of 0)
      if (fresh || q.anchor === 0) q.anchor = price;
      else if (kind === CHANGE.PRICE) {
        const move = Math.abs(cents(price) - cents(q.anchor));
        if (move >= LINE_MOVE_CENTS) {
          const from = q.anchor;
          q.anchor = price;
          if (!late) this.lineMove(ev, market, point, player, o, book, 'price', point, from, price, 0, move, t, now);
        }
      }
    }

    if (this.wanted.has('odds_drop')) {
      while (q.times.length > 0 && t - q.times[0] > ODDS_DROP_WINDOW_MS) {
        q.times.shift();
        q.prices.shift();
      }
      if (kind === CHANGE.PRICE && q.prices.length > 0) {
        let sum = 0;
        for (const p of q.prices) sum += p;
        const avg = sum / q.prices.length;
        if (price < avg * (1 - ODDS_DROP_PCT / 100)) {
          q.prices.length = 0;
          q.times.length = 0;
          if (!late) this.o.emit({
            type: 'odds_drop', sport: ev.sport, edge: Number.NaN, dedupe: `odds_drop:${this.quoteKey(ev, market, point, player, o, book)}:${t}`,
            check: null, at: now,
            data: {
              ...this.quoteHeadA(ev, market, point, player, o, book), price, average_price: tidy(avg),
              drop_pct: tidy((1 - price / avg) * 100), window_s: ODDS_DROP_WINDOW_MS / 1000,
            },
          });
        }
      }
      if (q.prices.length >= MAX_SAMPLES) {
        q.prices.shift();
        q.times.shift();
      }
      q.prices.push(price);
      q.times.push(t);
    }

    if (this.wanted.has('line_move.steam') && kind === CHANGE.PRICE && prev > 0 && prev !== price && !late) {
      this.steamMove(ev, idx, market, point, player, o, book, prev, price, t, now);
    }
  }

  private steamMove(ev: EventInfo, idx: number, market: number, point: number, player: number, o: number, book: number,
    from: number, to: number, t: number, now: number): void {
    const key = `${idx}:${market}:${player}:${point}:${o}`;
    let s = this.steam.get(key);
    if (s === undefined) this.steam.set(key, (s = new SteamState()));
    while (s.at.length > 0 && t - s.at[0] > STEAM_WINDOW_MS) {
      s.at.shift(); s.books.shift(); s.dirs.shift(); s.from.shift(); s.to.shift();
    }
    const dir = to < from ? 1 : -1;
    // one entry per book: its latest move in the window
    const at = s.books.indexOf(book);
    if (at >= 0) {
      s.at.splice(at, 1); s.books.splice(at, 1); s.dirs.splice(at, 1); s.from.splice(at, 1); s.to.splice(at, 1);
    }
    s.books.push(book); s.dirs.push(dir); s.from.push(from); s.to.push(to); s.at.push(t);
    let same = 0;
    for (const d of s.dirs) if (d === dir) same++;
    if (same < STEAM_BOOKS) return;
    const books = [];
    for (let i = 0; i < s.books.length; i++) {
      if (s.dirs[i] !== dir) continue;
      books.push({ book: BOOKMAKERS[s.books[i]].key, from: s.from[i], to: s.to[i], at: iso(s.at[i]) });
    }
    this.steam.delete(key);
    this.o.emit({
      type: 'line_move.steam', sport: ev.sport, edge: Number.NaN, check: null, at: now,
      dedupe: `line_move.steam:${ev.id}:${MARKETS[market].key}:${this.o.player(player) ?? ''}:${point}:${o}:${dir}:${t}`,
      data: {
        ...this.gameB(ev), market: MARKETS[market].key, point: outcomePoint(market, point, o), player: this.o.player(player),
        outcome: outcomeName(ev, market, o), direction: dir > 0 ? 'shortening' : 'drifting',
        window_s: STEAM_WINDOW_MS / 1000, books,
      },
    });
  }

  private lineMove(ev: EventInfo, market: number, point: number, player: number, o: number, book: number, kind: 'points' | 'price',
    fromPoint: number, fromPrice: number, price: number, movePoints: number, moveCents: number, t: number, now: number): void {
    this.o.emit({
      type: 'line_move', sport: ev.sport, edge: Number.NaN, dedupe: `line_move:${kind}:${this.quoteKey(ev, market, point, player, o, book)}:${t}`,
      check: null, at: now,
      data: {
        ...this.quoteHeadA(ev, market, point, player, o, book), kind,
        from: { point: outcomePoint(market, fromPoint, o), price: fromPrice, price_american: decimalToAmerican(fromPrice) },
        to: { point: outcomePoint(market, point, o), price, price_american: decimalToAmerican(price) },
        move_points: movePoints, move_cents: moveCents,
      },
    });
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [k, q] of this.quotes) {
      if (q.times.length > 0 && now - q.times[q.times.length - 1] > ODDS_DROP_WINDOW_MS) {
        q.times.length = 0;
        q.prices.length = 0;
      }
      if (q.times.length === 0 && !this.wanted.has('line_move') && !this.wanted.has('line_move.steam')) this.quotes.delete(k);
    }
    for (const [k, s] of this.steam) if (s.at.length === 0 || now - s.at[s.at.length - 1] > STEAM_WINDOW_MS) this.steam.delete(k);
  }

  private gameA(ev: EventInfo) {
    return { sport_key: ev.sport, match_id: ev.id, home_team: ev.home, away_team: ev.away, commence_time: isoSeconds(ev.commence), ...titleOf(ev) };
  }

  private gameB(ev: EventInfo) {
    return { sport_key: ev.sport, event_id: ev.id, home_team: ev.home, away_team: ev.away, commence_time: isoSeconds(ev.commence), ...titleOf(ev) };
  }

  private quoteHeadA(ev: EventInfo, market: number, point: number, player: number, o: number, book: number) {
    return {
      ...this.gameA(ev), market: MARKETS[market].key, point: outcomePoint(market, point, o), player: this.o.player(player),
      side: outcomeName(ev, market, o), book: BOOKMAKERS[book].key,
    };
  }

  /** A quote as event keys name it: catalogue keys and the player's name, the same on every node. */
  private quoteKey(ev: EventInfo, market: number, point: number, player: number, o: number, book: number): string {
    return `${ev.id}:${MARKETS[market].key}:${this.o.player(player) ?? ''}:${BOOKMAKERS[book].key}:${point}:${o}`;
  }

  private quoteTime(idx: number, market: number, player: number, book: number, o: number): number {
    return this.o.quoteTime?.(idx, market, player, book, o) ?? 0;
  }

  /** Arbitrages and EV rows opened and closed by one applied batch (hub.onAnalytics). */
  analytics(ch: {
    arbOpened: Float64Array[]; arbUpdated: Float64Array[]; arbClosed: Float64Array[]; evOpened: Float64Array[]; evClosed: Float64Array[];
    evGrew?: { row: Float64Array; floor: number }[];
  }, now: number): void {
    const a = this.wanted.has('arb_flagged') || this.wanted.has('live_arb');
    const b = this.wanted.has('arbitrage.opened') || this.wanted.has('arbitrage.closed');
    if (a || b) for (const rec of ch.arbOpened) this.arbOpened(rec, now, a, b);
    if (b) for (const rec of ch.arbUpdated) this.arbGrew(rec, now);
    for (const rec of ch.arbClosed) this.arbClosed(rec, now);
    if (this.wanted.has('ev_alert') || this.wanted.has('ev.flagged')) {
      for (const rec of ch.evOpened) this.evOpened(rec, now);
      for (const g of ch.evGrew ?? []) this.evOpened(g.row, now, g.floor);
    }
  }

  private arbOpened(rec: Float64Array, now: number, a: boolean, b: boolean): void {
    const ev = this.o.event(rec[ARB.EVENT]);
    if (ev === undefined) return;
    const market = rec[ARB.MARKET];
    const point = rec[ARB.POINT];
    const n = rec[ARB.N];
    const S = rec[ARB.SUM];
    if (!isArbitrageSum(S)) return;
    // served as the REST row serves it (tidied), and held to min_edge_pct as served
    const edge = profitPct(S);
    // in play as REST and the streams judge it: from the start time (SPEC's rule for /live), whatever a feed's status
    const live = ev.commence <= now;
    const books = new Set<number>();
    const legs: { book: number; o: number; price: number; eff: number }[] = [];
    // the arb's data version: the newest write among its legs (an arb found again after it closed has a newer one)
    let version = 0;
    for (let o = 0; o < n; o++) {
      const leg = ARB.LEGS + o * ARB.ALTS * ARB.LSIZE;
      const book = rec[leg + ARB.BOOK];
      if (book < 0) return;
      books.add(book);
      legs.push({ book, o, price: rec[leg + ARB.PRICE], eff: rec[leg + ARB.EFF] });
      version = Math.max(version, this.quoteTime(rec[ARB.EVENT], market, rec[ARB.PLAYER], book, o));
    }
    const arbKey = `${ev.id}:${MARKETS[market].key}:${this.o.player(rec[ARB.PLAYER]) ?? ''}:${point}:` +
      `${legs.map((l) => BOOKMAKERS[l.book].key).join(',')}:${version}`;
    // SPEC: "arbitrage across two books". One book's own line priced past 1.0 (Over and Under 2.10 on a total or a
    // prop, whose pairs the store does not judge) is that book's error, which it voids, not an arbitrage to bet: the
    // webhook audit found it announced as arb_flagged. Variant B's opening asks the same below.
    if (a && books.size >= 2) {
      const type = live ? 'live_arb' : 'arb_flagged';
      if (this.wanted.has(type)) {
        this.o.emit({
          type, sport: ev.sport, edge, dedupe: `${type}:${arbKey}`, check: null, at: now,
          data: {
            sport_key: ev.sport, match_id: ev.id, home_team: ev.home, away_team: ev.away, ...titleOf(ev), market: MARKETS[market].key, edge_pct: edge,
            // a player prop's side names the player (two players' props on one line are two arbitrages); an
            // exchange leg's effective price (after commission) is the one edge_pct was computed with
            legs: legs.map((l) => ({
              book: BOOKMAKERS[l.book].key, side: playerSide(this.o.player(rec[ARB.PLAYER]), sideLabel(ev, market, point, l.o)),
              price: l.price, effective_price: tidy(l.eff),
            })),
          },
        });
      }
    }
    if (b && MONEYLINE.has(market) && books.size >= 2) {
      const detected = rec[ARB.DETECTED_AT] || now;
      // named after the data version when there is one: every node of a cluster names the arb alike, so its
      // opened and closed events carry one arb_id whichever node wrote each
      const arbId = `arb_${ev.id}_${MARKETS[market].key}_${version > 0 ? version : detected}`;
      this.arbs.set(`${rec[ARB.EVENT]}:${market}`, { arbId, edge, top: edge, openedAt: detected });
      if (this.wanted.has('arbitrage.opened')) {
        this.o.emit({
          type: 'arbitrage.opened', sport: ev.sport, edge, dedupe: `arbitrage.opened:${arbKey}`, check: null, at: now,
          data: this.openedB(ev, rec, arbId, edge, detected, live),
        });
      }
    }
  }

  /** The data of arbitrage.opened for an ARB record (its best leg per outcome), at its opening or as it grew. */
  private openedB(ev: EventInfo, rec: Float64Array, arbId: string, edge: number, detected: number, live: boolean) {
    const market = rec[ARB.MARKET];
    const S = rec[ARB.SUM];
    const legs = [];
    for (let o = 0; o < rec[ARB.N]; o++) {
      const leg = ARB.LEGS + o * ARB.ALTS * ARB.LSIZE;
      const eff = rec[leg + ARB.EFF];
      legs.push({
        book: BOOKMAKERS[rec[leg + ARB.BOOK]].key, outcome: outcomeName(ev, market, o), price: rec[leg + ARB.PRICE],
        effective_price: tidy(eff), stake_pct: tidy((1 / eff / S) * 100),
      });
    }
    return {
      ...this.gameB(ev), arb_id: arbId, market: MARKETS[market].key, edge_pct: edge, implied_sum: tidy(S),
      is_live: live, detected_at: iso(detected), legs,
    };
  }

  /** An announced Variant B arbitrage whose edge rose past the highest it was announced at: announced again to the
   *  subscriptions whose min_edge_pct it now reaches and did not reach before (WebhookEvent.floor), so an arbitrage
   *  that opened below a threshold and grew past it is not lost to them. Its close then goes to them too. */
  private arbGrew(rec: Float64Array, now: number): void {
    const open = this.arbs.get(`${rec[ARB.EVENT]}:${rec[ARB.MARKET]}`);
    if (open === undefined) return;
    const S = rec[ARB.SUM];
    if (!isArbitrageSum(S)) return;
    const edge = profitPct(S);
    if (!(edge > open.top)) return;
    const floor = open.top;
    open.top = edge;
    const ev = this.o.event(rec[ARB.EVENT]);
    if (ev === undefined || !this.wanted.has('arbitrage.opened')) return;
    this.o.emit({
      type: 'arbitrage.opened', sport: ev.sport, edge, floor, dedupe: `arbitrage.opened:${open.arbId}:grew:${edge}`, check: null, at: now,
      data: this.openedB(ev, rec, open.arbId, edge, open.openedAt, ev.commence <= now),
    });
  }

  private arbClosed(rec: Float64Array, now: number): void {
    const key = `${rec[ARB.EVENT]}:${rec[ARB.MARKET]}`;
    const open = this.arbs.get(key);
    if (open === undefined) return;
    this.arbs.delete(key);
    this.closedB(rec[ARB.EVENT], rec[ARB.MARKET], open, now, 'prices');
  }

  /** Closes every announced arbitrage (the service stops: its prices do not outlive it); returns how many. */
  closeAll(now: number): number {
    const n = this.arbs.size;
    for (const [key, open] of this.arbs) {
      const [event, market] = key.split(':').map(Number);
      this.closedB(event, market, open, now, 'service_stopped');
    }
    this.arbs.clear();
    return n;
  }

  /** `reason`: `prices` (its legs moved, went stale or left) or `service_stopped` (the node stopped) */
  private closedB(event: number, market: number, open: ArbOpen, now: number, reason: 'prices' | 'service_stopped'): void {
    const ev = this.o.event(event);
    if (ev === undefined || !this.wanted.has('arbitrage.closed')) return;
    this.o.emit({
      // to every subscription an opening reached (its highest announced edge), with the edge it opened at
      type: 'arbitrage.closed', sport: ev.sport, edge: open.top, dedupe: `arbitrage.closed:${open.arbId}`, check: null, at: now,
      data: {
        ...this.gameB(ev), arb_id: open.arbId, market: MARKETS[market].key, edge_pct_at_open: open.edge,
        opened_at: iso(open.openedAt), closed_at: iso(now), duration_s: Math.max(0, (now - open.openedAt) / 1000), reason,
      },
    });
  }

  /** A +EV row that entered the set, or (`floor` given) one held whose edge rose past the highest it was reported
   *  at: announced again to the subscriptions whose threshold it now reaches and did not reach before
   *  (WebhookEvent.floor), so a pick that entered below ev_alert's 2 % or a min_edge_pct and grew past it is not
   *  lost to them (AnalyticsView.settleEvGrowth). */
  private evOpened(rec: Float64Array, now: number, floor?: number): void {
    const fair = rec[EVR.FAIR + MULTIPLICATIVE];
    if (fair !== fair) return;
    const eff = rec[EVR.EFF];
    const edge = edgePct(fair, eff);
    if (!(edge > 0)) return;
    const ev = this.o.event(rec[EVR.EVENT]);
    if (ev === undefined) return;
    const market = rec[EVR.MARKET];
    const point = rec[EVR.POINT];
    const player = rec[EVR.PLAYER];
    const o = rec[EVR.OUTCOME];
    const price = rec[EVR.PRICE];
    const sharp = rec[EVR.SHARP];
    // the row's data version: the newest write of the quote and of the sharp's quotes on its line
    const idx = rec[EVR.EVENT];
    let version = this.quoteTime(idx, market, player, rec[EVR.BOOK], o);
    for (let so = 0; so < 3; so++) version = Math.max(version, this.quoteTime(idx, market, player, sharp, so));
    const evKey = `${this.quoteKey(ev, market, point, player, o, rec[EVR.BOOK])}:${BOOKMAKERS[sharp].key}:${version}`;
    const fields = {
      market: MARKETS[market].key, point: outcomePoint(market, point, o), player: this.o.player(player),
      book: BOOKMAKERS[rec[EVR.BOOK]].key, price, price_american: decimalToAmerican(price), effective_price: tidy(eff),
      fair_prob_pct: tidy(fair * 100), fair_price: tidy(1 / fair), edge_pct: edge,
      sharp_book: BOOKMAKERS[rec[EVR.SHARP]].key, devig: 'multiplicative',
    };
    const grew = floor === undefined ? '' : `:grew:${edge}`;
    if (this.wanted.has('ev_alert')) {
      this.o.emit({
        type: 'ev_alert', sport: ev.sport, edge, floor, dedupe: `ev_alert:${evKey}${grew}`, check: null, at: now,
        data: { ...this.gameA(ev), side: outcomeName(ev, market, o), ...fields },
      });
    }
    if (this.wanted.has('ev.flagged')) {
      this.o.emit({
        type: 'ev.flagged', sport: ev.sport, edge, floor, dedupe: `ev.flagged:${evKey}${grew}`, check: null, at: now,
        data: { ...this.gameB(ev), outcome: outcomeName(ev, market, o), ...fields },
      });
    }
  }

  /** The checks' state as persisted before a restart (see CheckState). Unknown books and other feeds are ignored. */
  restore(rows: readonly CheckState[]): void {
    for (const r of rows) {
      if (r.kind === 'parser') {
        if (r.key !== this.o.feed) continue;
        this.parserDegraded = r.state === 'degraded';
        continue;
      }
      const b = BOOKMAKERS.findIndex((x) => x.key === r.key);
      if (b < 0) continue;
      this.health[b] = r.state === 'healthy' || r.state === 'breached' ? r.state : 'unknown';
      this.breachedAt[b] = r.since ?? 0;
      this.breachClass[b] = r.detail ?? '';
      this.storedNewest[b] = r.newestAt ?? 0;
    }
  }

  /** Once a second: both checks. */
  tick(now: number, newestByBook: readonly number[], counters: { observations: number; rejected: number }): void {
    this.books(now, newestByBook);
    this.parser(now, counters);
  }

  private bookState(b: number, newest: number): CheckState {
    const h = this.health[b];
    return {
      kind: 'book', key: BOOKMAKERS[b].key, state: h, since: h === 'breached' ? this.breachedAt[b] : null,
      detail: h === 'breached' ? this.breachClass[b] : null, newestAt: newest,
    };
  }

  /**
   * Books' freshness classes from their newest writes (source_quality.*): a book is `healthy` once seen ok;
   * reaching breach or stale from there (through degraded or not) is a breach; ok again is a recovery. A book not
   * written since a restart is judged on its newest write persisted before it.
   */
  books(now: number, newestByBook: readonly number[]): void {
    // books whose newest write moved on since persisted: all are written when one is due (one write per heartbeat
    // rather than one per book), and a book whose verdict changed is written at once
    const moved = this.moved;
    moved.length = 0;
    let due = false;
    for (let b = 0; b < BOOKMAKERS.length; b++) {
      const live = newestByBook[b];
      const stored = this.storedNewest[b];
      const newest = live > stored ? live : stored;
      if (!(newest > 0)) continue;
      const cls = slaClassOf(BOOKMAKERS[b]);
      const age = Math.max(0, (now - newest) / 1000);
      const state = classify(age, cls); // the same verdict as /v1/status
      const h = this.health[b];
      const thresholds = { tight_s: cls.tight_s, slack_s: cls.slack_s, stale_s: cls.stale_s };
      const head = { book: BOOKMAKERS[b].key, title: BOOKMAKERS[b].title, sla_class: cls.name };
      if (state === 'ok') {
        if (h === 'breached' && this.wanted.has('source_quality.recovery')) {
          this.o.emit({
            type: 'source_quality.recovery', sport: null, edge: Number.NaN, dedupe: null, check: `book:${BOOKMAKERS[b].key}`, at: now,
            data: { ...head, from: this.breachClass[b], to: 'ok', age_s: age, breached_for_s: (now - this.breachedAt[b]) / 1000, thresholds },
          });
        }
        this.health[b] = 'healthy';
      } else if ((state === 'breach' || state === 'stale') && h === 'healthy') {
        this.health[b] = 'breached';
        this.breachedAt[b] = now;
        this.breachClass[b] = state;
        if (this.wanted.has('source_quality.breach')) {
          this.o.emit({
            type: 'source_quality.breach', sport: null, edge: Number.NaN, dedupe: null, check: `book:${BOOKMAKERS[b].key}`, at: now,
            data: { ...head, from: 'ok', to: state, age_s: age, thresholds },
          });
        }
      }
      if (this.health[b] !== h) {
        this.storedNewest[b] = newest;
        this.o.persist?.(this.bookState(b, newest), h);
      } else if (newest > stored) {
        moved.push(b);
        if (newest - stored >= STATE_HEARTBEAT_MS) due = true;
      }
    }
    if (!due) return;
    for (const b of moved) {
      const newest = Math.max(newestByBook[b], this.storedNewest[b]);
      this.storedNewest[b] = newest;
      this.o.persist?.(this.bookState(b, newest), this.health[b]);
    }
  }

  /**
   * The ingest rejection rate over the last minute (parser.degraded): degraded above PARSER_DEGRADED_PCT of at
   * least PARSER_MIN_ITEMS items; re-armed once at least PARSER_MIN_ITEMS items show under half of it (a feed that
   * goes quiet stays degraded: silence is no evidence of health, and a restart does not announce it again).
   */
  parser(now: number, counters: { observations: number; rejected: number }): void {
    const samples = this.parserSamples;
    const lastT = samples.length > 0 ? samples[samples.length - 1].t : -Infinity;
    if (now - lastT >= PARSER_SAMPLE_MS) samples.push({ t: now, obs: counters.observations, rej: counters.rejected });
    while (samples.length > 2 && now - samples[1].t >= PARSER_WINDOW_MS) samples.shift();
    const first = samples[0];
    const obs = counters.observations - first.obs;
    const rej = counters.rejected - first.rej;
    const pct = obs > 0 ? (rej / obs) * 100 : 0;
    if (!this.parserDegraded && obs >= PARSER_MIN_ITEMS && pct > PARSER_DEGRADED_PCT) {
      this.parserDegraded = true;
      if (this.wanted.has('parser.degraded')) {
        this.o.emit({
          type: 'parser.degraded', sport: null, edge: Number.NaN, dedupe: null, check: `parser:${this.o.feed}`, at: now,
          data: { feed: this.o.feed, window_s: Math.round((now - first.t) / 1000), observations: obs, rejected: rej, rejected_pct: tidy(pct), threshold_pct: PARSER_DEGRADED_PCT },
        });
      }
      this.o.persist?.({ kind: 'parser', key: this.o.feed, state: 'degraded', since: now, detail: null, newestAt: null }, 'ok');
    } else if (this.parserDegraded && obs >= PARSER_MIN_ITEMS && pct < PARSER_DEGRADED_PCT / 2) {
      this.parserDegraded = false;
      this.o.persist?.({ kind: 'parser', key: this.o.feed, state: 'ok', since: null, detail: null, newestAt: null }, 'degraded');
    }
  }
}
