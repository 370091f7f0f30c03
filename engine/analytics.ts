// Incremental analytics kept inside a shard, on every price update (DESIGN.md section 2, issue 3): consensus,
// arbitrage, +EV against each sharp book's no-vig line for every de-vig method, and middles.
//
// The store tells the analytics of every quote change as it happens (StoreListener). What it does then:
// - EV is kept as one bit mask per quote, bit (sharp, method) set while its edge is positive. A soft book's
//   move recomputes its own mask against the sharps that quote the line; a sharp's move recomputes its no-vig
//   line (sent once as a FAIR record) and the masks of the line's other quotes. A quote is sent (EVQ) only when
//   its mask changes: a sharp's move no longer re-sends every +EV quote of the line, a +EV quote's move sends
//   nothing unless it crosses zero somewhere, and the main thread prices a row from the read model's quote and the
//   FAIR records.
// - Consensus is kept as running sums per line and outcome (implied probabilities in fixed point, so adding and
//   removing is exact and the sums equal a from-scratch recomputation bit for bit), counts, and distinct books
//   per line; best and worst prices come from the ends of the ladders.
// - Lines whose prices or freshness changed are marked dirty; at the end of the batch each dirty line emits its
//   consensus, re-evaluates its arbitrage (the fresh top of each ladder), and each dirty group re-evaluates its
//   middles. A verification that changes no price and no freshness marks nothing.
// - Freshness changes with time alone: a quote older than its book's stale threshold (engine/sla.ts) stops
//   counting. A timing wheel holds at most one entry per quote slot and wakes the line when it goes stale.
//
// Records leave as CONS / ARB / FAIR / EVQ / MID (engine/records.ts). `scratch()` recomputes every set from the store
// alone; the property test holds the two equal.

import { devigAll } from './devig.js';
import { FlatIndex } from './flat-index.js';
import { ARB, CHANGE, CONS, EVQ, FAIR, MID, ROW, RecordBuffer } from './records.js';
import { LD, MAX_OUTCOMES, type PriceStore, type StoreListener } from './price-store.js';
import {
  FIXED, MAX_SHARPS, MIDDLE_MARKET, SPREADS, N_METHODS, OUTCOMES, PREDICTION, SHARP_BOOK, SHARP_INDEX, counts, middlesOfGroup,
  staleMs, writeArb, writeConsensusHead, writeExtremes,
} from './analytics-rows.js';

export { SHARP_BOOK_IDS, isFresh, lineKeyOf, evKeyOf, midKeyOf } from './analytics-rows.js';
export { scratch, type ScratchSets } from './analytics-scratch.js';

/** a no-vig line in the fair pool: VALID then P + m * 3 + o, as in the FAIR record */
const FL = { VALID: 0, P: 1, STRIDE: 1 + N_METHODS * 3 } as const;
const ALL_METHODS = (1 << N_METHODS) - 1;

export interface AnalyticsBatch {
  cons: Float64Array; nCons: number;
  arb: Float64Array; nArb: number;
  fair: Float64Array; nFair: number;
  ev: Float64Array; nEv: number;
  mid: Float64Array; nMid: number;
}

