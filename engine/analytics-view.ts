// The main thread's copy of the shards' analytics (issue 3): the current consensus of every line, the open
// arbitrages, the positive-EV rows and the middles, per event, applied from CONS / ARB / EVR / MID records.
// Requests filter and page these sets; nothing is recomputed per request.

import { lineKeyOf, evKeyOf, midKeyOf, type ScratchSets } from './analytics.js';
import { FlatIndex } from './flat-index.js';
import { pointCode } from './price-store.js';
import { ARB, CONS, EVR, MID, ROW } from './records.js';

function lineNum(market: number, player: number, point: number): number {
  return (market * 2097152 + (player + 1)) * 16384 + pointCode(point);
}

/** Per event: record slots of its consensus and EV rows, its arbitrages and middles. */
export class EventAnalytics {
  readonly cons = new Set<number>();
  readonly ev = new Set<number>();
  readonly arbs = new Map<number, Float64Array>();
  readonly mids = new Map<string, Float64Array>();
}

class Pool {
  data: Float64Array;
  next = 0;
  readonly free: number[] = [];
  readonly index = new FlatIndex(1024);
  constructor(readonly stride: number) {
    this.data = new Float64Array(stride * 1024);
  }

  alloc(): number {
    const r = this.free.pop();
    if (r !== undefined) return r;
    if ((this.next + 1) * this.stride > this.data.length) {
      const grown = new Float64Array(Math.ceil(this.data.length * 1.5) + this.stride * 16);
      grown.set(this.data);
      this.data = grown;
    }
    return this.next++;
  }
}

/** What one applied batch opened and closed, for the webhook evaluator (hub.onAnalytics). Records are copies in
 *  the ARB / EVR layouts of engine/records.ts; a closed record is the last one the view held. */
export interface AnalyticsChanges {
  arbOpened: Float64Array[];
  arbClosed: Float64Array[];
  /** EV rows (one quote against one sharp) that entered the positive-EV set */
  evOpened: Float64Array[];
  evClosed: Float64Array[];
}

export class AnalyticsView {
  /** set by the hub while it has analytics listeners; filled by each apply and reset by the hub */
  changes: AnalyticsChanges | null = null;
  private readonly byEvent: (EventAnalytics | undefined)[] = [];
  private readonly cons = new Pool(CONS.STRIDE);
  private readonly ev = new Pool(EVR.STRIDE);
  /** bumped by every applied record batch that changed something, per event */
  version = 0;

  event(idx: number): EventAnalytics | undefined {
    return this.byEvent[idx];
  }

  private ensure(idx: number): EventAnalytics {
    let e = this.byEvent[idx];
    if (e === undefined) {
      while (this.byEvent.length < idx) this.byEvent.push(undefined);
      this.byEvent[idx] = e = new EventAnalytics();
    }
    return e;
  }

  dropEvent(idx: number): void {
    const e = this.byEvent[idx];
    if (e === undefined) return;
    for (const r of e.cons) this.releaseCons(r);
    for (const r of e.ev) this.releaseEv(r);
    this.byEvent[idx] = undefined;
    this.version++;
  }

  private releaseCons(r: number): void {
    const d = this.cons.data;
    const o = r * CONS.STRIDE;
    this.cons.index.delete(d[o + CONS.EVENT], lineNum(d[o + CONS.MARKET], d[o + CONS.PLAYER], d[o + CONS.POINT]));
    this.cons.free.push(r);
  }

  private releaseEv(r: number): void {
    const d = this.ev.data;
    const o = r * EVR.STRIDE;
    this.ev.index.delete(evK1(d, o), evK2(d, o));
    this.ev.free.push(r);
  }

  // Reads for serving
  consData(): Float64Array { return this.cons.data; }
  evData(): Float64Array { return this.ev.data; }
  /** the consensus record slot of a line, or -1 */
  consOf(event: number, market: number, point: number, player: number): number {
    return this.cons.index.get(event, lineNum(market, player, point));
  }

  applyCons(rec: Float64Array, n: number): void {
    for (let i = 0, off = 0; i < n; i++, off += CONS.STRIDE) {
      const event = rec[off + CONS.EVENT];
      const key = lineNum(rec[off + CONS.MARKET], rec[off + CONS.PLAYER], rec[off + CONS.POINT]);
      let r = this.cons.index.get(event, key);
      if (rec[off + CONS.KIND] === ROW.REMOVE) {
        if (r < 0) continue;
        this.byEvent[event]?.cons.delete(r);
        this.releaseCons(r);
        continue;
      }
      if (r < 0) {
        r = this.cons.alloc();
        this.cons.index.set(event, key, r);
        this.ensure(event).cons.add(r);
      }
      this.cons.data.set(rec.subarray(off, off + CONS.STRIDE), r * CONS.STRIDE);
    }
    if (n > 0) this.version++;
  }

