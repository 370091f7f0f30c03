// Incremental analytics kept inside a shard, on every price update (DESIGN.md section 2, issue 3): consensus,
// arbitrage, +EV against each sharp book's no-vig line for every de-vig method, and middles.
//
// The store tells the analytics of every quote change as it happens (StoreListener). What it does then:
// - EV is updated per quote: a soft book's move recomputes only its own edges against the sharps that quote the
//   line (one edge per sharp and method); a sharp's move recomputes its no-vig line and every soft quote's edge
//   against it.
// - Lines whose prices or freshness changed are marked dirty; at the end of the batch each dirty line emits its
//   consensus (a scan of its ladders), re-evaluates its arbitrage (the fresh top of each ladder), and each dirty
//   group re-evaluates its middles. A verification that changes no price and no freshness marks nothing.
// - Freshness changes with time alone: a quote older than its book's stale threshold (engine/sla.ts) stops
//   counting. A timing wheel holds at most one entry per quote slot and wakes the line when it goes stale.
//
// Records leave as CONS / ARB / EVR / MID (engine/records.ts). `scratch()` recomputes every set from the store
// alone; the property test holds the two equal.

import { DEVIG_METHODS, devig } from './devig.js';
import { ARB, CHANGE, CONS, EVR, MID, ROW, RecordBuffer } from './records.js';
import { LD, MAX_OUTCOMES, type PriceStore, type StoreListener } from './price-store.js';
import {
  MAX_SHARPS, MIDDLE_MARKET, N_METHODS, OUTCOMES, SHARP_BOOK, SHARP_INDEX, counts, middlesOfGroup, staleMs, writeArb,
  writeConsensus,
} from './analytics-rows.js';

export { SHARP_BOOK_IDS, isFresh, lineKeyOf, evKeyOf, midKeyOf } from './analytics-rows.js';
export { scratch, type ScratchSets } from './analytics-scratch.js';

class FairLine {
  /** fair probability per method and outcome: [method * 3 + outcome] */
  readonly p = new Float64Array(N_METHODS * 3);
  /** bit m set when method m gave a valid set */
  valid = 0;
}

export class Analytics implements StoreListener {
  private now = 0;
  private readonly out = {
    cons: new RecordBuffer(CONS.STRIDE, 256),
    arb: new RecordBuffer(ARB.STRIDE, 16),
    ev: new RecordBuffer(EVR.STRIDE, 64),
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
  private readonly fair = new Map<number, FairLine>();
  // per quote slot
  private fresh = new Uint8Array(4096);
  /** bit (sharp * N_METHODS + method) set while an EV row for this quote is published */
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
  private readonly fairOut = new Float64Array(3);

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
    const since = new Float64Array(n);
    since.set(this.arbSince);
    this.arbSince = since;
  }

