// Incremental analytics kept inside a shard, on every price update (DESIGN.md section 2, issue 3): consensus,
// arbitrage, +EV against each sharp book's no-vig line for every de-vig method, and middles.
//
// The store tells the analytics of every quote change as it happens (StoreListener). What it does then:
// - EV is kept as one bit per (quote, sharp), set while the quote's edge against that sharp's no-vig line is
//   positive under some de-vig method. That is one comparison: the edge p * d - 1 is positive for some method
//   exactly when it is for the method with the highest fair probability `pmax` (multiplication by d > 0 is
//   monotone), so each (line, sharp, outcome) keeps its pmax beside the no-vig line. A soft book's move
//   recomputes its own bits against the sharps that quote the line; a sharp's move recomputes its no-vig line
//   (once per batch, after all its quotes in it; sent as a FAIR record) and flips the bits of just the quotes
//   between the old and the new edge threshold (the +EV quotes against a sharp are a prefix of the ladder). The
//   bits live in each quote's ladder tuple. A quote is sent (EVQ) only when its bits change; the main thread prices
//   a row, and tells which methods give it an edge, from the read model's quote and the FAIR records.
// - Consensus is kept as running sums per line and outcome (implied probabilities in fixed point, so adding and
//   removing is exact and the sums equal a from-scratch recomputation bit for bit), counts, and distinct books
//   per line; best and worst prices are kept as quotes move and searched for in the ladder only when the quote
//   holding one leaves or moves.
// - Lines whose prices or freshness changed are marked dirty; at the end of the batch each dirty line emits its
//   consensus, re-evaluates its arbitrage (the best fresh price of each outcome, kept in the line's state as the
//   ladders' tops change), and each dirty group of two or more lines re-evaluates its middles. A verification that
//   changes no price and no freshness marks nothing.
// - Freshness changes with time alone: a quote older than its book's stale threshold (engine/sla.ts) stops
//   counting. A timing wheel holds at most one entry per quote slot and wakes the line when it goes stale.
//
// Per-line state sits in the store's own line records after the line's identity (LS below), per-quote state in its
// quote records (QS) and ladder tuples (LD.FLAG): an update reads those records anyway, so the analytics' state
// costs few cache misses of its own. What was sent and must be compared against later (middles, arbitrages) lives
// in record pools. Records leave as CONS / ARB / FAIR / EVQ / MID (engine/records.ts). `scratch()` recomputes
// every set from the store alone; the property test holds the two equal.

import { consistentMoneyline, hasEdge, isArbitrageSum } from './analytics-math.js';
import { devigAll } from './devig.js';
import { FlatIndex } from './flat-index.js';
import { NumberList } from './number-list.js';
import { RecordPool, copyRecord } from './record-pool.js';
import { ARB, CHANGE, CONS, CONSO, EVQ, FAIR, MID, ROW, RecordBuffer } from './records.js';
import { LD, LINE_HEAD, MAX_OUTCOMES, type PriceStore, type StoreListener } from './price-store.js';
import {
  FIXED, MIDDLE_MARKET, N_METHODS, OUTCOMES, PREDICTION, SHARP_BOOK, SHARP_INDEX, TOPS_SIZE, counts,
  middlesOfGroup, pairJudged, staleMs, topTwo, writeArb, writeConsensusHead, writeExtremes,
} from './analytics-rows.js';

export { FIXED, MIDDLE_MARKET, SHARP_BOOK_IDS, isFresh, lineKeyOf, evKeyOf, midKeyOf } from './analytics-rows.js';
export { scratch, type ScratchSets } from './analytics-scratch.js';

/** Per-line state, LS.STRIDE numbers in the store's own record of the line (PriceStore.reserveLineState), after
 *  the line's identity that every update reads: one cache miss for both, and one record instead of a dozen
 *  separate arrays, each a cache miss with 1.2 M quotes spread at random (bench/analytics.ts). */
const N_SHARPS = SHARP_BOOK.length;
const LS = {
  // What every update reads or writes comes first, right after the line's identity in the store's record, then the
  // outcomes' blocks: an update touches three or four cache lines of the record (bench/analytics.ts). The rest,
  // read by a sharp's move, an arbitrage or a prediction market, follows at the end.
  /** the batch that marked the line's consensus dirty */
  DIRTY: 0,
  /** the batch that marked its arbitrage dirty */
  ARB_STAMP: 1,
  /** the batch in which its top two changed on either side (middles pairs with it are re-evaluated; -1: they have
   *  not been read since they last changed), and on which sides in that batch (MID_SIDES: bit 0 the over side,
   *  outcome 0, bit 1 the under side) */
  MID_STAMP: 2,
  /** sharps with a valid no-vig line on the line: bit per sharp index */
  SHARPS: 3,
  /** distinct books with a counted quote, prediction markets apart, and distinct prediction markets with one (every
   *  consensus record reads both: PBOOKS at the record's cold end cost a cache miss per dirty line at the end of a
   *  batch; bench/analytics.ts, the shard alone) */
  BOOKS: 4, PBOOKS: 5,
  /** arbitrage open (1) */
  ARB_OPEN: 6,
  /** outcomes whose consensus changed in the batch that marked the line dirty (bit per outcome), and 1 once the
   *  line's consensus was sent for every outcome (later, only the outcomes that changed: CONSO) */
  CONS_MASK: 7, CONS_SENT: 8,
  /** per outcome, the effective price of its ladder's first fresh quote (0: none), kept as the top changes: the
   *  arbitrage check at the end of a batch reads the three here instead of every outcome's ladder or block
   *  (bench/analytics.ts) */
  TOP: 9,
  MID_SIDES: 12,
  /** outcome o's block starts at O + o * OSIZE */
  O: 13,
  /** consensus running sum of implied probabilities (in units of 1 / FIXED) and count */
  SUM: 0, CNT: 1,
  /** bit 0 (other books) or 1 (prediction markets) set once EXT (PEXT) holds the extremes: from the line's first
   *  consensus sent (with prediction markets on it, for bit 1) until the line is freed */
  EXT_OK: 2,
  /** tuples in the ladder that are not fresh: while there are none, a quote's rank among fresh quotes is its place
   *  in the ladder, known without reading the tuples above it (bench/analytics.ts) */
  STALE: 3,
  /** best and worst counted raw price with their books: [best, book, worst, book] */
  EXT: 4,
  /** per sharp index: the highest fair probability of its no-vig line over the valid methods (0: none). The
   *  edge p * d - 1 is positive under some method exactly when it is under the largest p. */
  PMAX: 8,
  OSIZE: 8 + N_SHARPS,
  /** the batch in which a sharp's quotes on it changed, and which sharps (bit per sharp index) */
  SHARP_STAMP: 13 + 3 * (8 + N_SHARPS), SHARP_DIRTY: 14 + 3 * (8 + N_SHARPS),
  /** since when the arbitrage is open, and 1 + the index in arbPool of the record last sent (0: none) */
  ARB_SINCE: 15 + 3 * (8 + N_SHARPS), ARB_AT: 16 + 3 * (8 + N_SHARPS),
  /** per sharp index: 1 + the first quote slot of its book-line when it last changed on the line (0: none); the
   *  end of the batch checks the book-line is still this sharp's and on this line before it reads it */
  SHARP_SLOT: 17 + 3 * (8 + N_SHARPS),
  /** the prediction markets' consensus of outcome o at P + o * PSIZE: sum, count, extremes (a line without them
   *  never reads it) */
  P: 17 + N_SHARPS + 3 * (8 + N_SHARPS),
  PSUM: 0, PCNT: 1, PEXT: 2,
  PSIZE: 6,
  STRIDE: 17 + N_SHARPS + 3 * (8 + N_SHARPS) + 3 * 6,
} as const;
/** numbers per line record in the store, and where the analytics' state starts in one */
const LINE_ROW = LINE_HEAD + LS.STRIDE;