  applyEv(rec: Float64Array, n: number): void {
    for (let i = 0, off = 0; i < n; i++, off += EVR.STRIDE) {
      const k1 = evK1(rec, off);
      const k2 = evK2(rec, off);
      let r = this.ev.index.get(k1, k2);
      if (rec[off + EVR.KIND] === ROW.REMOVE) {
        if (r < 0) continue;
        this.changes?.evClosed.push(this.ev.data.slice(r * EVR.STRIDE, (r + 1) * EVR.STRIDE));
        this.byEvent[rec[off + EVR.EVENT]]?.ev.delete(r);
        this.releaseEv(r);
        continue;
      }
      if (r < 0) {
        r = this.ev.alloc();
        this.ev.index.set(k1, k2, r);
        this.ensure(rec[off + EVR.EVENT]).ev.add(r);
        this.changes?.evOpened.push(rec.slice(off, off + EVR.STRIDE));
      }
      this.ev.data.set(rec.subarray(off, off + EVR.STRIDE), r * EVR.STRIDE);
    }
    if (n > 0) this.version++;
  }

  applyArb(rec: Float64Array, n: number): void {
    for (let i = 0, off = 0; i < n; i++, off += ARB.STRIDE) {
      const event = rec[off + ARB.EVENT];
      const key = lineNum(rec[off + ARB.MARKET], rec[off + ARB.PLAYER], rec[off + ARB.POINT]);
      const arbs = this.byEvent[event]?.arbs;
      if (rec[off + ARB.KIND] === ROW.REMOVE) {
        const last = arbs?.get(key);
        if (last === undefined) continue;
        arbs!.delete(key);
        this.changes?.arbClosed.push(last);
        continue;
      }
      const copy = rec.slice(off, off + ARB.STRIDE);
      if (arbs?.has(key) !== true) this.changes?.arbOpened.push(copy);
      this.ensure(event).arbs.set(key, copy);
    }
    if (n > 0) this.version++;
  }

  applyMid(rec: Float64Array, n: number): void {
    for (let i = 0, off = 0; i < n; i++, off += MID.STRIDE) {
      const key = midKeyOf(rec, off);
      const event = rec[off + MID.EVENT];
      if (rec[off + MID.KIND] === ROW.REMOVE) this.byEvent[event]?.mids.delete(key);
      else this.ensure(event).mids.set(key, rec.slice(off, off + MID.STRIDE));
    }
    if (n > 0) this.version++;
  }

  /** Every set in the shape scratch() returns, for the property test. */
  canonical(): ScratchSets {
    const sets: ScratchSets = { cons: new Map(), arb: new Map(), ev: new Map(), mid: new Map() };
    for (const e of this.byEvent) {
      if (e === undefined) continue;
      for (const r of e.cons) {
        const rec = this.cons.data.slice(r * CONS.STRIDE, (r + 1) * CONS.STRIDE);
        sets.cons.set(lineKeyOf(rec[CONS.EVENT], rec[CONS.MARKET], rec[CONS.POINT], rec[CONS.PLAYER]), rec);
      }
      for (const a of e.arbs.values()) sets.arb.set(lineKeyOf(a[ARB.EVENT], a[ARB.MARKET], a[ARB.POINT], a[ARB.PLAYER]), a);
      for (const r of e.ev) {
        const rec = this.ev.data.slice(r * EVR.STRIDE, (r + 1) * EVR.STRIDE);
        sets.ev.set(evKeyOf(rec, 0), rec);
      }
      for (const m of e.mids.values()) sets.mid.set(midKeyOf(m, 0), m);
    }
    return sets;
  }
}

/** EV row key: event, outcome and sharp in k1; line and book in k2 (both exact integers). */
function evK1(d: Float64Array, o: number): number {
  return (d[o + EVR.EVENT] * 4 + d[o + EVR.OUTCOME]) * 1024 + d[o + EVR.SHARP];
}

function evK2(d: Float64Array, o: number): number {
  return lineNum(d[o + EVR.MARKET], d[o + EVR.PLAYER], d[o + EVR.POINT]) * 1024 + d[o + EVR.BOOK];
}