export class Analytics implements StoreListener {
  private now = 0;
  private readonly out = {
    cons: new RecordBuffer(CONS.STRIDE, 256),
    arb: new RecordBuffer(ARB.STRIDE, 16),
    fair: new RecordBuffer(FAIR.STRIDE, 16),
    ev: new RecordBuffer(EVQ.STRIDE, 64),
    mid: new RecordBuffer(MID.STRIDE, 16),
  };
  // per line
  private dirtyStamp = new Int32Array(1024);
  private arbStamp = new Int32Array(1024);
  private readonly dirtyLines: number[] = [];
  private groupStamp = new Int32Array(1024);
  private readonly dirtyGroups: number[] = [];
  private batch = 1;
  private arbOpen = new Uint8Array(1024);
  private arbSince = new Float64Array(1024);
  private readonly arbLast = new Map<number, Float64Array>();
  /** sharps with a valid no-vig line on the line: bit per sharp index */
  private sharpMask = new Uint8Array(1024);
  /** per (line, sharp index): 1 + the no-vig line's index in the fair pool, 0 for none */
  private fairAt = new Int32Array(1024 * MAX_SHARPS);
  private fairPool = new Float64Array(256 * FL.STRIDE);
  private fairNext = 0;
  private readonly fairFree: number[] = [];
  /** consensus running sums per (line, outcome): implied probabilities in units of 1 / FIXED, counts, for
   *  non-prediction and prediction books apart */
  private sum = new Float64Array(1024 * 3);
  private cnt = new Int32Array(1024 * 3);
  private psum = new Float64Array(1024 * 3);
  private pcnt = new Int32Array(1024 * 3);
  /** per middles group: distinct books with a counted quote on any of its lines, and per (group, book) how many
   *  of the group's book-lines have one */
  private groupBooks = new Int32Array(1024);
  /** groupBooks when the group's middles were last evaluated */
  private groupBooksSeen = new Int32Array(1024);
  /** the batch in which a group lost a line (its middles are then evaluated whole) */
  private groupFull = new Int32Array(1024);
  /** the batch in which a line's top two changed on either side (middles pairs with it are re-evaluated) */
  private midLineStamp = new Int32Array(1024);
  private readonly only = new Uint8Array(64);
  private readonly dirtyX: number[] = [];
  private readonly groupBookLines = new FlatIndex(1024);
  /** best and worst counted raw price per (line, outcome) with their books, non-prediction then prediction books:
   *  [best, book, worst, book] x 2; extOk bit 0 (non-prediction) or 1 (prediction) set while they are known */
  private ext = new Float64Array(1024 * 3 * 8);
  private extOk = new Uint8Array(1024 * 3);
  /** distinct books with a counted quote per line, non-prediction and prediction */
  private books = new Int32Array(1024);
  private pbooks = new Int32Array(1024);
  // per quote slot
  private fresh = new Uint8Array(4096);
  /** the raw price a slot adds to its line's consensus sums (0: none) */
  private counted = new Float64Array(4096);
  /** per book-line (slot / MAX_OUTCOMES): its quotes that count in the consensus */
  private countedOutcomes = new Uint8Array(4096 / MAX_OUTCOMES + 1);
  /** bit (sharp * N_METHODS + method) set while the quote's edge against that sharp and method is positive */
  private evMask = new Int32Array(4096);
  /** the wheel second a slot's live entry sits in (0: none); entries in other seconds are left-overs, skipped */
  private scheduled = new Float64Array(4096);
  private expiry = new Float64Array(4096);
  private readonly wheel = new Map<number, number[]>();
  private wheelSecond = -1;
  /** middles published per group: pair key to the record (its KIND slot holds the stamp of the last evaluation
   *  that found it) */
  private readonly middles = new Map<number, Map<number, Float64Array>>();
  private midStamp = 0;
  private readonly implied = new Float64Array(3);
  /** the first two of `implied`, for two-way lines */
  private readonly implied2 = this.implied.subarray(0, 2);
  private readonly fairAll = new Float64Array(N_METHODS * 3);
  private readonly newMask = new Int32Array(1);

  constructor(private readonly store: PriceStore) {
    store.listener = this;
  }

  /** Starts a batch at wall-clock `now` (ms). */
  begin(now: number): void {
    this.now = now;
    this.batch++;
  }