/** Per-quote state, QUOTE_STATE numbers inside the store's own record of the quote (PriceStore.stateOf), which
 *  the update has just read. */
export const QS = {
  /** when the quote goes stale (ms) */
  EXPIRY: 0,
  /** what it adds to its line's consensus sums, in units of 1 / FIXED (0: it does not count) */
  UNITS: 1,
  /** the wheel second its live entry sits in (0: none); entries in other seconds are left-overs, skipped */
  SCHED: 2,
  /** bit 0: fresh (its ladder tuple's LD.FLAG carries the same bit, and above it bit 1 + s while its edge against
   *  sharp index s is positive under some method) */
  BITS: 3,
} as const;

export interface AnalyticsBatch {
  cons: Float64Array; nCons: number;
  arb: Float64Array; nArb: number;
  fair: Float64Array; nFair: number;
  ev: Float64Array; nEv: number;
  mid: Float64Array; nMid: number;
}

export class Analytics implements StoreListener {
  private now = 0;
  /** what prefetch() loads ends here, so the loads are not dropped as unused */
  private sink = 0;
  private readonly out = {
    cons: new RecordBuffer(CONSO.STRIDE, 256),
    arb: new RecordBuffer(ARB.STRIDE, 16),
    fair: new RecordBuffer(FAIR.STRIDE, 16),
    ev: new RecordBuffer(EVQ.STRIDE, 64),
    mid: new RecordBuffer(MID.STRIDE, 16),
  };
  private readonly dirtyLines = new NumberList(1024);
  /** lines with a sharp marked in SHARP_DIRTY this batch */
  private readonly sharpLines = new NumberList(256);
  private readonly dirtyGroups = new NumberList(256);
  private batch = 1;
  private readonly arbPool = new RecordPool(ARB.STRIDE, 64);
  // per middles group
  private groupStamp = new Int32Array(1024);
  /** distinct books with a counted quote on any of its lines, and per (group, book) how many of the group's
   *  book-lines have one */
  private groupBooks = new Int32Array(1024);
  /** groupBooks when the group's middles were last evaluated */
  private groupBooksSeen = new Int32Array(1024);
  /** the batch in which a group lost a line (its middles are then evaluated whole) */
  private groupFull = new Int32Array(1024);
  private readonly only = new Uint8Array(64);
  private readonly groupBookLines = new FlatIndex(1024);
  /** per line of a middles market: its top two fresh quotes per side as middlesOfGroup reads them, refreshed when
   *  they may have changed (MID_STAMP) instead of searched again for every line of a dirty group */
  private tops = new Float64Array(1024 * TOPS_SIZE).fill(-1);
  private readonly wheel = new Map<number, number[]>();
  private wheelSecond = -1;
  /** middles published, in midPool (a record's KIND holds the stamp of the last evaluation that found it), found by
   *  (group, pair key) in midIndex and listed per group in groupMids */
  private readonly midPool = new RecordPool(MID.STRIDE, 256);
  /** per middle record: its place in its group's list (groupMids), so that one can be withdrawn without a search */
  private midPos = new Int32Array(256);
  private readonly midIndex = new FlatIndex(256);
  private readonly groupMids: number[][] = [];
  private midStamp = 0;
  /** the group being evaluated and its stamp, for middleFound */
  private midGroup = 0;
  private readonly middleFound: (rec: Float64Array) => void;
  private readonly middleGone: (lo: number, hi: number) => void;
  private readonly middleWarm: (pairs: Float64Array, n: number) => void;
  /** warmMiddles' scratch: per pair, where its index lookup starts, then its record's offset (-1: none) */
  private warmAt = new Int32Array(256);
  private readonly implied = new Float64Array(3);
  /** the first two of `implied`, for two-way lines */
  private readonly implied2 = this.implied.subarray(0, 2);
  /** an outcome's extremes as count() searches them (CONS outcome fields) */
  private readonly extremes = new Float64Array(CONS.OSIZE);
  /** sharpChanged's outcomes' highest fair probabilities before the change */
  private readonly pmaxWas = new Float64Array(3);

  constructor(private readonly store: PriceStore) {
    store.reserveLineState(LS.STRIDE);
    if (store.lineStride !== LINE_ROW) throw new Error('the line records of the store do not fit the analytics state');
    store.listener = this;
    this.middleFound = this.keepMiddle.bind(this);
    this.middleGone = this.withdrawMiddle.bind(this);
    this.middleWarm = this.warmMiddles.bind(this);
  }

  /** Starts a batch at wall-clock `now` (ms). */
  begin(now: number): void {
    this.now = now;
    this.batch++;
  }

  /** the store's line records, where each line's LS state lives (re-read: the store replaces them as it grows) */
  private get ls(): Float64Array {
    return this.store.lineRecords;
  }

  private ensureGroup(g: number): void {
    if (g < this.groupStamp.length) return;
    const n = Math.max(g + 1, this.groupStamp.length * 2);
    const grow = (a: Int32Array) => { const b = new Int32Array(n); b.set(a); return b; };
    this.groupStamp = grow(this.groupStamp);
    this.groupBooks = grow(this.groupBooks);
    this.groupBooksSeen = grow(this.groupBooksSeen);
    this.groupFull = grow(this.groupFull);
  }

  private fresh(slot: number): boolean {
    return (this.store.records[this.store.stateOf(slot) + QS.BITS] & 1) !== 0;
  }

  /** Sets a quote's EV bits (bit s per sharp index) in its ladder tuple at `at`, beside its freshness in bit 0. The
   *  tuple is the only place that keeps them: a sharp's move flips them while scanning the ladder, and a write to
   *  each quote's own record would cost a cache miss per flip (bench/analytics.ts). */
  private setEvMask(ladder: number[], at: number, mask: number): void {
    ladder[at + LD.FLAG] = (ladder[at + LD.FLAG] & 1) | (mask << 1);
  }

  /** Keeps the consensus sums in step with what a slot (its state at `q` in the store's records) adds: `price` its
   *  raw price while it counts, else 0;
   *  `old` the raw price it counted with until now (0: none). */
  private count(line: number, outcome: number, slot: number, q: number, book: number, old: number, price: number): void {
    if (old === price) return;
    const qs = this.store.records;
    const units = price === 0 ? 0 : Math.round(FIXED / price);
    const oldUnits = qs[q + QS.UNITS];
    qs[q + QS.UNITS] = units;
    const ls = this.ls;
    const b = line * LINE_ROW + LINE_HEAD;
    const i = b + LS.O + outcome * LS.OSIZE;
    const prediction = PREDICTION[book] === 1;
    const pi = b + LS.P + outcome * LS.PSIZE;
    // this outcome's consensus changed in this batch (markLine follows, and stamps DIRTY after this first mark)
    const m = b + LS.CONS_MASK;
    ls[m] = ls[b + LS.DIRTY] === this.batch ? ls[m] | (1 << outcome) : 1 << outcome;
    const sum = prediction ? pi + LS.PSUM : i + LS.SUM;
    const cnt = prediction ? pi + LS.PCNT : i + LS.CNT;
    ls[sum] += units - oldUnits;
    ls[cnt] += (units === 0 ? 0 : 1) - (oldUnits === 0 ? 0 : 1);
    // Once known, the extremes are kept: a quote beyond one takes it, and when the quote that held one leaves or
    // moves inwards (the best moving up, or the worst down, still holds it) the ladder is searched at once. The
    // update has just walked that ladder, so it is in the cache; by the end of a batch of random updates it has
    // left it again, and the search cost a cache miss or three (bench/analytics.ts, the shard alone).
    if ((ls[i + LS.EXT_OK] & (prediction ? 2 : 1)) !== 0) {
      const e = prediction ? pi + LS.PEXT : i + LS.EXT;
      if (old !== 0 && ((ls[e + 1] === book && !(price !== 0 && price >= ls[e])) || (ls[e + 3] === book && !(price !== 0 && price <= ls[e + 2])))) {
        const x = this.extremes;
        writeExtremes(this.store, line, outcome, prediction ? 0 : ls[cnt], prediction ? ls[cnt] : 0, true, 0, x, 0);
        const f = prediction ? CONS.PBEST : CONS.BEST;
        ls[e] = x[f]; ls[e + 1] = x[f + 1]; ls[e + 2] = x[f + 2]; ls[e + 3] = x[f + 3];
      } else if (price !== 0) {
        if (ls[e + 1] < 0 || price > ls[e] || (price === ls[e] && book < ls[e + 1])) { ls[e] = price; ls[e + 1] = book; }
        if (ls[e + 3] < 0 || price < ls[e + 2] || (price === ls[e + 2] && book < ls[e + 3])) { ls[e + 2] = price; ls[e + 3] = book; }
      }
    }
    this.countBooks(line, slot, book, prediction, units, oldUnits);
  }