  private ensureSlot(slot: number): void {
    if (slot < this.fresh.length) return;
    const n = Math.max(slot + 1, this.fresh.length * 2);
    const f = new Uint8Array(n); f.set(this.fresh); this.fresh = f;
    const e = new Int32Array(n); e.set(this.evMask); this.evMask = e;
    const s = new Float64Array(n); s.set(this.scheduled); this.scheduled = s;
    const x = new Float64Array(n); x.set(this.expiry); this.expiry = x;
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
    this.softEdges(line, outcome, slot, book, ladder[at + LD.PRICE]);
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
    for (let s = 0; s < MAX_SHARPS; s++) this.fair.delete(line * 8 + s);
    if (MIDDLE_MARKET[this.store.lineMarket(line)] === 1) {
      const g = this.store.lineGroup(line);
      if (this.store.groupLines(g).length === 1) this.groupFreed(g);
      else this.markLine(line);
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
        this.leave(line, outcome, slot, this.store.bookOf(slot));
      }
    }
    this.wheelSecond = -1;
    for (const sec of this.wheel.keys()) if (this.wheelSecond < 0 || sec < this.wheelSecond) this.wheelSecond = sec;
  }

  // EV

  /** Recomputes sharp `s`'s no-vig line on `line` and every soft quote's edges against it. */
  private sharpChanged(line: number, s: number, book: number): void {
    const store = this.store;
    const key = line * 8 + s;
    const n = OUTCOMES[store.lineMarket(line)];
    let fl = this.fair.get(key);
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
    if (ok) {
      if (fl === undefined) this.fair.set(key, (fl = new FairLine()));
      fl.valid = 0;
      const implied = n === 3 ? this.implied : this.implied.subarray(0, 2);
      for (let m = 0; m < N_METHODS; m++) {
        if (devig(implied, DEVIG_METHODS[m], this.fairOut)) {
          fl.valid |= 1 << m;
          for (let o = 0; o < n; o++) fl.p[m * 3 + o] = this.fairOut[o];
        }
      }
      if (fl.valid === 0) ok = false;
    }
    if (ok) this.sharpMask[line] |= 1 << s;
    else {
      this.sharpMask[line] &= ~(1 << s);
      this.fair.delete(key);
      if (!had) return;
    }
    // every fresh quote of other books on this line, against this sharp
    const fair = this.fair.get(key);
    for (let o = 0; o < n; o++) {
      const ladder = store.ladder(line, o);
      for (let k = 0; k < ladder.length; k += LD.STRIDE) {
        if (ladder[k + LD.BOOK] === book) continue;
        const fresh = ladder[k + LD.FLAG] === 1;
        this.edgesFor(line, o, ladder[k + LD.SLOT], ladder[k + LD.BOOK], ladder[k + LD.PRICE], s, fresh ? fair : undefined);
      }
    }
  }

  /** A soft quote moved: its edges against every sharp quoting the line. */
  private softEdges(line: number, outcome: number, slot: number, book: number, eff: number): void {
    let mask = this.sharpMask[line];
    for (let s = 0; mask !== 0; s++, mask >>= 1) {
      if ((mask & 1) === 0 || SHARP_BOOK[s] === book) continue;
      this.edgesFor(line, outcome, slot, book, eff, s, this.fair.get(line * 8 + s));
    }
  }

  /** Publishes, updates or withdraws the EV row of one quote against one sharp (all methods in one record);
   *  `fl` is the sharp's no-vig line, undefined when the quote does not count or the sharp has no line. */
  private edgesFor(line: number, outcome: number, slot: number, book: number, eff: number, s: number, fl: FairLine | undefined): void {
    const bits = ((1 << N_METHODS) - 1) << (s * N_METHODS);
    const had = (this.evMask[slot] & bits) !== 0;
    let now = 0;
    if (fl !== undefined) {
      for (let m = 0; m < N_METHODS; m++) {
        if ((fl.valid & (1 << m)) !== 0 && fl.p[m * 3 + outcome] * eff - 1 > 0) now |= 1 << m;
      }
    }
    if (now === 0 && !had) return;
    this.evMask[slot] = (this.evMask[slot] & ~bits) | (now << (s * N_METHODS));
    const store = this.store;
    const off = this.out.ev.push();
    const d = this.out.ev.data;
    d[off + EVR.KIND] = now === 0 ? ROW.REMOVE : ROW.UPSERT;
    d[off + EVR.EVENT] = store.lineEvent(line);
    d[off + EVR.MARKET] = store.lineMarket(line);
    d[off + EVR.POINT] = store.linePoint(line);
    d[off + EVR.PLAYER] = store.linePlayer(line);
    d[off + EVR.OUTCOME] = outcome;
    d[off + EVR.BOOK] = book;
    d[off + EVR.SHARP] = SHARP_BOOK[s];
    d[off + EVR.PRICE] = now === 0 ? 0 : store.priceOf(slot);
    d[off + EVR.EFF] = eff;
    for (let m = 0; m < N_METHODS; m++) d[off + EVR.FAIR + m] = (now & (1 << m)) !== 0 ? fl!.p[m * 3 + outcome] : Number.NaN;
  }

  /** Withdraws every EV row of a quote. */
  private dropEdges(line: number, outcome: number, slot: number, book: number): void {
    let mask = this.evMask[slot];
    for (let s = 0; mask !== 0; s++, mask >>>= N_METHODS) {
      if ((mask & ((1 << N_METHODS) - 1)) !== 0) this.edgesFor(line, outcome, slot, book, Number.NaN, s, undefined);
    }
    this.evMask[slot] = 0;
  }

  // End of batch

  /** Emits what the batch changed and hands the records over (buffers are reset). */
  flush(): { cons: Float64Array; nCons: number; arb: Float64Array; nArb: number; ev: Float64Array; nEv: number; mid: Float64Array; nMid: number } {
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
    const nEv = o.ev.length;
    const nMid = o.mid.length;
    return { cons: o.cons.take(), nCons, arb: o.arb.take(), nArb, ev: o.ev.take(), nEv, mid: o.mid.take(), nMid };
  }

  private emitConsensus(line: number): void {
    const off = this.out.cons.push();
    writeConsensus(this.store, line, true, this.out.cons.data, off);
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

  /** Re-evaluates a group's middles and publishes what changed; unchanged records are kept, not rebuilt. */
  private evaluateMiddles(g: number): void {
    const store = this.store;
    const lines = store.groupLines(g);
    let prev = this.middles.get(g);
    const stamp = ++this.midStamp;
    if (lines !== undefined && lines.length > 1 && store.lineLive(lines[0])) {
      middlesOfGroup(store, lines, true, 0, (rec) => {
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
    // records not met in this evaluation are gone (KIND holds the stamp of the evaluation that last met them)
    for (const [key, rec] of prev) {
      if (rec[MID.KIND] === stamp) continue;
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