  private ensureLine(line: number): void {
    if (line < this.dirtyStamp.length) return;
    const n = Math.max(line + 1, this.dirtyStamp.length * 2);
    const grow8 = (a: Uint8Array) => { const b = new Uint8Array(n); b.set(a); return b; };
    const grow32 = (a: Int32Array) => { const b = new Int32Array(n); b.set(a); return b; };
    this.dirtyStamp = grow32(this.dirtyStamp);
    this.arbStamp = grow32(this.arbStamp);
    this.groupStamp = grow32(this.groupStamp);
    this.arbOpen = grow8(this.arbOpen);
    this.sharpMask = grow8(this.sharpMask);
    this.books = grow32(this.books);
    this.groupBooks = grow32(this.groupBooks);
    this.groupBooksSeen = grow32(this.groupBooksSeen);
    this.groupFull = grow32(this.groupFull);
    this.midLineStamp = grow32(this.midLineStamp);
    this.pbooks = grow32(this.pbooks);
    const growF = (a: Float64Array, m: number) => { const b = new Float64Array(n * m); b.set(a); return b; };
    const grow32m = (a: Int32Array, m: number) => { const b = new Int32Array(n * m); b.set(a); return b; };
    this.arbSince = growF(this.arbSince, 1);
    this.fairAt = grow32m(this.fairAt, MAX_SHARPS);
    this.sum = growF(this.sum, 3);
    this.psum = growF(this.psum, 3);
    this.cnt = grow32m(this.cnt, 3);
    this.ext = growF(this.ext, 3 * 8);
    const ok = new Uint8Array(n * 3); ok.set(this.extOk); this.extOk = ok;
    this.pcnt = grow32m(this.pcnt, 3);
  }

  private ensureSlot(slot: number): void {
    if (slot < this.fresh.length) return;
    const n = Math.max(slot + 1, this.fresh.length * 2);
    const f = new Uint8Array(n); f.set(this.fresh); this.fresh = f;
    const e = new Int32Array(n); e.set(this.evMask); this.evMask = e;
    const s = new Float64Array(n); s.set(this.scheduled); this.scheduled = s;
    const x = new Float64Array(n); x.set(this.expiry); this.expiry = x;
    const c = new Float64Array(n); c.set(this.counted); this.counted = c;
    const co = new Uint8Array(Math.ceil(n / MAX_OUTCOMES) + 1); co.set(this.countedOutcomes); this.countedOutcomes = co;
  }

  /** Keeps the consensus sums in step with what a slot adds: `price` its raw price while it counts, else 0. */
  private count(line: number, outcome: number, slot: number, book: number, price: number): void {
    const old = this.counted[slot];
    if (old === price) return;
    this.counted[slot] = price;
    const i = line * 3 + outcome;
    const bl = (slot / MAX_OUTCOMES) | 0;
    const prediction = PREDICTION[book] === 1;
    // the extremes stay known unless the quote that held one leaves or moves (then the ladder is searched again)
    const bit = prediction ? 2 : 1;
    const e = i * 8 + (prediction ? 4 : 0);
    const ext = this.ext;
    if (old !== 0 && (this.extOk[i] & bit) !== 0 && (ext[e + 1] === book || ext[e + 3] === book)) this.extOk[i] &= ~bit;
    if (price !== 0 && (this.extOk[i] & bit) !== 0) {
      if (ext[e + 1] < 0 || price > ext[e] || (price === ext[e] && book < ext[e + 1])) { ext[e] = price; ext[e + 1] = book; }
      if (ext[e + 3] < 0 || price < ext[e + 2] || (price === ext[e + 2] && book < ext[e + 3])) { ext[e + 2] = price; ext[e + 3] = book; }
    }
    if (old !== 0) {
      if (prediction) { this.psum[i] -= Math.round(FIXED / old); this.pcnt[i]--; }
      else { this.sum[i] -= Math.round(FIXED / old); this.cnt[i]--; }
      if (--this.countedOutcomes[bl] === 0) {
        if (prediction) this.pbooks[line]--;
        else this.books[line]--;
        this.groupBook(line, book, -1);
      }
    }
    if (price !== 0) {
      if (prediction) { this.psum[i] += Math.round(FIXED / price); this.pcnt[i]++; }
      else { this.sum[i] += Math.round(FIXED / price); this.cnt[i]++; }
      if (this.countedOutcomes[bl]++ === 0) {
        if (prediction) this.pbooks[line]++;
        else this.books[line]++;
        this.groupBook(line, book, 1);
      }
    }
  }

  /** A book-line of a middles market started (+1) or stopped (-1) counting: its group's distinct books. */
  private groupBook(line: number, book: number, step: number): void {
    if (MIDDLE_MARKET[this.store.lineMarket(line)] !== 1) return;
    const g = this.store.lineGroup(line);
    if (g >= this.groupBooks.length) this.ensureLine(g);
    const n = this.groupBookLines.get(g, book);
    const next = (n < 0 ? 0 : n) + step;
    if (next === 0) {
      this.groupBookLines.delete(g, book);
      this.groupBooks[g]--;
    } else {
      if (n < 0) this.groupBooks[g]++;
      this.groupBookLines.set(g, book, next);
    }
  }