  /** The book-line's first counted outcome counts its book on the line and in the group, its last uncounts it. */
  private countBooks(line: number, slot: number, book: number, prediction: boolean, units: number, oldUnits: number): void {
    if ((oldUnits === 0) === (units === 0)) return;
    // its outcomes are the neighbouring slots
    const qs = this.store.records;
    const ls = this.ls;
    const b = line * LINE_ROW + LINE_HEAD;
    const first = slot - (slot % MAX_OUTCOMES);
    let others = 0;
    for (let k = first; k < first + MAX_OUTCOMES; k++) if (k !== slot && qs[this.store.stateOf(k) + QS.UNITS] !== 0) others++;
    if (others !== 0) return;
    const step = units === 0 ? -1 : 1;
    ls[b + (prediction ? LS.PBOOKS : LS.BOOKS)] += step;
    this.groupBook(line, book, step);
  }

  /** A book-line of a middles market started (+1) or stopped (-1) counting: its group's distinct books. */
  private groupBook(line: number, book: number, step: number): void {
    if (MIDDLE_MARKET[this.store.lineMarket(line)] !== 1) return;
    const g = this.store.lineGroup(line);
    this.ensureGroup(g);
    const n = this.groupBookLines.get(g, book);
    const next = (n < 0 ? 0 : n) + step;
    if (next === 0) {
      this.groupBookLines.delete(g, book);
      this.groupBooks[g]--;
      this.markGroup(g); // every middle of the group carries its book count
    } else {
      if (n < 0) {
        this.groupBooks[g]++;
        this.markGroup(g);
      }
      this.groupBookLines.set(g, book, next);
    }
  }

  /** Marks a line's consensus dirty, its arbitrage when the change reached the top ARB.ALTS of a ladder (`rank`),
   *  and its group's middles when it reached the top two (a middle takes the best or second best per side) on
   *  `sides` (bit 0 the over side, outcome 0; bit 1 the under side). */
  private markLine(line: number, rank = 0, sides = 3): void {
    const b = line * LINE_ROW + LINE_HEAD;
    if (this.ls[b + LS.DIRTY] !== this.batch) {
      this.ls[b + LS.DIRTY] = this.batch;
      this.dirtyLines.push(line);
    }
    if (rank < ARB.ALTS) this.ls[b + LS.ARB_STAMP] = this.batch;
    if (rank >= 2) return;
    if (MIDDLE_MARKET[this.store.lineMarket(line)] === 1) {
      const was = this.ls[b + LS.MID_STAMP];
      // -1: neither side's tops were read since they last changed (a lone line), so both are read now
      if (was !== this.batch) this.ls[b + LS.MID_SIDES] = was === -1 ? 3 : sides;
      else this.ls[b + LS.MID_SIDES] |= sides;
      this.ls[b + LS.MID_STAMP] = this.batch;
      this.markGroup(this.store.lineGroup(line));
    }
  }

  /** Re-reads the effective price of the first fresh quote of a ladder into LS.TOP. Called when a change reached the
   *  top (no fresh quote above the changed one's place, before or after), the only changes that can move it. */
  private keepTop(line: number, outcome: number, ladder: readonly number[]): void {
    let k = 0;
    while (k < ladder.length && (ladder[k + LD.FLAG] & 1) === 0) k += LD.STRIDE;
    this.ls[line * LINE_ROW + LINE_HEAD + LS.TOP + outcome] = k < ladder.length ? ladder[k + LD.PRICE] : 0;
  }

  /** Lists a middles group for evaluation at the end of the batch. */
  private markGroup(group: number): void {
    this.ensureGroup(group);
    if (this.groupStamp[group] !== this.batch) {
      this.groupStamp[group] = this.batch;
      this.dirtyGroups.push(group);
    }
  }

  // StoreListener

  quote(line: number, outcome: number, slot: number, kind: number, oldPrice: number, oldRank: number, book: number,
    tuple: number, lu: number, removedFlag: number): void {
    const store = this.store;
    // a verification of a counted quote moves no price: its pair is as consistent as when it was counted (a move of
    // the other side that broke the pair would have uncounted it), so most observations of a real feed (seven in ten
    // of the simulator's) skip the judgement (scripts/branchcmp.mjs sim)
    if (kind === CHANGE.REMOVED || !pairJudged(store.lineMarket(line)) || (kind === CHANGE.VERIFIED && this.fresh(slot))) {
      this.update(line, outcome, slot, kind, oldPrice, oldRank, book, tuple, lu, removedFlag, true);
      // a side that leaves alone (a game's start drops the sides observed before it: PriceStore.dropBefore) frees
      // the other from an inconsistent pair: a side alone is not judged
      if (kind === CHANGE.REMOVED && pairJudged(store.lineMarket(line))) {
        const other = slot - outcome + (1 - outcome);
        const otherPrice = store.priceOf(other);
        if (otherPrice !== 0 && !consistentMoneyline(oldPrice, otherPrice)) this.pairChanged(line, 1 - outcome, other, book, true);
      }
      return;
    }
    // a two-way moneyline counts only in a consistent pair (consistentMoneyline); a price that makes or breaks the
    // pair turns the book's other side in or out too. Judged once here, so that a move that changes nothing of the
    // pair's consistency (nearly every one) costs a load and two or four divisions (scripts/branchcmp.mjs random)
    const other = slot - outcome + (1 - outcome);
    const otherPrice = store.priceOf(other);
    const ok = consistentMoneyline(store.priceOf(slot), otherPrice);
    this.update(line, outcome, slot, kind, oldPrice, oldRank, book, tuple, lu, removedFlag, ok);
    if (kind !== CHANGE.VERIFIED && otherPrice !== 0 && consistentMoneyline(kind === CHANGE.NEW ? 0 : oldPrice, otherPrice) !== ok) {
      this.pairChanged(line, 1 - outcome, other, book, ok);
    }
  }

  /** Re-judges the other side (`outcome`, `slot`) of a two-way moneyline book-line whose pair just became consistent
   *  (`ok`) or stopped being so: its state changes as a verification would change it (no price moved). */
  private pairChanged(line: number, outcome: number, slot: number, book: number, ok: boolean): void {
    const lu = this.store.lastUpdateOf(slot);
    const fresh = ok && counts(book) && this.now - lu <= staleMs(book);
    if (fresh === this.fresh(slot)) return;
    this.update(line, outcome, slot, CHANGE.VERIFIED, this.store.priceOf(slot), -1, book, -1, lu, 0, ok);
  }

