// The order-book-style price store of DESIGN.md section 2.
//
// A quote is (event, market, point, player, outcome, book) -> decimal price with line_changed_at and
// verified_at (last_update is the later of the two). A book quotes one line of a market at a time, so the unit
// of storage is the book-line: (event, market, player, book) -> its current point and up to three outcome
// quotes, kept inline in one flat Float64Array record. A quote at a new point moves the book-line there and
// removes its old quotes (REMOVED records).
//
// Per (event, market, point, player) a line keeps, per outcome, the ladder of quotes ordered best-first like
// one side of an order book: highest effective decimal price first (net of an exchange's commission,
// 1 + (d - 1)(1 - c), or a prediction market's fee: effectiveAt), so top of book is what a bettor actually gets), then
// the earliest to post it, then book id.
// Lines of one (event, market, player) form a group (middles are found across a group's lines).
//
// Why flat: on this 2-core machine an update is bound by dependent cache misses. Maps of Maps of objects cost
// about 4 us an update at 1.2 M quotes; one hash probe into a flat index plus one record costs about 1 us
// (bench/ingest.ts, DESIGN.md section 6).

import { effectivePrice, tradingFeePrice } from './analytics-math.js';
import { BOOKMAKERS } from './catalogue.js';
import { FlatIndex } from './flat-index.js';
import { CHANGE, CHG, OBS, RESTORE, RecordBuffer } from './records.js';

/** largest |point| a line can carry; points are multiples of 0.25 */
export const MAX_POINT = 2000;
export const MAX_OUTCOMES = 3;
/** books are ids below this */
export const MAX_BOOKS = 1024;

/** observations warmed at a time (warm()): their records stay in the cache until they are applied */
const WARM = 64;
/** warm()'s placeholder before a group's first ladder */
const EMPTY_LADDER: number[] = [];
const NO_POINT = 0;
const POINT_OFFSET = 8192;

export function pointCode(point: number): number {
  return point !== point ? NO_POINT : Math.round(point * 4) + POINT_OFFSET;
}

/** Book-line record layout. Quote slot id = bookLine * 3 + outcome; a PRICE of 0 means no quote. */
const BL = {
  EVENT: 0,
  KEY: 1,
  POINT: 2,
  LINE: 3,
  /** position in its event's list of book-lines */
  POS: 4,
  BOOK: 5,
  /** first quote field; outcome o's fields start at Q + o * QF.SIZE */
  Q: 6,
  STRIDE: 30,
} as const;
/** AT: where the quote's tuple was in its line's ladder when the quote itself last moved: a hint, checked against the
 *  tuple's SLOT and searched outwards from when another quote's move or removal has shifted it (findTuple). Keeping
 *  it exact meant writing into the record of every tuple a move displaced, a cache miss per place moved (about five
 *  an update on random prices), where the search reads the ladder the update has loaded anyway (bench/store.ts,
 *  scripts/branchcmp.mjs). X: QUOTE_STATE numbers that belong to the listener (the analytics keep each quote's
 *  freshness, expiry and consensus units there: the update has just read this record, so they cost no cache miss of
 *  their own, where a separate array indexed by slot cost one per update at 1.2 M quotes; bench/analytics.ts). Zero
 *  when the book-line is made. */
const QF = { PRICE: 0, CHANGED: 1, VERIFIED: 2, AT: 3, X: 4, SIZE: 8 } as const;
/** numbers of listener state per quote (QF.X) */
export const QUOTE_STATE = 4;

/** Line record layout; its ladders are `ladders[line * 3 + outcome]`. HOLDERS: book-lines on the line (it lives
 *  while any book is on it). The listener's per-line state follows at X (PriceStore.reserveLineState): the
 *  analytics read the line's identity on every update, so identity and state in one record cost one cache miss
 *  where two arrays cost two (bench/analytics.ts). */
const LN = { EVENT: 0, MARKET: 1, PLAYER: 2, POINT: 3, QUOTES: 4, GROUP: 5, HOLDERS: 6, X: 7 } as const;
/** numbers a line record holds before the listener's state */
export const LINE_HEAD = LN.X;

/** A ladder is one packed array of tuples [effective price, line_changed_at, book, slot, raw price, flag], best
 *  first: comparisons and the analytics' scans read the tuples in place instead of chasing each quote's record
 *  (one cache miss each; bench/ingest.ts, bench/analytics.ts). FLAG belongs to the listener (the analytics keep the
 *  quote's freshness and its EV bits there); the store writes 0 on insert, carries it along, and hands it to the
 *  listener when the tuple goes. */
export const LD = { PRICE: 0, CHANGED: 1, BOOK: 2, SLOT: 3, RAW: 4, FLAG: 5, STRIDE: 6 } as const;