  /** Marks a line's consensus dirty, its arbitrage when the change reached the top ARB.ALTS of a ladder (`rank`),
   *  and its group's middles when it reached the top two (a middle takes the best or second best per side). */
  private markLine(line: number, rank = 0): void {
    if (this.dirtyStamp[line] !== this.batch) {
      this.dirtyStamp[line] = this.batch;
      this.dirtyLines.push(line);
    }
    if (rank < ARB.ALTS) this.arbStamp[line] = this.batch;
    if (rank >= 2) return;
    const group = this.store.lineGroup(line);
    if (MIDDLE_MARKET[this.store.lineMarket(line)] === 1) {
      this.midLineStamp[line] = this.batch;
      if (group >= this.groupStamp.length) this.ensureLine(group);
      if (this.groupStamp[group] !== this.batch) {
        this.groupStamp[group] = this.batch;
        this.dirtyGroups.push(group);
      }
    }
  }

  // StoreListener

  quote(line: number, outcome: number, slot: number, kind: number, oldPrice: number, oldRank: number, book: number,
    tuple: number, lu: number): void {
    this.ensureLine(line);
    this.ensureSlot(slot);
    const store = this.store;
    const was = this.fresh[slot] === 1;
    if (kind === CHANGE.REMOVED) {
      this.fresh[slot] = 0;
      this.scheduled[slot] = 0;
      this.count(line, outcome, slot, book, 0);
      if (was) this.leave(line, outcome, slot, book);
      else this.markLine(line); // the line's book count may change
      return;
    }
    const now = this.now;
    const fresh = counts(book) && now - lu <= staleMs(book);
    this.expiry[slot] = lu + staleMs(book);
    // a verification of a quote that stays fresh changes nothing derived (ages are read when served)
    if (was && fresh && kind === CHANGE.VERIFIED) return;
    this.fresh[slot] = fresh ? 1 : 0;
    const ladder = store.ladder(line, outcome);
    const at = tuple >= 0 ? tuple : store.tupleOf(line, outcome, slot);
    ladder[at + LD.FLAG] = fresh ? 1 : 0;
    this.count(line, outcome, slot, book, fresh ? ladder[at + LD.RAW] : 0);
    // one live wheel entry per slot, never later than the slot's expiry (a reused slot may hold a later one)
    if (fresh && (this.scheduled[slot] === 0 || this.scheduled[slot] > wheelSecondOf(this.expiry[slot]))) {
      this.schedule(slot, this.expiry[slot]);
    }
    if (!fresh) {
      if (was) this.leave(line, outcome, slot, book);
      else if (kind === CHANGE.NEW) this.markLine(line);
      return;
    }
    // same price and still fresh: nothing derived changes (ages are read from the read model when served)
    if (was && kind !== CHANGE.NEW && ladder[at + LD.RAW] === oldPrice) return;
    // a price move that stays out of the top of its ladder, before and after, leaves arbitrage and middles
    // alone. Only this quote moved, so its best place among fresh quotes, old or new, is the number of fresh
    // quotes above the higher of its two positions in the current ladder.
    let rank = 0;
    if (was && kind === CHANGE.PRICE && oldRank >= 0) {
      const top = Math.min(oldRank, at / LD.STRIDE) * LD.STRIDE;
      for (let k = 0; k < top && rank < ARB.ALTS; k += LD.STRIDE) if (ladder[k + LD.FLAG] === 1) rank++;
    }
    this.markLine(line, rank);
    const s = SHARP_INDEX[book];
    if (s >= 0) this.sharpChanged(line, s, book);
    this.softEdges(line, outcome, slot, book, ladder[at + LD.RAW], ladder[at + LD.PRICE]);
  }