  /** What quote() does; `consistent`: the quote's book-line is not an inconsistent moneyline pair. */
  private update(line: number, outcome: number, slot: number, kind: number, oldPrice: number, oldRank: number, book: number,
    tuple: number, lu: number, removedFlag: number, consistent: boolean): void {
    const store = this.store;
    const qs = store.records;
    const q = store.stateOf(slot);
    const was = (qs[q + QS.BITS] & 1) !== 0;
    const stale = line * LINE_ROW + LINE_HEAD + LS.O + outcome * LS.OSIZE + LS.STALE;
    if (kind === CHANGE.REMOVED) {
      if (!was) this.ls[stale]--;
      qs[q + QS.BITS] = 0;
      qs[q + QS.SCHED] = 0;
      this.count(line, outcome, slot, q, book, was ? oldPrice : 0, 0);
      // the tuple is gone; the quotes above its old place are where they were
      if (!was) return;
      this.leave(line, outcome, slot, book, this.freshAbove(line, outcome, null, oldRank * LD.STRIDE));
      if (removedFlag >> 1 !== 0) this.sendQuote(line, outcome, book, 0, 0, 0);
      return;
    }
    const now = this.now;
    const fresh = consistent && counts(book) && now - lu <= staleMs(book);
    const expiry = lu + staleMs(book);
    qs[q + QS.EXPIRY] = expiry;
    // a verification of a quote that stays fresh changes nothing derived (ages are read when served)
    if (was && fresh && kind === CHANGE.VERIFIED) return;
    if (kind === CHANGE.NEW ? !fresh : was !== fresh) this.ls[stale] += fresh ? -1 : 1;
    qs[q + QS.BITS] = fresh ? 1 : 0;
    const ladder = store.ladder(line, outcome);
    const at = tuple >= 0 ? tuple : store.tupleOf(slot);
    ladder[at + LD.FLAG] = (ladder[at + LD.FLAG] & ~1) | (fresh ? 1 : 0);
    this.count(line, outcome, slot, q, book, was ? oldPrice : 0, fresh ? ladder[at + LD.RAW] : 0);
    // one live wheel entry per slot, never later than the slot's expiry (a reused slot may hold a later one)
    if (fresh && (qs[q + QS.SCHED] === 0 || qs[q + QS.SCHED] > wheelSecondOf(expiry))) this.schedule(slot, expiry);
    if (!fresh) {
      if (was) {
        this.leave(line, outcome, slot, book, 0);
        this.dropEdges(line, outcome, book, ladder, at);
      }
      else if (kind === CHANGE.NEW) this.markLine(line, ARB.ALTS); // a new line has a consensus, if an empty one
      return;
    }
    // same price and still fresh: nothing derived changes (ages are read from the read model when served)
    if (was && kind !== CHANGE.NEW && ladder[at + LD.RAW] === oldPrice) return;
    // a quote that arrives, moves or turns fresh below the top of its ladder, before and after, leaves arbitrage
    // and middles alone. Only this quote moved, so its best place among fresh quotes, old or new, is the number of
    // fresh quotes above the higher of its two positions in the current ladder.
    const top = was && kind === CHANGE.PRICE && oldRank >= 0 ? Math.min(oldRank * LD.STRIDE, at) : at;
    const rank = this.freshAbove(line, outcome, ladder, top);
    this.markLine(line, rank, 1 << outcome);
    if (rank === 0) this.keepTop(line, outcome, ladder);
    const s = SHARP_INDEX[book];
    if (s >= 0) this.markSharp(line, s, slot);
    this.softEdges(line, outcome, book, ladder, at);
  }

  /** Loads what quote() reads of the line's record: the identity and hot fields (LINE_HEAD + LS.O, 20 numbers) and
   *  the outcome's block (LS.OSIZE, 11), a number from each cache line of 8 they can span wherever the record starts
   *  (bench/analytics.ts, the shard alone). */
  prefetch(line: number, outcome: number): void {
    const ls = this.ls;
    const b = line * LINE_ROW;
    const o = b + LINE_HEAD + LS.O + outcome * LS.OSIZE;
    this.sink = ls[b] + ls[b + 8] + ls[b + 16] + ls[b + LINE_HEAD + LS.O - 1] + ls[o] + ls[o + 8] + ls[o + LS.OSIZE - 1];
  }

  /** Loads what sharpChanged() will read of every sharp line of the batch, in passes of independent loads: their
   *  cache misses overlap each other, where one line after another each waited for its own. First the records'
   *  sharp fields and the ladders' headers, then what those point to: the sharp's quote record and the ladders'
   *  tuples where the bisection starts. */
  private touchSharpLines(): void {
    const lines = this.sharpLines.data;
    const n = this.sharpLines.length;
    const ls = this.ls;
    const store = this.store;
    let sink = 0;
    for (let j = 0; j < n; j++) {
      const b = lines[j] * LINE_ROW + LINE_HEAD;
      sink += ls[b + LS.SHARP_STAMP] + ls[b + LS.SHARP_SLOT + N_SHARPS - 1] + ls[b + LS.O + LS.PMAX] + ls[b + LS.O + LS.OSIZE + LS.PMAX];
      sink += store.ladder(lines[j], 0).length + store.ladder(lines[j], 1).length;
    }
    const qs = store.records;
    for (let j = 0; j < n; j++) {
      const line = lines[j];
      const b = line * LINE_ROW + LINE_HEAD;
      const bits = ls[b + LS.SHARP_DIRTY];
      for (let s = 0; s < N_SHARPS; s++) {
        const base = ls[b + LS.SHARP_SLOT + s] - 1;
        if ((bits & (1 << s)) !== 0 && base >= 0) sink += qs[store.stateOf(base)];
      }
      for (let o = 0; o < 2; o++) {
        const l = store.ladder(line, o);
        if (l.length > 0) sink += l[((l.length / LD.STRIDE) >> 1) * LD.STRIDE];
      }
    }
    this.sink = sink;
  }

  /** Loads what evaluateMiddles() will read of every dirty group, in passes of independent loads (as
   *  touchSharpLines): the groups' line lists and middle lists, then each line's MID_STAMP and ladder heads, and
   *  the kept middles' records of a group to be evaluated whole (a partial evaluation reads only those of the pairs
   *  it evaluates). A group of one line is left out: its evaluation reads one number. */
  private touchGroups(): void {
    const groups = this.dirtyGroups.data;
    const n = this.dirtyGroups.length;
    const store = this.store;
    let sink = 0;
    for (let j = 0; j < n; j++) {
      const lines = store.groupLines(groups[j]);
      const list = this.groupMids[groups[j]];
      if (lines !== undefined) sink += lines.length;
      if (list !== undefined) sink += list.length;
    }
    const ls = this.ls;
    const mids = this.midPool.data;
    for (let j = 0; j < n; j++) {
      const g = groups[j];
      const lines = store.groupLines(g);
      if (lines === undefined || lines.length < 2) continue;
      for (let k = 0; k < lines.length && k < 64; k++) {
        const l = lines[k];
        sink += ls[l * LINE_ROW + LINE_HEAD + LS.MID_STAMP] + store.ladder(l, 0).length + store.ladder(l, 1).length;
      }
      const list = this.groupMids[g];
      if (list !== undefined && (this.groupFull[g] === this.batch || this.groupBooks[g] !== this.groupBooksSeen[g])) {
        for (let k = 0; k < list.length; k++) sink += mids[list[k] * MID.STRIDE + MID.KIND];
      }
    }
    this.sink = sink;
  }

  /** Loads what emitConsensus() and evaluateArb() read of a line record, for flush(): the identity and hot fields,
   *  and both ends of the first two outcomes' consensus fields (SUM to EXT, 8 numbers that may span two cache
   *  lines). A three-way line's third outcome is left to the evaluation: loading it for every line measured no better
   *  (bench/analytics.ts, the shard alone). */
  private prefetchLine(line: number): void {
    const ls = this.ls;
    const b = line * LINE_ROW;
    const o = b + LINE_HEAD + LS.O;
    const e = LS.EXT + 3;
    this.sink = ls[b] + ls[b + 8] + ls[o - 1] + ls[o] + ls[o + e] + ls[o + LS.OSIZE] + ls[o + LS.OSIZE + e];
  }