/** What the store tells its listener (the shard's analytics) about every change, synchronously. */
export interface StoreListener {
  /** a quote appeared, moved, was verified, or went (kind: CHANGE.*); `oldPrice` is the raw price before,
   *  `oldRank` its place in the ladder before (0 = top; -1 when it was not in the ladder or did not move), `at`
   *  its tuple's offset in the ladder now (-1 when unknown: verified, or gone), `lastUpdate` its last_update,
   *  `removedFlag` the LD.FLAG its tuple carried when it went (REMOVED; else 0) */
  quote(line: number, outcome: number, slot: number, kind: number, oldPrice: number, oldRank: number, book: number,
    at: number, lastUpdate: number, removedFlag: number): void;
  /** the line is about to be freed (its id may be reused afterwards) */
  lineFreed(line: number): void;
  /** An observation of `outcome` on `line` is about to be applied (it may still turn out stale): called while the
   *  store loads the records of a group of observations before applying them (warm()), for each whose book-line
   *  exists already and whose price differs from the one the quote holds (a verification reads no line state
   *  unless it makes a stale quote fresh again). The listener loads the line state it will read in quote(), so
   *  those cache misses overlap the store's own instead of following them (bench/analytics.ts). Loads only: it
   *  changes nothing. */
  prefetch(line: number, outcome: number): void;
}

const DEFAULT_COMMISSION = Float64Array.from(BOOKMAKERS, (b) => b.commission);
const DEFAULT_TRADING_FEE = Float64Array.from(BOOKMAKERS, (b) => b.trading_fee_rate);

/** What a bettor gets at a book's decimal price, as the ladders rank it: net of an exchange's commission on
 *  winnings or a prediction market's fee on profits (engine/analytics-math.ts effectivePrice), or of a prediction
 *  market's fee per contract (tradingFeePrice); any other book's price as it is. */
export function effectiveAt(price: number, book: number, commission: ArrayLike<number> = DEFAULT_COMMISSION,
  tradingFee: ArrayLike<number> = DEFAULT_TRADING_FEE): number {
  const f = book < tradingFee.length ? tradingFee[book] : 0;
  if (f !== 0) return tradingFeePrice(price, f);
  const c = book < commission.length ? commission[book] : 0;
  return c === 0 ? price : effectivePrice(price, c);
}

function ranksAbove(l: number[], a: number, b: number): boolean {
  if (l[a] !== l[b]) return l[a] > l[b];
  if (l[a + 1] !== l[b + 1]) return l[a + 1] < l[b + 1];
  return l[a + 2] < l[b + 2];
}

/** where a slot's QF fields start in the book-line records */
function qoffOf(slot: number): number {
  const b = (slot / MAX_OUTCOMES) | 0;
  return b * BL.STRIDE + BL.Q + (slot - b * MAX_OUTCOMES) * QF.SIZE;
}

/** Moves the tuple at offset `at` up or down to its rank and records its new offset in its own QF.AT (the tuples
 *  it passes keep theirs as hints); returns the new offset. */
function rerank(l: number[], at: number, bl: Float64Array): number {
  let k = at;
  while (k > 0 && ranksAbove(l, k, k - LD.STRIDE)) {
    swap(l, k, k - LD.STRIDE);
    k -= LD.STRIDE;
  }
  while (k + LD.STRIDE < l.length && ranksAbove(l, k + LD.STRIDE, k)) {
    swap(l, k, k + LD.STRIDE);
    k += LD.STRIDE;
  }
  bl[qoffOf(l[k + LD.SLOT]) + QF.AT] = k;
  return k;
}

function swap(l: number[], a: number, b: number): void {
  for (let f = 0; f < LD.STRIDE; f++) {
    const t = l[a + f];
    l[a + f] = l[b + f];
    l[b + f] = t;
  }
}

/** The offset of `slot`'s tuple in ladder `l`, searched outwards from `hint` (its QF.AT): a tuple is displaced one
 *  place per quote that moved past it or left above it since it last moved itself, so it is found within a few
 *  places. */
export function findTuple(l: readonly number[], slot: number, hint: number): number {
  const n = l.length;
  const h = hint < n ? hint : n - LD.STRIDE;
  if (h >= 0 && l[h + LD.SLOT] === slot) return h;
  for (let d = LD.STRIDE; d < n; d += LD.STRIDE) {
    if (h - d >= 0 && l[h - d + LD.SLOT] === slot) return h - d;
    if (h + d < n && l[h + d + LD.SLOT] === slot) return h + d;
  }
  throw new Error(`quote slot ${slot} is not in its ladder`);
}

function blKey(market: number, player: number, book: number): number {
  return (market * 2097152 + (player + 1)) * MAX_BOOKS + book;
}

/** market and player back from a book-line key (exact: the key is an integer below 2^53) */
function keyMarket(key: number): number {
  return Math.floor(key / (2097152 * MAX_BOOKS));
}

function keyPlayer(key: number): number {
  return (Math.floor(key / MAX_BOOKS) % 2097152) - 1;
}

function lineKey(market: number, player: number, code: number): number {
  return (market * 2097152 + (player + 1)) * 16384 + code;
}

export interface QuoteView {
  price: number;
  lineChangedAt: number;
  verifiedAt: number;
  lastUpdate: number;
}

/** A line as read back (tests, analytics, rebuilds): its identity and its ladders of quote slots. */
export interface LineView {
  id: number;
  event: number;
  market: number;
  point: number;
  player: number;
  code: number;
  quotes: number;
  ladders: number[][];
}

export interface GroupView {
  lines: Map<number, LineView>;
  bookLine: Map<number, LineView>;
}