  lineFreed(line: number): void {
    this.ensureLine(line);
    // its quotes were all REMOVED first; what is left is the line-level state
    if (this.arbOpen[line] === 1) this.closeArb(line);
    const off = this.out.cons.push();
    const d = this.out.cons.data;
    d.fill(0, off, off + CONS.STRIDE);
    d[off + CONS.KIND] = ROW.REMOVE;
    d[off + CONS.EVENT] = this.store.lineEvent(line);
    d[off + CONS.MARKET] = this.store.lineMarket(line);
    d[off + CONS.POINT] = this.store.linePoint(line);
    d[off + CONS.PLAYER] = this.store.linePlayer(line);
    this.sharpMask[line] = 0;
    for (let s = 0; s < MAX_SHARPS; s++) this.releaseFair(line, s);
    this.books[line] = 0;
    this.pbooks[line] = 0;
    for (let o = 0; o < 3; o++) {
      this.sum[line * 3 + o] = 0; this.cnt[line * 3 + o] = 0; this.psum[line * 3 + o] = 0; this.pcnt[line * 3 + o] = 0;
      this.extOk[line * 3 + o] = 0;
    }
    if (MIDDLE_MARKET[this.store.lineMarket(line)] === 1) {
      const g = this.store.lineGroup(line);
      if (this.store.groupLines(g).length === 1) this.groupFreed(g);
      else {
        // its pairs go: evaluate the whole group
        if (g >= this.groupFull.length) this.ensureLine(g);
        this.groupFull[g] = this.batch;
        this.markLine(line);
      }
    }
  }

  /** A quote stops counting (removed or stale). */
  private leave(line: number, outcome: number, slot: number, book: number): void {
    this.markLine(line);
    this.dropEdges(line, outcome, slot, book);
    const s = SHARP_INDEX[book];
    if (s >= 0) this.sharpChanged(line, s, book);
  }