  /** Fresh quotes above tuple offset `top` of a ladder, counted up to ARB.ALTS (all a caller asks): the place itself
   *  while every tuple of the ladder is fresh, else counted (`ladder` null: read from the store). */
  private freshAbove(line: number, outcome: number, ladder: readonly number[] | null, top: number): number {
    if (this.ls[line * LINE_ROW + LINE_HEAD + LS.O + outcome * LS.OSIZE + LS.STALE] === 0) return Math.min(top / LD.STRIDE, ARB.ALTS);
    return freshAbove(ladder ?? this.store.ladder(line, outcome), top);
  }

  lineFreed(line: number): void {
    // its quotes were all REMOVED first; what is left is the line-level state
    const b = line * LINE_ROW + LINE_HEAD;
    if (this.ls[b + LS.ARB_OPEN] === 1) this.closeArb(line);
    const off = this.out.cons.push();
    const d = this.out.cons.data;
    d.fill(0, off, off + CONSO.STRIDE);
    d[off + CONSO.KIND] = ROW.REMOVE;
    d[off + CONSO.EVENT] = this.store.lineEvent(line);
    d[off + CONSO.MARKET] = this.store.lineMarket(line);
    d[off + CONSO.POINT] = this.store.linePoint(line);
    d[off + CONSO.PLAYER] = this.store.linePlayer(line);
    d[off + CONSO.OUTCOME] = -1;
    for (let s = 0; s < N_SHARPS; s++) this.releaseFair(line, s);
    // everything but the batch stamps (a line id reused in this batch must not be listed dirty twice)
    this.ls.fill(0, b + LS.SHARPS, b + LS.SHARP_STAMP);
    this.ls.fill(0, b + LS.SHARP_STAMP + 1, b + LS.STRIDE);
    // no top two: a line that reuses the id holds none until its first fresh quote refreshes them
    if ((line + 1) * TOPS_SIZE <= this.tops.length) this.tops.fill(-1, line * TOPS_SIZE, (line + 1) * TOPS_SIZE);
    if (MIDDLE_MARKET[this.store.lineMarket(line)] === 1) {
      const g = this.store.lineGroup(line);
      if (this.store.groupLines(g).length === 1) this.groupFreed(g);
      else {
        // its pairs go: evaluate the whole group
        this.ensureGroup(g);
        this.groupFull[g] = this.batch;
        this.markLine(line);
      }
    }
  }

  /** A quote stops counting (removed, or stale): its line and, for a sharp, its no-vig lines are marked. */
  private leave(line: number, outcome: number, slot: number, book: number, rank: number): void {
    this.markLine(line, rank, 1 << outcome);
    if (rank === 0) this.keepTop(line, outcome, this.store.ladder(line, outcome));
    const s = SHARP_INDEX[book];
    if (s >= 0) this.markSharp(line, s, slot);
  }

  /** A sharp's quotes on the line changed: its no-vig line and the line's edges against it are recomputed once, at
   *  the end of the batch (a sharp usually posts every outcome of a line in one batch; the first would otherwise
   *  be de-vigged against the other's old price and sent, then again). */
  private markSharp(line: number, s: number, slot: number): void {
    this.ls[line * LINE_ROW + LINE_HEAD + LS.SHARP_SLOT + s] = slot - (slot % MAX_OUTCOMES) + 1;
    const i = line * LINE_ROW + LINE_HEAD + LS.SHARP_DIRTY;
    if (this.ls[line * LINE_ROW + LINE_HEAD + LS.SHARP_STAMP] !== this.batch) {
      this.ls[line * LINE_ROW + LINE_HEAD + LS.SHARP_STAMP] = this.batch;
      this.ls[i] = 0;
      this.sharpLines.push(line);
    }
    this.ls[i] = this.ls[i] | (1 << s);
  }

  private schedule(slot: number, at: number): void {
    const sec = wheelSecondOf(at);
    let list = this.wheel.get(sec);
    if (list === undefined) this.wheel.set(sec, (list = []));
    list.push(slot);
    this.store.records[this.store.stateOf(slot) + QS.SCHED] = sec;
    if (this.wheelSecond < 0 || sec < this.wheelSecond) this.wheelSecond = sec;
  }

  /** Advances the clock: quotes whose age passed their stale threshold stop counting. Call begin() first. */
  tick(): void {
    const now = this.now;
    // bucket s holds expiries in [(s - 1) s, s s): it may hold a due one as soon as now reaches (s - 1) s
    const last = Math.floor(now / 1000) + 1;
    if (this.wheelSecond < 0 || this.wheelSecond > last) return;
    const due = [...this.wheel.keys()].filter((sec) => sec <= last).sort((a, b) => a - b);
    for (const sec of due) {
      const slots = this.wheel.get(sec)!;
      this.wheel.delete(sec);
      for (const slot of slots) {
        const qs = this.store.records;
        const q = this.store.stateOf(slot);
        if (qs[q + QS.SCHED] !== sec) continue;
        qs[q + QS.SCHED] = 0;
        if (!this.fresh(slot)) continue;
        if (qs[q + QS.EXPIRY] >= now) {
          this.schedule(slot, qs[q + QS.EXPIRY]);
          continue;
        }
        qs[q + QS.BITS] = 0;
        const line = this.store.lineOfSlot(slot);
        const outcome = slot % MAX_OUTCOMES;
        this.ls[line * LINE_ROW + LINE_HEAD + LS.O + outcome * LS.OSIZE + LS.STALE]++;
        const ladder = this.store.ladder(line, outcome);
        const at = this.store.tupleOf(slot);
        ladder[at + LD.FLAG] = ladder[at + LD.FLAG] & ~1;
        const book = this.store.bookOf(slot);
        this.count(line, outcome, slot, q, book, ladder[at + LD.RAW], 0);
        this.leave(line, outcome, slot, book, freshAbove(ladder, at));
        this.dropEdges(line, outcome, book, ladder, at);
      }
    }
    this.wheelSecond = -1;
    for (const sec of this.wheel.keys()) if (this.wheelSecond < 0 || sec < this.wheelSecond) this.wheelSecond = sec;
  }

  // EV

  private releaseFair(line: number, s: number): void {
    const b = line * LINE_ROW + LINE_HEAD;
    for (let o = 0; o < 3; o++) this.ls[b + LS.O + o * LS.OSIZE + LS.PMAX + s] = 0;
  }