export class PriceStore {
  private bl: Float64Array;
  private blNext = 0;
  private readonly blFree: number[] = [];
  private readonly blIndex: FlatIndex;
  private ln: Float64Array;
  private lnNext = 0;
  private readonly lnFree: number[] = [];
  private readonly lnIndex: FlatIndex;
  /** numbers per line record: LN.X plus the listener's state */
  private lnStride: number = LN.X;
  private readonly ladders: number[][] = [];
  /** book-line ids per event, indexed by interned event id (dense) */
  private readonly byEvent: (number[] | undefined)[] = [];
  /** per event, the time of each withdrawn book-line (by its blKey): an observation made before a withdrawal and
   *  arriving after it (a retried or delayed batch) does not bring the pulled line back. Checked only where a
   *  book-line is made; an event's entries go with the event. */
  private readonly withdrawnAt = new Map<number, Map<number, number>>();
  private eventsHeld = 0;
  private live = 0;
  /** observations ignored because they were older than the quote they would update */
  staleIgnored = 0;

  private readonly commission: ArrayLike<number>;
  private readonly tradingFee: ArrayLike<number>;
  /** the highest commission (or trading-fee rate, which takes less: tradingFeePrice) of any book: a raw price is at
   *  most 1 + (effective - 1) / (1 - maxCommission) */
  readonly maxCommission: number;
  private readonly grIndex = new FlatIndex(256);
  private readonly grLines: number[][] = [];
  private readonly grFree: number[] = [];
  private grNext = 0;
  listener: StoreListener | null = null;
  /** warm(): per observation of the group, its book-line and then its line (-1: none), and its quote's offset */
  private readonly warmAt = new Int32Array(WARM);
  private readonly warmQ = new Int32Array(WARM);
  /** warm(): per observation of the group, its quote's ladder (where w holds a line) */
  private readonly warmLadders: number[][] = Array.from({ length: WARM }, () => EMPTY_LADDER);
  /** what warm() loads ends here, so the loads are not dropped as unused */
  private sink = 0;

  /** `capacity` in quotes; it grows as needed. `commission` and `tradingFee` per book id (default: the
   *  catalogue's). */
  constructor(capacity = 1024, opts: { commission?: ArrayLike<number>; tradingFee?: ArrayLike<number> } = {}) {
    this.commission = opts.commission ?? DEFAULT_COMMISSION;
    this.tradingFee = opts.tradingFee ?? DEFAULT_TRADING_FEE;
    let max = 0;
    for (let i = 0; i < this.commission.length; i++) max = Math.max(max, this.commission[i]);
    for (let i = 0; i < this.tradingFee.length; i++) max = Math.max(max, this.tradingFee[i]);
    this.maxCommission = max;
    const lines = Math.max(4, Math.ceil(capacity / 2));
    this.bl = new Float64Array(lines * BL.STRIDE);
    this.blIndex = new FlatIndex(lines);
    this.ln = new Float64Array(Math.max(4, Math.ceil(lines / 4)) * LN.X);
    this.lnIndex = new FlatIndex(Math.max(4, Math.ceil(lines / 4)));
  }

  get quoteCount(): number {
    return this.live;
  }

  get eventCount(): number {
    return this.eventsHeld;
  }

  /** quote slots allocated so far (freed ones are reused before this grows) */
  get capacity(): number {
    return this.blNext * MAX_OUTCOMES;
  }

  /** Applies `count` observations laid out as OBS, appending change records to `out`. Returns how many changed
   *  or verified a quote (stale ones are counted in `staleIgnored`). */
  apply(obs: Float64Array, count: number, out: RecordBuffer): number {
    let applied = 0;
    for (let start = 0; start < count; start += WARM) {
      const end = Math.min(count, start + WARM);
      this.warm(obs, start, end);
      for (let i = start, off = start * OBS.STRIDE; i < end; i++, off += OBS.STRIDE) {
        // `| 0` turns the float64 ids back into small integers for the index arithmetic
        if (this.observe(obs[off + OBS.EVENT] | 0, obs[off + OBS.MARKET] | 0, obs[off + OBS.POINT], obs[off + OBS.PLAYER] | 0,
          obs[off + OBS.OUTCOME] | 0, obs[off + OBS.BOOK] | 0, obs[off + OBS.PRICE], obs[off + OBS.TS], out)) applied++;
      }
    }
    return applied;
  }