  private schedule(slot: number, at: number): void {
    const sec = wheelSecondOf(at);
    let list = this.wheel.get(sec);
    if (list === undefined) this.wheel.set(sec, (list = []));
    list.push(slot);
    this.scheduled[slot] = sec;
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
        if (this.scheduled[slot] !== sec) continue;
        this.scheduled[slot] = 0;
        if (this.fresh[slot] === 0) continue;
        if (this.expiry[slot] >= now) {
          this.schedule(slot, this.expiry[slot]);
          continue;
        }
        this.fresh[slot] = 0;
        const line = this.store.lineOfSlot(slot);
        const outcome = slot % MAX_OUTCOMES;
        this.store.ladder(line, outcome)[this.store.tupleOf(line, outcome, slot) + LD.FLAG] = 0;
        this.ensureLine(line);
        const book = this.store.bookOf(slot);
        this.count(line, outcome, slot, book, 0);
        this.leave(line, outcome, slot, book);
      }
    }
    this.wheelSecond = -1;
    for (const sec of this.wheel.keys()) if (this.wheelSecond < 0 || sec < this.wheelSecond) this.wheelSecond = sec;
  }

  // EV

  private releaseFair(line: number, s: number): void {
    const i = line * MAX_SHARPS + s;
    const at = this.fairAt[i];
    if (at === 0) return;
    this.fairFree.push(at - 1);
    this.fairAt[i] = 0;
  }

  /** offset in the fair pool of (line, sharp)'s no-vig line, allocated when missing */
  private fairSlot(line: number, s: number): number {
    const i = line * MAX_SHARPS + s;
    let at = this.fairAt[i] - 1;
    if (at < 0) {
      const free = this.fairFree.pop();
      if (free !== undefined) at = free;
      else {
        at = this.fairNext++;
        if ((at + 1) * FL.STRIDE > this.fairPool.length) {
          const grown = new Float64Array(this.fairPool.length * 2);
          grown.set(this.fairPool);
          this.fairPool = grown;
        }
      }
      this.fairAt[i] = at + 1;
    }
    return at * FL.STRIDE;
  }

  /** Recomputes sharp `s`'s no-vig line on `line`, sends it, and updates the other books' masks against it. */
  private sharpChanged(line: number, s: number, book: number): void {
    const store = this.store;
    const n = OUTCOMES[store.lineMarket(line)];
    const had = (this.sharpMask[line] & (1 << s)) !== 0;
    let ok = true;
    const base = store.slotOfBook(line, book);
    for (let o = 0; o < n; o++) {
      const slot = base + o;
      if (base < 0 || store.priceOf(slot) === 0 || this.fresh[slot] === 0) {
        ok = false;
        break;
      }
      this.implied[o] = 1 / store.priceOf(slot);
    }
    let f = -1;
    let valid = 0;
    if (ok) {
      f = this.fairSlot(line, s);
      const pool = this.fairPool;
      valid = devigAll(n === 3 ? this.implied : this.implied2, this.fairAll);
      for (let i = 0; i < N_METHODS * 3; i++) pool[f + FL.P + i] = this.fairAll[i];
      pool[f + FL.VALID] = valid;
      if (valid === 0) ok = false;
    }
    if (!ok) {
      this.sharpMask[line] &= ~(1 << s);
      this.releaseFair(line, s);
      if (!had) return;
      f = -1;
    } else this.sharpMask[line] |= 1 << s;
    this.sendFair(line, s, f);
    // every quote of the other books on this line, against this sharp
    const shift = s * N_METHODS;
    const clear = ~(ALL_METHODS << shift);
    const pool = this.fairPool;
    for (let o = 0; o < n; o++) {
      const ladder = store.ladder(line, o);
      for (let k = 0; k < ladder.length; k += LD.STRIDE) {
        const b = ladder[k + LD.BOOK];
        if (b === book) continue;
        const slot = ladder[k + LD.SLOT];
        const old = this.evMask[slot];
        let bits = 0;
        if (f >= 0 && ladder[k + LD.FLAG] === 1) {
          const eff = ladder[k + LD.PRICE];
          for (let m = 0; m < N_METHODS; m++) {
            if ((valid & (1 << m)) !== 0 && pool[f + FL.P + m * 3 + o] * eff - 1 > 0) bits |= 1 << m;
          }
        }
        const mask = (old & clear) | (bits << shift);
        if (mask === old) continue;
        this.evMask[slot] = mask;
        this.sendQuote(line, o, b, ladder[k + LD.RAW], ladder[k + LD.PRICE], mask);
      }
    }
  }

  /** A quote moved (or arrived fresh): its mask against every sharp quoting the line; sent when it changes (a
   *  quote that stays +EV as it moves is priced from the read model when served). */
  private softEdges(line: number, outcome: number, slot: number, book: number, raw: number, eff: number): void {
    let sharps = this.sharpMask[line];
    let mask = 0;
    const pool = this.fairPool;
    for (let s = 0; sharps !== 0; s++, sharps >>= 1) {
      if ((sharps & 1) === 0 || SHARP_BOOK[s] === book) continue;
      const f = (this.fairAt[line * MAX_SHARPS + s] - 1) * FL.STRIDE;
      const valid = pool[f + FL.VALID];
      for (let m = 0; m < N_METHODS; m++) {
        if ((valid & (1 << m)) !== 0 && pool[f + FL.P + m * 3 + outcome] * eff - 1 > 0) mask |= 1 << (s * N_METHODS + m);
      }
    }
    if (mask === this.evMask[slot]) return;
    this.evMask[slot] = mask;
    this.sendQuote(line, outcome, book, raw, eff, mask);
  }

  /** Withdraws a quote from the EV set. */
  private dropEdges(line: number, outcome: number, slot: number, book: number): void {
    if (this.evMask[slot] === 0) return;
    this.evMask[slot] = 0;
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

  /** Sends sharp s's no-vig line on `line` (from the fair pool at `f`), or its removal when f < 0. */
  private sendFair(line: number, s: number, f: number): void {
    const store = this.store;
    const off = this.out.fair.push();
    const d = this.out.fair.data;
    d[off + FAIR.KIND] = f < 0 ? ROW.REMOVE : ROW.UPSERT;
    d[off + FAIR.EVENT] = store.lineEvent(line);
    d[off + FAIR.MARKET] = store.lineMarket(line);
    d[off + FAIR.POINT] = store.linePoint(line);
    d[off + FAIR.PLAYER] = store.linePlayer(line);
    d[off + FAIR.SHARP] = SHARP_BOOK[s];
    if (f < 0) {
      d.fill(0, off + FAIR.VALID, off + FAIR.STRIDE);
      return;
    }
    for (let i = 0; i < FL.STRIDE; i++) d[off + FAIR.VALID + i] = this.fairPool[f + i];
  }

  // End of batch

  /** Emits what the batch changed and hands the records over (buffers are reset). With `copy` false the arrays are
   *  views of the buffers, valid until the next begin() (the shard encodes them at once, saving a copy). */
  flush(copy = true): AnalyticsBatch {
    const store = this.store;
    for (const line of this.dirtyLines) {
      if (!store.lineLive(line) || this.dirtyStamp[line] !== this.batch) continue;
      this.emitConsensus(line);
      if (this.arbStamp[line] === this.batch) this.evaluateArb(line);
    }
    this.dirtyLines.length = 0;
    for (const g of this.dirtyGroups) this.evaluateMiddles(g);
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

  private emitConsensus(line: number): void {
    const off = this.out.cons.push();
    const d = this.out.cons.data;
    const store = this.store;
    writeConsensusHead(store, line, d, off);
    const n = OUTCOMES[store.lineMarket(line)];
    for (let o = 0; o < 3; o++) {
      const b = off + CONS.O + o * CONS.OSIZE;
      const i = line * 3 + o;
      const cnt = o < n ? this.cnt[i] : 0;
      const pcnt = o < n ? this.pcnt[i] : 0;
      d[b + CONS.SUM] = cnt === 0 ? 0 : this.sum[i] / FIXED;
      d[b + CONS.CNT] = cnt;
      d[b + CONS.PSUM] = pcnt === 0 ? 0 : this.psum[i] / FIXED;
      d[b + CONS.PCNT] = pcnt;
      const ok = o < n ? this.extOk[i] : 3;
      if (ok !== 3) writeExtremes(store, line, o, (ok & 1) !== 0 ? 0 : cnt, (ok & 2) !== 0 ? 0 : pcnt, true, 0, d, b);
      if (o >= n) {
        d[b + CONS.BEST] = 0; d[b + CONS.BEST_BOOK] = -1; d[b + CONS.WORST] = 0; d[b + CONS.WORST_BOOK] = -1;
        d[b + CONS.PBEST] = 0; d[b + CONS.PBEST_BOOK] = -1; d[b + CONS.PWORST] = 0; d[b + CONS.PWORST_BOOK] = -1;
        continue;
      }
      const ext = this.ext;
      const e = i * 8;
      if ((ok & 1) !== 0) {
        d[b + CONS.BEST] = ext[e]; d[b + CONS.BEST_BOOK] = ext[e + 1]; d[b + CONS.WORST] = ext[e + 2]; d[b + CONS.WORST_BOOK] = ext[e + 3];
      } else {
        ext[e] = d[b + CONS.BEST]; ext[e + 1] = d[b + CONS.BEST_BOOK]; ext[e + 2] = d[b + CONS.WORST]; ext[e + 3] = d[b + CONS.WORST_BOOK];
      }
      if ((ok & 2) !== 0) {
        d[b + CONS.PBEST] = ext[e + 4]; d[b + CONS.PBEST_BOOK] = ext[e + 5]; d[b + CONS.PWORST] = ext[e + 6]; d[b + CONS.PWORST_BOOK] = ext[e + 7];
      } else {
        ext[e + 4] = d[b + CONS.PBEST]; ext[e + 5] = d[b + CONS.PBEST_BOOK]; ext[e + 6] = d[b + CONS.PWORST]; ext[e + 7] = d[b + CONS.PWORST_BOOK];
      }
      this.extOk[i] = 3;
    }
    d[off + CONS.BOOKS] = this.books[line];
    d[off + CONS.PBOOKS] = this.pbooks[line];
  }

  private evaluateArb(line: number): void {
    const buf = this.out.arb;
    const off = buf.push();
    const S = writeArb(this.store, line, true, buf.data, off);
    if (S < 1) {
      const prev = this.arbLast.get(line);
      const d = buf.data;
      if (this.arbOpen[line] === 0) {
        this.arbOpen[line] = 1;
        this.arbSince[line] = this.now;
      } else if (prev !== undefined && sameArb(prev, d, off)) {
        buf.length--; // unchanged: nothing to send
        return;
      }
      d[off + ARB.KIND] = ROW.UPSERT;
      d[off + ARB.DETECTED_AT] = this.arbSince[line];
      this.arbLast.set(line, d.slice(off, off + ARB.STRIDE));
      return;
    }
    buf.length--;
    if (this.arbOpen[line] === 1) this.closeArb(line);
  }

  private closeArb(line: number): void {
    this.arbOpen[line] = 0;
    this.arbLast.delete(line);
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
    const prev = this.middles.get(g);
    if (prev === undefined) return;
    for (const rec of prev.values()) this.pushMiddle(ROW.REMOVE, rec);
    this.middles.delete(g);
  }

  /** Re-evaluates a group's middles and publishes what changed; unchanged records are kept, not rebuilt. Only the
   *  pairs with a line whose top two changed are evaluated, unless the group lost a line or its book count
   *  changed (every record carries it): then all of them. */
  private evaluateMiddles(g: number): void {
    const store = this.store;
    const lines = store.groupLines(g);
    let prev = this.middles.get(g);
    const stamp = ++this.midStamp;
    const full = this.groupFull[g] === this.batch || this.groupBooks[g] !== this.groupBooksSeen[g] || prev === undefined;
    this.groupBooksSeen[g] = this.groupBooks[g];
    const dirtyX = this.dirtyX;
    dirtyX.length = 0;
    let only: Uint8Array | null = null;
    if (!full && lines !== undefined) {
      only = this.only;
      const spreads = store.lineMarket(lines[0]) === SPREADS;
      for (let j = 0; j < lines.length && j < 64; j++) {
        const dirty = this.midLineStamp[lines[j]] === this.batch;
        only[j] = dirty ? 1 : 0;
        if (dirty) dirtyX.push(spreads ? -store.linePoint(lines[j]) : store.linePoint(lines[j]));
      }
    }
    let none = 0;
    if (lines !== undefined && lines.length > 1 && store.lineLive(lines[0])) {
      none = middlesOfGroup(store, lines, true, 0, this.groupBooks[g], only, (rec) => {
        const key = midPairKey(rec[MID.LO], rec[MID.HI]);
        if (prev === undefined) this.middles.set(g, (prev = new Map()));
        const old = prev.get(key);
        if (old !== undefined && sameValues(old, rec)) {
          old[MID.KIND] = stamp;
          return;
        }
        const copy = rec.slice();
        copy[MID.KIND] = stamp;
        prev.set(key, copy);
        this.pushMiddle(ROW.UPSERT, copy);
      });
    }
    if (prev === undefined) return;
    // records not met in this evaluation are gone (KIND holds the stamp of the evaluation that last met them);
    // a partial evaluation only speaks for the pairs it evaluated, and when each of those gave a middle, every
    // record it could have withdrawn was met
    if (only !== null && none === 0) return;
    for (const [key, rec] of prev) {
      if (rec[MID.KIND] === stamp) continue;
      if (only !== null && !dirtyX.includes(rec[MID.LO]) && !dirtyX.includes(rec[MID.HI])) continue;
      prev.delete(key);
      this.pushMiddle(ROW.REMOVE, rec);
    }
    if (prev.size === 0) this.middles.delete(g);
  }

  private pushMiddle(kind: number, rec: Float64Array): void {
    const off = this.out.mid.push();
    this.out.mid.data.set(rec, off);
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

function sameValues(a: Float64Array, b: Float64Array): boolean {
  for (let i = 1; i < a.length; i++) if (a[i] !== b[i] && !(a[i] !== a[i] && b[i] !== b[i])) return false;
  return true;
}

function sameArb(prev: Float64Array, d: Float64Array, off: number): boolean {
  for (let i: number = ARB.N; i < ARB.STRIDE; i++) {
    if (i === ARB.DETECTED_AT) continue;
    if (prev[i] !== d[off + i]) return false;
  }
  return true;
}

/** Distinct-book counting without clearing: a book is counted once per stamp. */