  /** Recomputes sharp `s`'s no-vig line on `line`, sends it, and updates the other books' bits against it. */
  private sharpChanged(line: number, s: number, book: number): void {
    const store = this.store;
    const n = OUTCOMES[store.lineMarket(line)];
    const lb = line * LINE_ROW + LINE_HEAD;
    const ls = this.ls;
    const had = (ls[lb + LS.SHARPS] & (1 << s)) !== 0;
    // the sharp's book-line as it last changed here (no index probe), if it is still on this line
    const base = ls[lb + LS.SHARP_SLOT + s] - 1;
    let ok = base >= 0 && store.bookOf(base) === book && store.lineOfSlot(base) === line;
    for (let o = 0; ok && o < n; o++) {
      const slot = base + o;
      if (store.priceOf(slot) === 0 || !this.fresh(slot)) ok = false;
      else this.implied[o] = 1 / store.priceOf(slot);
    }
    const pm = lb + LS.O + LS.PMAX + s;
    // the highest fair probabilities the line's bits were judged against until now
    const was = this.pmaxWas;
    for (let o = 0; o < n; o++) was[o] = ls[pm + o * LS.OSIZE];
    const buf = this.out.fair;
    let off = -1;
    if (ok) {
      // the no-vig line is solved straight into the record that carries it
      off = buf.push();
      const d = buf.data;
      d.fill(0, off + FAIR.P, off + FAIR.STRIDE);
      const valid = devigAll(n === 3 ? this.implied : this.implied2, d, off + FAIR.P);
      d[off + FAIR.VALID] = valid;
      if (valid === 0) {
        ok = false;
        buf.length--;
        off = -1;
      } else {
        for (let o = 0; o < 3; o++) {
          let best = 0;
          for (let m = 0; m < N_METHODS; m++) if ((valid & (1 << m)) !== 0 && d[off + FAIR.P + m * 3 + o] > best) best = d[off + FAIR.P + m * 3 + o];
          ls[pm + o * LS.OSIZE] = o < n ? best : 0;
        }
      }
    }
    if (!ok) {
      ls[lb + LS.SHARPS] &= ~(1 << s);
      this.releaseFair(line, s);
      if (!had) return;
      off = buf.push();
      buf.data.fill(0, off + FAIR.VALID, off + FAIR.STRIDE);
    } else ls[lb + LS.SHARPS] |= 1 << s;
    this.fairHead(line, s, off, ok);
    // The quotes whose bit against this sharp changes: a bit is set while the quote is fresh and hasEdge(p, eff),
    // which holds for a prefix of the ladder (ordered by eff, and rounding keeps p * eff monotone in eff), so only
    // the tuples between the old prefix's end and the new one's flip. Found by bisection, then walked: a sharp's
    // small move touches a tuple or two instead of the whole line (bench/analytics.ts).
    const bit = 1 << s;
    for (let o = 0; o < n; o++) {
      const p = ok ? ls[pm + o * LS.OSIZE] : 0;
      const p0 = was[o];
      if (p === p0) continue;
      const on = p > p0;
      const lo = on ? p0 : p;
      const hi = on ? p : p0;
      // not even the best fresh price has an edge at the higher probability: no fresh quote does, none flips
      if (!hasEdge(hi, ls[lb + LS.TOP + o])) continue;
      const ladder = store.ladder(line, o);
      let a = 0;
      let z = ladder.length / LD.STRIDE;
      while (a < z) {
        const m = (a + z) >> 1;
        if (hasEdge(lo, ladder[m * LD.STRIDE + LD.PRICE])) a = m + 1;
        else z = m;
      }
      for (let k = a * LD.STRIDE; k < ladder.length && hasEdge(hi, ladder[k + LD.PRICE]); k += LD.STRIDE) {
        const flag = ladder[k + LD.FLAG];
        const b = ladder[k + LD.BOOK];
        if ((flag & 1) === 0 || b === book) continue;
        const old = flag >> 1;
        const mask = on ? old | bit : old & ~bit;
        if (mask === old) continue;
        this.setEvMask(ladder, k, mask);
        this.sendQuote(line, o, b, ladder[k + LD.RAW], ladder[k + LD.PRICE], mask);
      }
    }
  }

  /** A quote moved (or arrived fresh): its bits against every sharp quoting the line; sent when they change (a
   *  quote that stays +EV as it moves is priced from the read model when served). */
  private softEdges(line: number, outcome: number, book: number, ladder: number[], at: number): void {
    const ls = this.ls;
    const eff = ladder[at + LD.PRICE];
    let sharps = ls[line * LINE_ROW + LINE_HEAD + LS.SHARPS];
    let mask = 0;
    for (let s = 0, p = line * LINE_ROW + LINE_HEAD + LS.O + outcome * LS.OSIZE + LS.PMAX; sharps !== 0; s++, sharps >>= 1, p++) {
      if ((sharps & 1) !== 0 && SHARP_BOOK[s] !== book && hasEdge(ls[p], eff)) mask |= 1 << s;
    }
    if (mask === ladder[at + LD.FLAG] >> 1) return;
    this.setEvMask(ladder, at, mask);
    this.sendQuote(line, outcome, book, ladder[at + LD.RAW], eff, mask);
  }

  /** Withdraws a quote that stopped counting (its tuple at `at`) from the EV set. */
  private dropEdges(line: number, outcome: number, book: number, ladder: number[], at: number): void {
    if (ladder[at + LD.FLAG] >> 1 === 0) return;
    this.setEvMask(ladder, at, 0);
    this.sendQuote(line, outcome, book, 0, 0, 0);
  }

  private sendQuote(line: number, outcome: number, book: number, raw: number, eff: number, mask: number): void {
    const store = this.store;
    const off = this.out.ev.push();
    const d = this.out.ev.data;
    d[off + EVQ.KIND] = mask === 0 ? ROW.REMOVE : ROW.UPSERT;
    d[off + EVQ.EVENT] = store.lineEvent(line);
    d[off + EVQ.MARKET] = store.lineMarket(line);
    d[off + EVQ.POINT] = store.linePoint(line);
    d[off + EVQ.PLAYER] = store.linePlayer(line);
    d[off + EVQ.OUTCOME] = outcome;
    d[off + EVQ.BOOK] = book;
    d[off + EVQ.PRICE] = raw;
    d[off + EVQ.EFF] = eff;
    d[off + EVQ.MASK] = mask;
  }

  /** The identity of the FAIR record at `off`: sharp s's no-vig line on `line` (UPSERT) or its removal. */
  private fairHead(line: number, s: number, off: number, upsert: boolean): void {
    const store = this.store;
    const d = this.out.fair.data;
    d[off + FAIR.KIND] = upsert ? ROW.UPSERT : ROW.REMOVE;
    d[off + FAIR.EVENT] = store.lineEvent(line);
    d[off + FAIR.MARKET] = store.lineMarket(line);
    d[off + FAIR.POINT] = store.linePoint(line);
    d[off + FAIR.PLAYER] = store.linePlayer(line);
    d[off + FAIR.SHARP] = SHARP_BOOK[s];
  }

  // End of batch

  /** Emits what the batch changed and hands the records over (buffers are reset). With `copy` false the arrays are
   *  views of the buffers, valid until the next begin() (the shard encodes them at once, saving a copy). */
  flush(copy = true): AnalyticsBatch {
    const store = this.store;
    // the sharps first: their no-vig lines settle every EV bit of their lines
    this.touchSharpLines();
    for (let j = 0; j < this.sharpLines.length; j++) {
      const line = this.sharpLines.data[j];
      const b = line * LINE_ROW + LINE_HEAD;
      if (!store.lineLive(line) || this.ls[b + LS.SHARP_STAMP] !== this.batch) continue;
      for (let s = 0, bits = this.ls[b + LS.SHARP_DIRTY]; bits !== 0; s++, bits >>= 1) {
        if ((bits & 1) !== 0) this.sharpChanged(line, s, SHARP_BOOK[s]);
      }
    }
    this.sharpLines.length = 0;
    const dirty = this.dirtyLines.data;
    const nDirty = this.dirtyLines.length;
    // by the end of a batch of random updates the dirty lines' records have left the cache again: one pass of
    // independent loads first, so their misses overlap, instead of each line waiting for its own (bench/analytics.ts)
    for (let j = 0; j < nDirty; j++) this.prefetchLine(dirty[j]);
    for (let j = 0; j < nDirty; j++) {
      const line = dirty[j];
      const b = line * LINE_ROW + LINE_HEAD;
      if (!store.lineLive(line) || this.ls[b + LS.DIRTY] !== this.batch) continue;
      this.emitConsensus(line);
      if (this.ls[b + LS.ARB_STAMP] === this.batch) this.evaluateArb(line);
    }
    this.dirtyLines.length = 0;
    this.touchGroups();
    for (let j = 0; j < this.dirtyGroups.length; j++) this.evaluateMiddles(this.dirtyGroups.data[j]);
    this.dirtyGroups.length = 0;
    const o = this.out;
    const nCons = o.cons.length;
    const nArb = o.arb.length;
    const nFair = o.fair.length;
    const nEv = o.ev.length;
    const nMid = o.mid.length;
    const get = (b: RecordBuffer) => (copy ? b.take() : b.drain());
    return { cons: get(o.cons), nCons, arb: get(o.arb), nArb, fair: get(o.fair), nFair, ev: get(o.ev), nEv, mid: get(o.mid), nMid };
  }