  /** Loads what the observations start..end will read, one level at a time over all of them: their index buckets,
   *  then their book-line records, then their lines' ladders (and the listener's line state). Each level's loads
   *  are independent of each other, so their cache misses overlap, where an update on its own waits for each in
   *  turn (bench/analytics.ts, bench/ingest.ts). Reads only: the observations are applied afterwards as before. */
  private warm(obs: Float64Array, start: number, end: number): void {
    const w = this.warmAt;
    const index = this.blIndex;
    let sink = 0;
    // the index buckets: their offsets first, then the loads in a loop that does nothing else, so that their misses
    // overlap (with a hash between two loads the processor keeps few in flight), then the lookups, which hit
    for (let i = start, off = start * OBS.STRIDE; i < end; i++, off += OBS.STRIDE) {
      w[i - start] = index.startOf(obs[off + OBS.EVENT] | 0, blKey(obs[off + OBS.MARKET] | 0, obs[off + OBS.PLAYER] | 0, obs[off + OBS.BOOK] | 0));
    }
    sink += index.touchAll(w, end - start);
    for (let i = start, off = start * OBS.STRIDE; i < end; i++, off += OBS.STRIDE) {
      w[i - start] = index.get(obs[off + OBS.EVENT] | 0, blKey(obs[off + OBS.MARKET] | 0, obs[off + OBS.PLAYER] | 0, obs[off + OBS.BOOK] | 0));
    }
    const d = this.bl;
    for (let i = start, off = start * OBS.STRIDE; i < end; i++, off += OBS.STRIDE) {
      const b = w[i - start];
      if (b < 0) continue;
      const q = b * BL.STRIDE + BL.Q + (obs[off + OBS.OUTCOME] | 0) * QF.SIZE;
      sink += d[q + QF.AT];
      // a verification (the price the quote holds already: 69 % of the simulator's observations) reads no ladder,
      // and no line state unless it makes a stale quote fresh again (bench/analytics.ts, 2b)
      w[i - start] = d[q + QF.PRICE] === obs[off + OBS.PRICE] ? -1 : d[b * BL.STRIDE + BL.LINE];
      this.warmQ[i - start] = q;
    }
    // a ladder is three loads deep (its place in `ladders`, the array, its elements): one level each, as above
    const ls = this.warmLadders;
    for (let i = start, off = start * OBS.STRIDE; i < end; i++, off += OBS.STRIDE) {
      const line = w[i - start];
      if (line >= 0) ls[i - start] = this.ladders[line * MAX_OUTCOMES + (obs[off + OBS.OUTCOME] | 0)];
    }
    for (let i = start, off = start * OBS.STRIDE; i < end; i++, off += OBS.STRIDE) {
      const line = w[i - start];
      if (line < 0) continue;
      sink += ls[i - start].length;
      if (this.listener !== null) this.listener.prefetch(line, obs[off + OBS.OUTCOME] | 0);
    }
    for (let i = 0; i < end - start; i++) {
      if (w[i] < 0) continue;
      const l = ls[i];
      const at = d[this.warmQ[i] + QF.AT];
      if (at < l.length) sink += l[at];
    }
    this.sink = sink;
  }

  observe(event: number, market: number, point: number, player: number, outcome: number, book: number,
    price: number, ts: number, out: RecordBuffer): boolean {
    if (price === 0) return this.withdraw(event, market, player, book, ts, out);
    const b = this.bookLine(event, market, point, player, book, ts, out);
    if (b < 0) {
      this.staleIgnored++;
      return false;
    }
    const d = this.bl;
    const q = b * BL.STRIDE + BL.Q + outcome * QF.SIZE;
    const slot = b * MAX_OUTCOMES + outcome;
    const line = d[b * BL.STRIDE + BL.LINE];
    const ladder = this.ladders[line * MAX_OUTCOMES + outcome];
    if (d[q + QF.PRICE] === 0) {
      d[q + QF.PRICE] = price;
      d[q + QF.CHANGED] = ts;
      d[q + QF.VERIFIED] = ts;
      ladder.push(this.effective(price, book), ts, book, slot, price, 0);
      const at = rerank(ladder, ladder.length - LD.STRIDE, d);
      this.ln[line * this.lnStride + LN.QUOTES]++;
      this.live++;
      this.emit(out, CHANGE.NEW, b, outcome);
      if (this.listener !== null) this.listener.quote(line, outcome, slot, CHANGE.NEW, 0, -1, book, at, ts, 0);
      return true;
    }
    if (ts < d[q + QF.VERIFIED] || ts < d[q + QF.CHANGED]) {
      this.staleIgnored++;
      return false;
    }
    d[q + QF.VERIFIED] = ts;
    const old = d[q + QF.PRICE];
    if (old === price) {
      this.emit(out, CHANGE.VERIFIED, b, outcome);
      if (this.listener !== null) this.listener.quote(line, outcome, slot, CHANGE.VERIFIED, old, -1, book, -1, ts, 0);
      return true;
    }
    d[q + QF.PRICE] = price;
    d[q + QF.CHANGED] = ts;
    const at = findTuple(ladder, slot, d[q + QF.AT]);
    const oldRank = at / LD.STRIDE;
    ladder[at + LD.PRICE] = this.effective(price, book);
    ladder[at + LD.CHANGED] = ts;
    ladder[at + LD.RAW] = price;
    const now = rerank(ladder, at, d);
    this.emit(out, CHANGE.PRICE, b, outcome);
    if (this.listener !== null) this.listener.quote(line, outcome, slot, CHANGE.PRICE, old, oldRank, book, now, ts, 0);
    return true;
  }

  /** Rebuilds quotes from full state laid out as RESTORE, emitting nothing. */
  restore(rec: Float64Array, count: number): void {
    const sink = new RecordBuffer(CHG.STRIDE, 1);
    for (let i = 0, off = 0; i < count; i++, off += RESTORE.STRIDE) {
      const verified = rec[off + RESTORE.VERIFIED_AT];
      const outcome = rec[off + RESTORE.OUTCOME] | 0;
      const b = this.bookLine(rec[off + RESTORE.EVENT] | 0, rec[off + RESTORE.MARKET] | 0, rec[off + RESTORE.POINT],
        rec[off + RESTORE.PLAYER] | 0, rec[off + RESTORE.BOOK] | 0, verified, sink);
      sink.length = 0;
      if (b < 0) continue;
      const d = this.bl;
      const q = b * BL.STRIDE + BL.Q + outcome * QF.SIZE;
      if (d[q + QF.PRICE] !== 0) continue;
      d[q + QF.PRICE] = rec[off + RESTORE.PRICE];
      d[q + QF.CHANGED] = rec[off + RESTORE.LINE_CHANGED_AT];
      d[q + QF.VERIFIED] = verified;
      const line = d[b * BL.STRIDE + BL.LINE];
      const ladder = this.ladders[line * MAX_OUTCOMES + outcome];
      const book = d[b * BL.STRIDE + BL.BOOK];
      ladder.push(this.effective(d[q + QF.PRICE], book), d[q + QF.CHANGED], book, b * MAX_OUTCOMES + outcome, d[q + QF.PRICE], 0);
      const at = rerank(ladder, ladder.length - LD.STRIDE, d);
      this.ln[line * this.lnStride + LN.QUOTES]++;
      this.live++;
      if (this.listener !== null) {
        this.listener.quote(line, outcome, b * MAX_OUTCOMES + outcome, CHANGE.NEW, 0, -1, book, at, Math.max(d[q + QF.CHANGED], verified), 0);
      }
    }
  }

  /** Removes every quote of an event, emitting REMOVED records. */
  removeEvent(event: number, out: RecordBuffer): number {
    this.withdrawnAt.delete(event);
    const list = this.byEvent[event];
    if (list === undefined) return 0;
    const before = this.live;
    while (list.length > 0) this.dropBookLine(list[list.length - 1], out);
    this.byEvent[event] = undefined;
    this.eventsHeld--;
    return before - this.live;
  }

  /** The book-line for this observation, created or moved to the observation's point as needed; -1 when the
   *  observation is older than the book's quotes on the line it would leave. */
  private bookLine(event: number, market: number, point: number, player: number, book: number, ts: number,
    out: RecordBuffer): number {
    const key = blKey(market, player, book);
    let b = this.blIndex.get(event, key);
    if (b >= 0) {
      const base = b * BL.STRIDE;
      const d = this.bl;
      if (pointCode(d[base + BL.POINT]) === pointCode(point)) return b;
      for (let o = 0; o < MAX_OUTCOMES; o++) {
        const q = base + BL.Q + o * QF.SIZE;
        if (d[q + QF.PRICE] !== 0 && (ts < d[q + QF.VERIFIED] || ts < d[q + QF.CHANGED])) return -1;
      }
      // the book moved to another line: its quotes on the old one go
      this.clearQuotes(b, out);
      this.releaseLine(d[base + BL.LINE]);
      d[base + BL.POINT] = point;
      d[base + BL.LINE] = this.lineFor(event, market, point, player);
      return b;
    }
    if (this.withdrawnAt.size > 0) {
      const at = this.withdrawnAt.get(event)?.get(key);
      if (at !== undefined && ts < at) return -1;
    }
    b = this.allocBookLine();
    const base = b * BL.STRIDE;
    const d = this.bl;
    d[base + BL.EVENT] = event;
    d[base + BL.KEY] = key;
    d[base + BL.POINT] = point;
    d[base + BL.LINE] = this.lineFor(event, market, point, player);
    d[base + BL.BOOK] = book;
    d.fill(0, base + BL.Q, base + BL.STRIDE);
    this.blIndex.set(event, key, b);
    let list = this.byEvent[event];
    if (list === undefined) {
      while (this.byEvent.length < event) this.byEvent.push(undefined);
      this.byEvent[event] = list = [];
      this.eventsHeld++;
    }
    d[base + BL.POS] = list.length;
    list.push(b);
    return b;
  }

  /** The line (event, market, point, player), made if new; its quote count is raised by the caller. */
  private lineFor(event: number, market: number, point: number, player: number): number {
    const key = lineKey(market, player, pointCode(point));
    let line = this.lnIndex.get(event, key);
    if (line >= 0) {
      this.ln[line * this.lnStride + LN.HOLDERS]++;
      return line;
    }
    line = this.lnFree.pop() ?? this.lnNext++;
    if ((line + 1) * this.lnStride > this.ln.length) {
      const next = new Float64Array(Math.ceil(this.ln.length * 1.5) + this.lnStride * 16);
      next.set(this.ln);
      this.ln = next;
    }
    const base = line * this.lnStride;
    this.ln[base + LN.EVENT] = event;
    this.ln[base + LN.MARKET] = market;
    this.ln[base + LN.PLAYER] = player;
    this.ln[base + LN.POINT] = point;
    this.ln[base + LN.QUOTES] = 0;
    this.ln[base + LN.GROUP] = this.groupFor(event, market, player, line);
    this.ln[base + LN.HOLDERS] = 1;
    for (let o = 0; o < MAX_OUTCOMES; o++) {
      const l = this.ladders[line * MAX_OUTCOMES + o];
      if (l === undefined) this.ladders[line * MAX_OUTCOMES + o] = [];
      else l.length = 0;
    }
    this.lnIndex.set(event, key, line);
    return line;
  }