  /** Sends the consensus of the line's outcomes that changed in this batch (every outcome the first time), one
   *  CONSO record each. */
  private emitConsensus(line: number): void {
    const ls = this.ls;
    const lb = line * LINE_ROW + LINE_HEAD;
    const store = this.store;
    const n = OUTCOMES[store.lineMarket(line)];
    // none changed: e.g. a quote that does not count arrived, and nothing is sent
    const mask = ls[lb + LS.CONS_SENT] === 1 ? ls[lb + LS.CONS_MASK] : (1 << n) - 1;
    if (mask === 0) return;
    ls[lb + LS.CONS_SENT] = 1;
    const anyP = ls[lb + LS.PBOOKS] !== 0;
    for (let o = 0; o < n; o++) {
      if ((mask & (1 << o)) === 0) continue;
      const off = this.out.cons.push();
      const d = this.out.cons.data;
      writeConsensusHead(store, line, d, off);
      d[off + CONSO.OUTCOME] = o;
      d[off + CONSO.BOOKS] = ls[lb + LS.BOOKS];
      d[off + CONSO.PBOOKS] = ls[lb + LS.PBOOKS];
      const b = off + CONSO.F;
      const i = lb + LS.O + o * LS.OSIZE;
      const cnt = ls[i + LS.CNT];
      d[b + CONS.SUM] = cnt === 0 ? 0 : ls[i + LS.SUM] / FIXED;
      d[b + CONS.CNT] = cnt;
      let ok = ls[i + LS.EXT_OK];
      const pi = lb + LS.P + o * LS.PSIZE;
      if (!anyP) {
        // no prediction market counts on the line: its part of the record is not read (and bit 1 means nothing)
        d[b + CONS.PSUM] = 0; d[b + CONS.PCNT] = 0;
        d[b + CONS.PBEST] = 0; d[b + CONS.PBEST_BOOK] = -1; d[b + CONS.PWORST] = 0; d[b + CONS.PWORST_BOOK] = -1;
        ok |= 2;
      }
      if (ok !== 3) writeExtremes(store, line, o, (ok & 1) !== 0 ? 0 : cnt, (ok & 2) !== 0 ? 0 : ls[pi + LS.PCNT], true, 0, d, b);
      const e = i + LS.EXT;
      if ((ok & 1) !== 0) {
        d[b + CONS.BEST] = ls[e]; d[b + CONS.BEST_BOOK] = ls[e + 1]; d[b + CONS.WORST] = ls[e + 2]; d[b + CONS.WORST_BOOK] = ls[e + 3];
      } else {
        ls[e] = d[b + CONS.BEST]; ls[e + 1] = d[b + CONS.BEST_BOOK]; ls[e + 2] = d[b + CONS.WORST]; ls[e + 3] = d[b + CONS.WORST_BOOK];
      }
      if (anyP) this.predictionConsensus(d, b, pi, ok);
      if (ok !== 3) ls[i + LS.EXT_OK] = anyP ? 3 : ls[i + LS.EXT_OK] | 1;
    }
  }

  /** The prediction markets' part of an outcome's consensus (record fields at b, their state at pi): sums, and the
   *  extremes kept (bit 1 of `ok`) or just searched (written into the record by writeExtremes: kept now). */
  private predictionConsensus(d: Float64Array, b: number, pi: number, ok: number): void {
    const ls = this.ls;
    const pcnt = ls[pi + LS.PCNT];
    d[b + CONS.PSUM] = pcnt === 0 ? 0 : ls[pi + LS.PSUM] / FIXED;
    d[b + CONS.PCNT] = pcnt;
    const pe = pi + LS.PEXT;
    if ((ok & 2) !== 0) {
      d[b + CONS.PBEST] = ls[pe]; d[b + CONS.PBEST_BOOK] = ls[pe + 1]; d[b + CONS.PWORST] = ls[pe + 2]; d[b + CONS.PWORST_BOOK] = ls[pe + 3];
    } else {
      ls[pe] = d[b + CONS.PBEST]; ls[pe + 1] = d[b + CONS.PBEST_BOOK]; ls[pe + 2] = d[b + CONS.PWORST]; ls[pe + 3] = d[b + CONS.PWORST_BOOK];
    }
  }

  private evaluateArb(line: number): void {
    // most lines hold no arbitrage: the implied sum of each outcome's best fresh price says so before the record
    // is written (the same sum writeArb takes, in the same order)
    const n = OUTCOMES[this.store.lineMarket(line)];
    const ls = this.ls;
    const top = line * LINE_ROW + LINE_HEAD + LS.TOP;
    let S = 0;
    for (let o = 0; o < n && S < 1; o++) {
      const p = ls[top + o];
      S = p !== 0 ? S + 1 / p : Infinity;
    }
    if (!isArbitrageSum(S)) {
      if (this.ls[line * LINE_ROW + LINE_HEAD + LS.ARB_OPEN] === 1) this.closeArb(line);
      return;
    }
    this.writeArbRecord(line);
  }

  private writeArbRecord(line: number): void {
    const buf = this.out.arb;
    const off = buf.push();
    const S = writeArb(this.store, line, true, buf.data, off);
    if (isArbitrageSum(S)) {
      const d = buf.data;
      const lb = line * LINE_ROW + LINE_HEAD;
      let r = this.ls[lb + LS.ARB_AT] - 1;
      if (this.ls[lb + LS.ARB_OPEN] === 0) {
        this.ls[lb + LS.ARB_OPEN] = 1;
        this.ls[lb + LS.ARB_SINCE] = this.now;
      } else if (r >= 0 && sameArb(this.arbPool.data, r * ARB.STRIDE, d, off)) {
        buf.length--; // unchanged: nothing to send
        return;
      }
      d[off + ARB.KIND] = ROW.UPSERT;
      d[off + ARB.DETECTED_AT] = this.ls[lb + LS.ARB_SINCE];
      if (r < 0) this.ls[lb + LS.ARB_AT] = (r = this.arbPool.alloc()) + 1;
      copyRecord(d, off, this.arbPool.data, r * ARB.STRIDE, ARB.STRIDE);
      return;
    }
    buf.length--;
    if (this.ls[line * LINE_ROW + LINE_HEAD + LS.ARB_OPEN] === 1) this.closeArb(line);
  }

  private closeArb(line: number): void {
    const lb = line * LINE_ROW + LINE_HEAD;
    this.ls[lb + LS.ARB_OPEN] = 0;
    if (this.ls[lb + LS.ARB_AT] > 0) this.arbPool.release(this.ls[lb + LS.ARB_AT] - 1);
    this.ls[lb + LS.ARB_AT] = 0;
    const off = this.out.arb.push();
    const d = this.out.arb.data;
    d.fill(-1, off, off + ARB.STRIDE);
    d[off + ARB.KIND] = ROW.REMOVE;
    d[off + ARB.EVENT] = this.store.lineEvent(line);
    d[off + ARB.MARKET] = this.store.lineMarket(line);
    d[off + ARB.POINT] = this.store.linePoint(line);
    d[off + ARB.PLAYER] = this.store.linePlayer(line);
  }

  private groupFreed(g: number): void {
    const list = this.groupMids[g];
    if (list === undefined) return;
    while (list.length > 0) this.dropMiddle(g, list, list.length - 1);
  }

  /** Withdraws the middle at position i of its group's list. */
  private dropMiddle(g: number, list: number[], i: number): void {
    const r = list[i];
    const at = r * MID.STRIDE;
    const pool = this.midPool.data;
    this.midIndex.delete(g, midPairKey(pool[at + MID.LO], pool[at + MID.HI]));
    this.pushMiddle(ROW.REMOVE, pool, at);
    this.midPool.release(r);
    const last = list.pop()!;
    if (last !== r) {
      list[i] = last;
      this.midPos[last] = i;
    }
  }