  private releaseLine(line: number): void {
    const base = line * this.lnStride;
    if (--this.ln[base + LN.HOLDERS] > 0) return;
    if (this.listener !== null) this.listener.lineFreed(line);
    const event = this.ln[base + LN.EVENT];
    this.lnIndex.delete(event, lineKey(this.ln[base + LN.MARKET], this.ln[base + LN.PLAYER], pointCode(this.ln[base + LN.POINT])));
    const g = this.ln[base + LN.GROUP];
    const lines = this.grLines[g];
    lines.splice(lines.indexOf(line), 1);
    if (lines.length === 0) {
      this.grIndex.delete(event, this.ln[base + LN.MARKET] * 2097152 + this.ln[base + LN.PLAYER] + 1);
      this.grFree.push(g);
    }
    this.lnFree.push(line);
  }

  /** the group (event, market, player) a new line joins */
  private groupFor(event: number, market: number, player: number, line: number): number {
    const key = market * 2097152 + player + 1;
    let g = this.grIndex.get(event, key);
    if (g < 0) {
      g = this.grFree.pop() ?? this.grNext++;
      this.grIndex.set(event, key, g);
      if (this.grLines[g] === undefined) this.grLines[g] = [];
    }
    this.grLines[g].push(line);
    return g;
  }

  private effective(price: number, book: number): number {
    return effectiveAt(price, book, this.commission, this.tradingFee);
  }

  /** Removes a book-line's quotes from its line's ladders, emitting REMOVED. */
  private clearQuotes(b: number, out: RecordBuffer): void {
    for (let o = 0; o < MAX_OUTCOMES; o++) if (this.bl[b * BL.STRIDE + BL.Q + o * QF.SIZE + QF.PRICE] !== 0) this.removeQuote(b, o, out);
  }

  /** Removes one quote (outcome o of book-line b, which holds one) from its line's ladder, emitting REMOVED. */
  private removeQuote(b: number, o: number, out: RecordBuffer): void {
    const d = this.bl;
    const base = b * BL.STRIDE;
    const line = d[base + BL.LINE];
    const q = base + BL.Q + o * QF.SIZE;
    this.emit(out, CHANGE.REMOVED, b, o);
    const ladder = this.ladders[line * MAX_OUTCOMES + o];
    const at = findTuple(ladder, b * MAX_OUTCOMES + o, d[q + QF.AT]);
    const flag = ladder[at + LD.FLAG];
    // the tuples below move up one place; their QF.AT stay hints (findTuple)
    ladder.splice(at, LD.STRIDE);
    const old = d[q + QF.PRICE];
    d[q + QF.PRICE] = 0;
    this.ln[line * this.lnStride + LN.QUOTES]--;
    this.live--;
    if (this.listener !== null) this.listener.quote(line, o, b * MAX_OUTCOMES + o, CHANGE.REMOVED, old, at / LD.STRIDE, d[base + BL.BOOK], -1, 0, flag);
  }

  /** Removes every quote of an event last observed (changed or verified) before `t`, emitting REMOVED records; a
   *  book-line left without quotes goes. At a game's start its pregame prices leave this way: a price observed
   *  before the start is not one a book offers in play (workers/hub.ts tick()). Returns the quotes removed. */
  dropBefore(event: number, t: number, out: RecordBuffer): number {
    const list = this.byEvent[event];
    if (list === undefined) return 0;
    const before = this.live;
    const d = this.bl;
    // from the end: dropBookLine moves the list's last book-line into the place it frees
    for (let i = list.length - 1; i >= 0; i--) {
      const b = list[i];
      const base = b * BL.STRIDE;
      let left = 0;
      for (let o = 0; o < MAX_OUTCOMES; o++) {
        const q = base + BL.Q + o * QF.SIZE;
        if (d[q + QF.PRICE] === 0) continue;
        if (Math.max(d[q + QF.CHANGED], d[q + QF.VERIFIED]) < t) this.removeQuote(b, o, out);
        else left++;
      }
      if (left === 0) this.dropBookLine(b, out);
    }
    if (list.length === 0) {
      this.byEvent[event] = undefined;
      this.eventsHeld--;
    }
    return before - this.live;
  }

  /** A book no longer offers a market (and player) of an event: its book-line goes, its quotes with it (REMOVED
   *  records). Not when one of them was observed after `ts` (the book quoted it again since). False when ignored;
   *  true when applied, with nothing to remove too (a withdrawal repeated). */
  withdraw(event: number, market: number, player: number, book: number, ts: number, out: RecordBuffer): boolean {
    const key = blKey(market, player, book);
    const b = this.blIndex.get(event, key);
    if (b < 0) {
      this.markWithdrawn(event, key, ts);
      return true;
    }
    const d = this.bl;
    for (let o = 0; o < MAX_OUTCOMES; o++) {
      const q = b * BL.STRIDE + BL.Q + o * QF.SIZE;
      if (d[q + QF.PRICE] !== 0 && (d[q + QF.CHANGED] > ts || d[q + QF.VERIFIED] > ts)) {
        this.staleIgnored++;
        return false;
      }
    }
    this.dropBookLine(b, out);
    this.markWithdrawn(event, key, ts);
    if (this.byEvent[event]!.length === 0) {
      this.byEvent[event] = undefined;
      this.eventsHeld--;
    }
    return true;
  }

  private markWithdrawn(event: number, key: number, ts: number): void {
    let m = this.withdrawnAt.get(event);
    if (m === undefined) this.withdrawnAt.set(event, (m = new Map()));
    const at = m.get(key);
    if (at === undefined || ts > at) m.set(key, ts);
  }

  private dropBookLine(b: number, out: RecordBuffer): void {
    const d = this.bl;
    const base = b * BL.STRIDE;
    this.clearQuotes(b, out);
    this.releaseLine(d[base + BL.LINE]);
    const event = d[base + BL.EVENT];
    this.blIndex.delete(event, d[base + BL.KEY]);
    const list = this.byEvent[event]!;
    const pos = d[base + BL.POS];
    const last = list.pop()!;
    if (last !== b) {
      list[pos] = last;
      d[last * BL.STRIDE + BL.POS] = pos;
    }
    this.blFree.push(b);
  }

  private allocBookLine(): number {
    const reused = this.blFree.pop();
    if (reused !== undefined) return reused;
    if ((this.blNext + 1) * BL.STRIDE > this.bl.length) {
      const next = new Float64Array(Math.ceil(this.bl.length * 1.5) + BL.STRIDE * 16);
      next.set(this.bl);
      this.bl = next;
    }
    return this.blNext++;
  }

  private qoff(slot: number): number {
    return qoffOf(slot);
  }

  private emit(out: RecordBuffer, kind: number, b: number, outcome: number): void {
    const off = out.push();
    const o = out.data;
    const d = this.bl;
    const base = b * BL.STRIDE;
    const q = base + BL.Q + outcome * QF.SIZE;
    o[off + CHG.KIND] = kind;
    o[off + CHG.EVENT] = d[base + BL.EVENT];
    const key = d[base + BL.KEY];
    o[off + CHG.MARKET] = keyMarket(key);
    o[off + CHG.POINT] = d[base + BL.POINT];
    o[off + CHG.PLAYER] = keyPlayer(key);
    o[off + CHG.OUTCOME] = outcome;
    o[off + CHG.BOOK] = d[base + BL.BOOK];
    o[off + CHG.PRICE] = d[q + QF.PRICE];
    o[off + CHG.LINE_CHANGED_AT] = d[q + QF.CHANGED];
    o[off + CHG.VERIFIED_AT] = d[q + QF.VERIFIED];
  }

  // Reads for the analytics (hot: no allocation).

  /** the ladder of a line's outcome: packed LD tuples, best first. Read-only but for LD.FLAG. */
  ladder(line: number, outcome: number): number[] {
    return this.ladders[line * MAX_OUTCOMES + outcome];
  }

  /** the book-line records: a quote's listener state is `records[stateOf(slot) + 0 .. QUOTE_STATE - 1]`. The array
   *  is replaced when the store grows (re-read it after any change to the store). */
  get records(): Float64Array {
    return this.bl;
  }

  /** Gives every line record `n` numbers of listener state after its first LINE_HEAD (zero when a line id is first
   *  used; the listener resets them when a line is freed, lineFreed). Only while the store holds no line. */
  reserveLineState(n: number): void {
    if (this.lnNext !== 0) throw new Error('reserveLineState on a store that holds lines');
    this.lnStride = LN.X + n;
    this.ln = new Float64Array(Math.max(4, this.ln.length / LN.X) * this.lnStride);
  }

  /** the line records: line l's listener state is `lineRecords[l * lineStride + LINE_HEAD ...]`. Replaced when the
   *  store grows (re-read it after any change to the store). */
  get lineRecords(): Float64Array {
    return this.ln;
  }

  get lineStride(): number {
    return this.lnStride;
  }

  /** where a quote slot's listener state starts in `records` */
  stateOf(slot: number): number {
    return qoffOf(slot) + QF.X;
  }

  /** offset of a quote's tuple in its line's ladder, or -1 when it has none (the quote's QF.AT hint is set to it) */
  tupleOf(slot: number): number {
    const q = qoffOf(slot);
    if (this.bl[q + QF.PRICE] === 0) return -1;
    const b = (slot / MAX_OUTCOMES) | 0;
    const ladder = this.ladders[this.bl[b * BL.STRIDE + BL.LINE] * MAX_OUTCOMES + (slot - b * MAX_OUTCOMES)];
    return (this.bl[q + QF.AT] = findTuple(ladder, slot, this.bl[q + QF.AT]));
  }

  lineEvent(line: number): number { return this.ln[line * this.lnStride + LN.EVENT]; }
  lineMarket(line: number): number { return this.ln[line * this.lnStride + LN.MARKET]; }
  linePlayer(line: number): number { return this.ln[line * this.lnStride + LN.PLAYER]; }
  linePoint(line: number): number { return this.ln[line * this.lnStride + LN.POINT]; }
  lineGroup(line: number): number { return this.ln[line * this.lnStride + LN.GROUP]; }
  /** books (book-lines) on the line */
  lineBooks(line: number): number { return this.ln[line * this.lnStride + LN.HOLDERS]; }
  /** live line ids of a group */
  groupLines(group: number): readonly number[] { return this.grLines[group]; }
  /** line ids are below this */
  get lineIdLimit(): number { return this.lnNext; }
  lineLive(line: number): boolean { return line < this.lnNext && this.ln[line * this.lnStride + LN.HOLDERS] > 0; }