  /** Loads what keepMiddle() or withdrawMiddle() will read for the n pairs of points of group midGroup in `pairs`
   *  (lo, hi at 2i, 2i + 1): their index buckets, then the records found there. Each level's addresses are computed
   *  first and loaded in a loop that does nothing else, so that the loads' cache misses overlap, where each pair's
   *  lookup and comparison waited for two of its own in turn (with a hash or a probe between two loads the processor
   *  keeps only one or two in flight; scripts/branchcmp.mjs wide). */
  private warmMiddles(pairs: Float64Array, n: number): void {
    if (this.warmAt.length < n) this.warmAt = new Int32Array(Math.max(n, this.warmAt.length * 2));
    const at = this.warmAt;
    const g = this.midGroup;
    const index = this.midIndex;
    for (let i = 0; i < n; i++) at[i] = index.startOf(g, midPairKey(pairs[2 * i], pairs[2 * i + 1]));
    let sink = 0;
    sink += index.touchAll(at, n);
    for (let i = 0; i < n; i++) {
      const r = index.get(g, midPairKey(pairs[2 * i], pairs[2 * i + 1]));
      at[i] = r < 0 ? -1 : r * MID.STRIDE;
    }
    // sameMiddle reads numbers 1 to MID.STRIDE - 1, which may span two cache lines
    const data = this.midPool.data;
    for (let i = 0; i < n; i++) if (at[i] >= 0) sink += data[at[i] + 1] + data[at[i] + MID.STRIDE - 1];
    this.sink = sink;
  }

  /** The evaluation of group midGroup found no middle on the pair (lo, hi): one published there is withdrawn. */
  private withdrawMiddle(lo: number, hi: number): void {
    const g = this.midGroup;
    const r = this.midIndex.get(g, midPairKey(lo, hi));
    if (r >= 0) this.dropMiddle(g, this.groupMids[g], this.midPos[r]);
  }

  /** Re-evaluates a group's middles and publishes what changed; unchanged records are kept, not rebuilt. Only the
   *  pairs with a line whose top two changed are evaluated, unless the group lost a line or its book count
   *  changed (every record carries it): then all of them. */
  private evaluateMiddles(g: number): void {
    const store = this.store;
    const lines = store.groupLines(g);
    let list = this.groupMids[g];
    if (lines !== undefined && lines.length === 1 && (list === undefined || list.length === 0)) {
      // a lone line pairs with nothing: its top two are read when another line joins (MID_STAMP -1 says so), not
      // at every move (every book on one total or spread: most groups; bench/analytics.ts)
      const at = lines[0] * LINE_ROW + LINE_HEAD + LS.MID_STAMP;
      if (this.ls[at] === this.batch) this.ls[at] = -1;
      return;
    }
    const stamp = ++this.midStamp;
    const full = this.groupFull[g] === this.batch || this.groupBooks[g] !== this.groupBooksSeen[g] || list === undefined || list.length === 0;
    this.groupBooksSeen[g] = this.groupBooks[g];
    let only: Uint8Array | null = null;
    if (lines !== undefined) {
      only = full ? null : this.only;
      // every line's tops, also past the first 64 that pair up (a removal may move one of them up)
      for (let j = 0; j < lines.length; j++) {
        const l = lines[j];
        const ms = l * LINE_ROW + LINE_HEAD + LS.MID_STAMP;
        // tops not read since they changed: both sides
        if (this.ls[ms] === -1) {
          this.ls[ms] = this.batch;
          this.ls[ms - LS.MID_STAMP + LS.MID_SIDES] = 3;
        }
        const sides = this.ls[ms] === this.batch ? this.ls[ms - LS.MID_STAMP + LS.MID_SIDES] : 0;
        // every line of the group has tops to read (none until refreshed)
        if ((l + 1) * TOPS_SIZE > this.tops.length) {
          const grown = new Float64Array(Math.max((l + 1) * TOPS_SIZE, this.tops.length * 2)).fill(-1);
          grown.set(this.tops);
          this.tops = grown;
        }
        if ((sides & 1) !== 0) topTwo(store, l, 0, true, 0, this.tops, l * TOPS_SIZE);
        if ((sides & 2) !== 0) topTwo(store, l, 1, true, 0, this.tops, l * TOPS_SIZE + 6);
        if (only === null || j >= 64) continue;
        only[j] = sides;
      }
    }
    if (lines !== undefined && lines.length > 1 && store.lineLive(lines[0])) {
      this.midGroup = g;
      // a partial evaluation withdraws the middles of the pairs it evaluated as it finds them gone; it speaks for
      // no other pair, so the group's other middles are not read (a wide group holds a middle for most of its n^2 / 2
      // pairs: scripts/branchcmp.mjs wide)
      middlesOfGroup(store, lines, true, 0, this.groupBooks[g], only, this.middleFound, this.tops, only === null ? null : this.middleGone,
        this.middleWarm);
      list = this.groupMids[g];
    }
    if (list === undefined || only !== null) return;
    // after a whole evaluation, records it did not meet are gone (KIND holds the stamp of the evaluation that last
    // met them)
    const pool = this.midPool;
    for (let i = list.length - 1; i >= 0; i--) {
      if (pool.data[list[i] * MID.STRIDE + MID.KIND] !== stamp) this.dropMiddle(g, list, i);
    }
  }

  /** A middle found by the evaluation of group midGroup (stamp midStamp): kept, and sent when it changed. */
  private keepMiddle(rec: Float64Array): void {
    const g = this.midGroup;
    const key = midPairKey(rec[MID.LO], rec[MID.HI]);
    let r = this.midIndex.get(g, key);
    if (r >= 0 && sameMiddle(this.midPool.data, r * MID.STRIDE, rec)) {
      this.midPool.data[r * MID.STRIDE + MID.KIND] = this.midStamp;
      return;
    }
    if (r < 0) {
      r = this.midPool.alloc();
      this.midIndex.set(g, key, r);
      let list = this.groupMids[g];
      if (list === undefined) this.groupMids[g] = list = [];
      if (r >= this.midPos.length) {
        const grown = new Int32Array(Math.max(r + 1, this.midPos.length * 2));
        grown.set(this.midPos);
        this.midPos = grown;
      }
      this.midPos[r] = list.length;
      list.push(r);
    }
    const at = r * MID.STRIDE;
    copyRecord(rec, 0, this.midPool.data, at, MID.STRIDE);
    this.midPool.data[at + MID.KIND] = this.midStamp;
    this.pushMiddle(ROW.UPSERT, this.midPool.data, at);
  }

  private pushMiddle(kind: number, from: Float64Array, at: number): void {
    const off = this.out.mid.push();
    copyRecord(from, at, this.out.mid.data, off, MID.STRIDE);
    this.out.mid.data[off + MID.KIND] = kind;
  }
}

/** a (lo, hi) pair of quarter-point lines as one number */
function midPairKey(lo: number, hi: number): number {
  return Math.round(lo * 4 + 8192) * 32768 + Math.round(hi * 4 + 8192);
}

/** The wheel bucket of an expiry time: bucket s holds expiries in [(s - 1) s, s s). */
function wheelSecondOf(at: number): number {
  return Math.floor(at / 1000) + 1;
}

/** a kept middle (pool at `at`) equals a freshly found one, KIND aside (NaN equals NaN: a missing point) */
function sameMiddle(pool: Float64Array, at: number, rec: Float64Array): boolean {
  for (let i = 1; i < MID.STRIDE; i++) {
    const a = pool[at + i];
    const b = rec[i];
    if (a !== b && !(a !== a && b !== b)) return false;
  }
  return true;
}

function sameArb(pool: Float64Array, at: number, d: Float64Array, off: number): boolean {
  for (let i: number = ARB.N; i < ARB.STRIDE; i++) {
    if (i === ARB.DETECTED_AT) continue;
    if (pool[at + i] !== d[off + i]) return false;
  }
  return true;
}

/** fresh quotes (FLAG 1) above tuple offset `top` of a ladder, counted up to ARB.ALTS (all a caller asks) */
function freshAbove(ladder: readonly number[], top: number): number {
  let rank = 0;
  for (let k = 0; k < top && rank < ARB.ALTS; k += LD.STRIDE) if ((ladder[k + LD.FLAG] & 1) === 1) rank++;
  return rank;
}