  /** first quote slot (outcome 0) of `book`'s book-line when it is on `line`, else -1 */
  slotOfBook(line: number, book: number): number {
    const base = line * this.lnStride;
    const b = this.blIndex.get(this.ln[base + LN.EVENT], blKey(this.ln[base + LN.MARKET], this.ln[base + LN.PLAYER], book));
    return b >= 0 && this.bl[b * BL.STRIDE + BL.LINE] === line ? b * MAX_OUTCOMES : -1;
  }

  lineOfSlot(slot: number): number {
    return this.bl[((slot / MAX_OUTCOMES) | 0) * BL.STRIDE + BL.LINE];
  }

  lastUpdateOf(slot: number): number {
    const q = this.qoff(slot);
    return Math.max(this.bl[q + QF.CHANGED], this.bl[q + QF.VERIFIED]);
  }

  // Reads (tests, rebuilds). Not on the update path.

  priceOf(slot: number): number {
    return this.bl[this.qoff(slot) + QF.PRICE];
  }

  changedAtOf(slot: number): number {
    return this.bl[this.qoff(slot) + QF.CHANGED];
  }

  verifiedAtOf(slot: number): number {
    return this.bl[this.qoff(slot) + QF.VERIFIED];
  }

  bookOf(slot: number): number {
    return this.bl[((slot / MAX_OUTCOMES) | 0) * BL.STRIDE + BL.BOOK];
  }

  private lineView(line: number): LineView {
    const base = line * this.lnStride;
    const point = this.ln[base + LN.POINT];
    return {
      id: line,
      event: this.ln[base + LN.EVENT],
      market: this.ln[base + LN.MARKET],
      point,
      player: this.ln[base + LN.PLAYER],
      code: pointCode(point),
      quotes: this.ln[base + LN.QUOTES],
      ladders: [0, 1, 2].map((o) => this.ladderSlots(line, o)),
    };
  }

  /** quote slots of a ladder, best first */
  private ladderSlots(line: number, outcome: number): number[] {
    const l = this.ladders[line * MAX_OUTCOMES + outcome];
    const out: number[] = [];
    for (let k = LD.SLOT; k < l.length; k += LD.STRIDE) out.push(l[k]);
    return out;
  }

  line(event: number, market: number, point: number, player: number): LineView | undefined {
    const line = this.lnIndex.get(event, lineKey(market, player, pointCode(point)));
    return line < 0 ? undefined : this.lineView(line);
  }

  /** the lines of (event, market, player) by point code, and each book's current line */
  group(event: number, market: number, player: number): GroupView | undefined {
    const list = this.byEvent[event];
    if (list === undefined) return undefined;
    const lines = new Map<number, LineView>();
    const bookLine = new Map<number, LineView>();
    for (const b of list) {
      const base = b * BL.STRIDE;
      const key = this.bl[base + BL.KEY];
      if (keyMarket(key) !== market || keyPlayer(key) !== player) continue;
      const line = this.bl[base + BL.LINE];
      const view = this.lineView(line);
      const code = view.code;
      if (!lines.has(code)) lines.set(code, view);
      bookLine.set(this.bl[base + BL.BOOK], lines.get(code)!);
    }
    return lines.size === 0 ? undefined : { lines, bookLine };
  }

  quote(event: number, market: number, point: number, player: number, outcome: number, book: number): QuoteView | null {
    const b = this.blIndex.get(event, blKey(market, player, book));
    if (b < 0 || pointCode(this.bl[b * BL.STRIDE + BL.POINT]) !== pointCode(point)) return null;
    const q = b * BL.STRIDE + BL.Q + outcome * QF.SIZE;
    const price = this.bl[q + QF.PRICE];
    if (price === 0) return null;
    const lineChangedAt = this.bl[q + QF.CHANGED];
    const verifiedAt = this.bl[q + QF.VERIFIED];
    return { price, lineChangedAt, verifiedAt, lastUpdate: Math.max(lineChangedAt, verifiedAt) };
  }

  /** book ids of a ladder, best first */
  ladderBooks(event: number, market: number, point: number, player: number, outcome: number): number[] {
    const line = this.lnIndex.get(event, lineKey(market, player, pointCode(point)));
    if (line < 0) return [];
    return this.ladderSlots(line, outcome).map((slot) => this.bookOf(slot));
  }

  /** Calls fn for every live quote of an event. */
  forEachQuote(event: number, fn: (line: LineView, outcome: number, slot: number) => void): void {
    const list = this.byEvent[event];
    if (list === undefined) return;
    const views = new Map<number, LineView>();
    for (const b of list) {
      const line = this.bl[b * BL.STRIDE + BL.LINE];
      let view = views.get(line);
      if (view === undefined) views.set(line, (view = this.lineView(line)));
      for (let o = 0; o < MAX_OUTCOMES; o++) {
        if (this.bl[b * BL.STRIDE + BL.Q + o * QF.SIZE + QF.PRICE] !== 0) fn(view, o, b * MAX_OUTCOMES + o);
      }
    }
  }

  *eventIds(): IterableIterator<number> {
    for (let i = 0; i < this.byEvent.length; i++) if (this.byEvent[i] !== undefined) yield i;
  }

  /** bytes held by the store's arrays (the ladders' JS arrays excluded) */
  get bytes(): number {
    return this.bl.byteLength + this.ln.byteLength + this.blIndex.bytes + this.lnIndex.bytes;
  }
}
