// The main thread's copy of the shards' analytics (issue 3): the current consensus of every line, the open
// arbitrages, the sharps' no-vig lines, the positive-EV quotes and the middles, per event, applied from CONS /
// ARB / FAIR / EVQ / MID records. Requests filter and page these sets; nothing is recomputed per request (an EV
// row's edge is its quote's price times the fair probability of the sharp's current no-vig line).

import { edgePct, hasEdge } from './analytics-math.js';
import { SHARP_BOOK, SHARP_INDEX, N_METHODS, lineKeyOf, evKeyOf, midKeyOf } from './analytics-rows.js';
import type { AnalyticsBatch } from './analytics.js';
import type { ScratchSets } from './analytics-scratch.js';
import { FlatIndex } from './flat-index.js';
import { RecordPool, copyRecord } from './record-pool.js';
import { effectiveAt, pointCode } from './price-store.js';
import { ARB, CHANGE, CHG, CONS, CONSO, EVQ, EVR, FAIR, MID, ROW } from './records.js';
import { DEVIG_METHODS } from './devig.js';

const MULTIPLICATIVE = DEVIG_METHODS.indexOf('multiplicative');
const N_SHARPS = SHARP_BOOK.length;

function lineNum(market: number, player: number, point: number): number {
  return (market * 2097152 + (player + 1)) * 16384 + pointCode(point);
}

/** The record slots one event holds in one pool, in no particular order. A slot's place in `slots` is kept by
 *  its pool (Pool.pos), so adding or removing one is a push, or a swap with the last and a pop: no hashing and no
 *  table to grow and shrink. (A Set per event cost the main thread about 400 ns an update in the random worst case,
 *  a third of its analytics work: bench/analytics.ts.) */
export class Members {
  readonly slots: number[] = [];
  get size(): number {
    return this.slots.length;
  }
}

/** Per event: record slots of its consensus and EV rows, its arbitrages and middles. */
export class EventAnalytics {
  readonly cons = new Members();
  /** record slots of the event's positive-EV quotes (EVQ layout) */
  readonly ev = new Members();
  /** record slots of the sharps' no-vig lines (FAIR layout) */
  readonly fair = new Members();
  readonly arbs = new Map<number, Float64Array>();
  /** record slots of the event's middles (MID layout) */
  readonly mids = new Members();
}

type Key = (d: Float64Array, o: number) => number;

/** the raw price of one quote now, 0 when there is none */
export type QuotePrice = (event: number, market: number, point: number, player: number, outcome: number, book: number) => number;

/** Fixed-stride records of one kind found through one FlatIndex probe by two integer keys. Every record kind
 *  here (CONS, FAIR, EVQ, MID) has KIND at 0 and EVENT at 1. */
class Pool extends RecordPool {
  readonly index = new FlatIndex(1024);
  /** per record slot: its place in its event's Members */
  private pos = new Int32Array(1024);
  /** per record slot: the stamp of the write that made its record what it is (serialised rows are kept until it
   *  changes: http/row-cache.ts) */
  private stamps = new Float64Array(1024);
  private writes = 0;
  /** `stamped`: the pool keeps write stamps (stampOf), for the views served from serialised rows; the EV and no-vig
   *  pools, largest in the random worst case (a write stamp there is a cache miss more per record), keep none */
  constructor(stride: number, readonly k1: Key, readonly k2: Key, readonly members: (e: EventAnalytics) => Members, readonly stamped = false) {
    super(stride, 1024);
  }

  /** Stamps a record slot just written. */
  wrote(r: number): void {
    if (r >= this.stamps.length) {
      const grown = new Float64Array(Math.max(r + 1, this.stamps.length * 2));
      grown.set(this.stamps);
      this.stamps = grown;
    }
    this.stamps[r] = ++this.writes;
  }

  /** the stamp of a record slot's last write (0: never written) */
  stampOf(r: number): number {
    return r < this.stamps.length ? this.stamps[r] : 0;
  }

  /** a new record slot, listed in `m` */
  allocIn(m: Members): number {
    const r = this.alloc();
    if (r >= this.pos.length) {
      const grown = new Int32Array(Math.max(r + 1, this.pos.length * 2));
      grown.set(this.pos);
      this.pos = grown;
    }
    this.pos[r] = m.slots.length;
    m.slots.push(r);
    return r;
  }

  /** releases a record listed in `m`, and its index entry */
  dropFrom(m: Members, r: number): void {
    const i = this.pos[r];
    const last = m.slots.pop()!;
    if (last !== r) {
      m.slots[i] = last;
      this.pos[last] = i;
    }
    this.drop(r);
  }

  /** releases a record and its index entry (its event's Members are the caller's) */
  drop(r: number): void {
    const o = r * this.stride;
    this.index.delete(this.k1(this.data, o), this.k2(this.data, o));
    this.release(r);
  }
}

const KIND = 0;
const EVENT = 1;

/** What one applied batch opened and closed, for the webhook evaluator (hub.onAnalytics). Records are copies in
 *  the ARB / EVR layouts of engine/records.ts; a closed record is the last one the view held. */
export interface AnalyticsChanges {
  arbOpened: Float64Array[];
  /** arbitrages held already whose record changed (its legs' prices, so perhaps its edge) */
  arbUpdated: Float64Array[];
  arbClosed: Float64Array[];
  /** EV rows (one quote against one sharp) that entered the positive-EV set */
  evOpened: Float64Array[];
  evClosed: Float64Array[];
  /** EV rows held whose edge (multiplicative, as the webhooks report it) rose past the highest it was reported at
   *  (`floor`: opened or grown before), priced at the quote's price now; only while `AnalyticsView.evGrowth` */
  evGrew: { row: Float64Array; floor: number }[];
}

export function noChanges(): AnalyticsChanges {
  return { arbOpened: [], arbUpdated: [], arbClosed: [], evOpened: [], evClosed: [], evGrew: [] };
}

export class AnalyticsView {
  /** set by the hub while it has analytics listeners; filled by each apply and reset by the hub */
  changes: AnalyticsChanges | null = null;
  /** set while a webhook subscription wants +EV events: `changes.evGrew` is filled (settleEvGrowth) */
  evGrowth = false;
  /** per EV record slot and sharp index: the highest edge reported for the row (opened or grown), 0 at least */
  private evTop = new Float64Array(1024 * N_SHARPS);
  /** no-vig lines replaced in the batch being applied: event, line number, sharp index (settleEvGrowth) */
  private readonly fairMoved: number[] = [];
  /** per shard: the price moves (CHG records) of a batch answered quotes first, priced once its analytics follow */
  private readonly deferred = new Map<number, Float64Array[]>();
  private readonly byEvent: (EventAnalytics | undefined)[] = [];
  private readonly cons = new Pool(CONS.STRIDE, eventKey, consK2, (e) => e.cons, true);
  private readonly ev = new Pool(EVQ.STRIDE, evK1, evK2, (e) => e.ev);
  private readonly fair = new Pool(FAIR.STRIDE, eventKey, fairK2, (e) => e.fair);
  private readonly mid = new Pool(MID.STRIDE, midK1, midK2, (e) => e.mids, true);
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
    for (const pool of [this.cons, this.ev, this.fair, this.mid]) for (const r of pool.members(e).slots) pool.drop(r);
    this.byEvent[idx] = undefined;
    this.version++;
  }




  /** a middle's record (a view of the pool, valid until the next apply) */
  midRecord(r: number): Float64Array {
    return this.mid.data.subarray(r * MID.STRIDE, (r + 1) * MID.STRIDE);
  }


  // Reads for serving
  consData(): Float64Array { return this.cons.data; }
  /** the middles' records, MID layout */
  midData(): Float64Array { return this.mid.data; }
  /** the stamp of the last write of a consensus (middle) record slot: it changes whenever the record does */
  consStamp(r: number): number { return this.cons.stampOf(r); }
  midStamp(r: number): number { return this.mid.stampOf(r); }
  /** positive-EV quotes, EVQ layout */
  evData(): Float64Array { return this.ev.data; }
  /** the sharps' no-vig lines, FAIR layout */
  fairData(): Float64Array { return this.fair.data; }
  /** the FAIR record slot of a sharp (book id) on a line, or -1 */
  fairOf(event: number, market: number, point: number, player: number, sharp: number): number {
    return this.fair.index.get(event, lineNum(market, player, point) * 8 + SHARP_INDEX[sharp]);
  }

  /** Applies one shard batch of analytics in the order they depend on each other (no-vig lines before EV). */
  apply(a: AnalyticsBatch): void {
    this.applyCons(a.cons, a.nCons);
    this.applyArb(a.arb, a.nArb);
    this.applyFair(a.fair, a.nFair);
    this.applyEv(a.ev, a.nEv);
    this.applyMid(a.mid, a.nMid);
  }
  /** the consensus record slot of a line, or -1 */
  consOf(event: number, market: number, point: number, player: number): number {
    return this.cons.index.get(event, lineNum(market, player, point));
  }

  /** Applies n records of a pool's kind: REMOVE releases a held record, anything else stores a copy. `before`
   *  sees each record with the slot it replaces (-1 when new). */
  private applyTo(pool: Pool, rec: Float64Array, n: number, before?: (rec: Float64Array, off: number, r: number) => void): void {
    const s = pool.stride;
    for (let off = 0, end = n * s; off < end; off += s) {
      const k1 = pool.k1(rec, off);
      const k2 = pool.k2(rec, off);
      let r = pool.index.get(k1, k2);
      before?.(rec, off, r);
      const event = rec[off + EVENT];
      if (rec[off + KIND] === ROW.REMOVE) {
        if (r >= 0) pool.dropFrom(pool.members(this.byEvent[event]!), r);
        continue;
      }
      if (r < 0) {
        r = pool.allocIn(pool.members(this.ensure(event)));
        pool.index.set(k1, k2, r);
      }
      copyRecord(rec, off, pool.data, r * s, s);
      if (pool.stamped) pool.wrote(r);
    }
    if (n > 0) this.version++;
  }

  /** Applies n CONSO records (one outcome of a line each) to the whole CONS records held: a line's record is made,
   *  with every outcome empty, by the first, and each record replaces its outcome's fields. */
  applyCons(rec: Float64Array, n: number): void {
    const pool = this.cons;
    // a line's outcomes arrive one after the other: one index probe for them all
    let lastEvent = -1;
    let lastK2 = -1;
    let lastR = -1;
    for (let off = 0, end = n * CONSO.STRIDE; off < end; off += CONSO.STRIDE) {
      const event = rec[off + CONSO.EVENT];
      const k2 = consK2(rec, off);
      let r = event === lastEvent && k2 === lastK2 ? lastR : pool.index.get(event, k2);
      lastEvent = -1;
      if (rec[off + KIND] === ROW.REMOVE) {
        if (r >= 0) pool.dropFrom(this.byEvent[event]!.cons, r);
        continue;
      }
      if (r < 0) {
        r = pool.allocIn(this.ensure(event).cons);
        pool.index.set(event, k2, r);
        const at = r * CONS.STRIDE;
        const d = pool.data;
        d.fill(0, at, at + CONS.STRIDE);
        for (let o = 0; o < 3; o++) {
          const b = at + CONS.O + o * CONS.OSIZE;
          d[b + CONS.BEST_BOOK] = -1; d[b + CONS.WORST_BOOK] = -1; d[b + CONS.PBEST_BOOK] = -1; d[b + CONS.PWORST_BOOK] = -1;
        }
      }
      const at = r * CONS.STRIDE;
      const d = pool.data;
      copyRecord(rec, off, d, at, CONS.BOOKS); // KIND to PLAYER: the same offsets in both layouts
      d[at + CONS.BOOKS] = rec[off + CONSO.BOOKS];
      d[at + CONS.PBOOKS] = rec[off + CONSO.PBOOKS];
      copyRecord(rec, off + CONSO.F, d, at + CONS.O + rec[off + CONSO.OUTCOME] * CONS.OSIZE, CONS.OSIZE);
      pool.wrote(r);
      lastEvent = event;
      lastK2 = k2;
      lastR = r;
    }
    if (n > 0) this.version++;
  }

  applyFair(rec: Float64Array, n: number): void {
    this.applyTo(this.fair, rec, n);
    if (!this.evGrowth || this.changes === null) return;
    for (let off = 0, end = n * FAIR.STRIDE; off < end; off += FAIR.STRIDE) {
      if (rec[off + KIND] !== ROW.REMOVE) {
        this.fairMoved.push(rec[off + FAIR.EVENT], lineNum(rec[off + FAIR.MARKET], rec[off + FAIR.PLAYER], rec[off + FAIR.POINT]), SHARP_INDEX[rec[off + FAIR.SHARP]]);
      }
    }
  }

  applyEv(rec: Float64Array, n: number): void {
    const changes = this.changes;
    if (changes === null) this.applyTo(this.ev, rec, n);
    else {
      const first = changes.evOpened.length;
      this.applyTo(this.ev, rec, n, (q, off, r) => this.notify(changes, q, off, r));
      // a row opened is reported at its edge then: only growth beyond it is news (in order: a row opened twice in
      // the batch keeps the last). Kept whether or not growth is followed now, so a record slot reused later never
      // holds another row's report
      for (let i = first; i < changes.evOpened.length; i++) {
        const row = changes.evOpened[i];
        const r = this.ev.index.get(evK1(row, 0), evK2(row, 0));
        if (r >= 0) this.top(r)[r * N_SHARPS + SHARP_INDEX[row[EVR.SHARP]]] = reported(row[EVR.FAIR + MULTIPLICATIVE], row[EVR.EFF]);
      }
    }
  }

  /** evTop, grown to hold slot r */
  private top(r: number): Float64Array {
    if ((r + 1) * N_SHARPS > this.evTop.length) {
      const grown = new Float64Array(Math.max((r + 1) * N_SHARPS, this.evTop.length * 2));
      grown.set(this.evTop);
      this.evTop = grown;
    }
    return this.evTop;
  }

  /**
   * After a batch's analytics and its quote records are applied (the read model's prices are the batch's): the +EV
   * rows whose edge rose past the highest reported, into `changes.evGrew`. An edge moves without its row's EV bits
   * changing (the shard sends nothing then) when the quote's price moves (CHG records `rec`) or the sharp's no-vig
   * line does (the FAIR records applied); a row is reported again only above its previous report, so a threshold
   * it crosses upwards (ev_alert's 2 %, a min_edge_pct) is announced once (the webhook evaluator's `floor`).
   */
  settleEvGrowth(shard: number, rec: Float64Array, n: number, priceOf: QuotePrice, analyticsFollow: boolean): void {
    const changes = this.changes;
    const moved = this.fairMoved;
    if (!this.evGrowth || changes === null) {
      moved.length = 0;
      this.deferred.delete(shard);
      return;
    }
    if (analyticsFollow) {
      // a batch answered in two messages, its quotes first: its price moves are priced against the no-vig lines and
      // EV bits of the same batch, which come with the next message of the shard (not against the last batch's)
      const keep: number[] = [];
      for (let off = 0, end = n * CHG.STRIDE; off < end; off += CHG.STRIDE) {
        if (rec[off + CHG.KIND] === CHANGE.PRICE) for (let k = 0; k < CHG.STRIDE; k++) keep.push(rec[off + k]);
      }
      if (keep.length > 0) {
        let list = this.deferred.get(shard);
        if (list === undefined) this.deferred.set(shard, (list = []));
        list.push(Float64Array.from(keep));
      }
      return;
    }
    const d = this.ev.data;
    for (let i = 0; i < moved.length; i += 3) {
      const e = this.byEvent[moved[i]];
      if (e === undefined) continue;
      const line = moved[i + 1];
      const s = moved[i + 2];
      for (const r of e.ev.slots) {
        const off = r * EVQ.STRIDE;
        if (((d[off + EVQ.MASK] >>> s) & 1) !== 0 && lineNum(d[off + EVQ.MARKET], d[off + EVQ.PLAYER], d[off + EVQ.POINT]) === line) {
          this.grew(changes, r, s, priceOf);
        }
      }
    }
    moved.length = 0;
    const earlier = this.deferred.get(shard);
    if (earlier !== undefined) {
      this.deferred.delete(shard);
      for (const chg of earlier) this.pricesMoved(changes, chg, chg.length / CHG.STRIDE, priceOf);
    }
    this.pricesMoved(changes, rec, n, priceOf);
  }

  /** the +EV rows of the quotes whose price moved (CHG records), priced now */
  private pricesMoved(changes: AnalyticsChanges, rec: Float64Array, n: number, priceOf: QuotePrice): void {
    const d = this.ev.data;
    for (let off = 0, end = n * CHG.STRIDE; off < end; off += CHG.STRIDE) {
      if (rec[off + CHG.KIND] !== CHANGE.PRICE) continue;
      const r = this.ev.index.get(evK1(rec, off), evK2(rec, off));
      if (r < 0) continue;
      for (let s = 0, mask = d[r * EVQ.STRIDE + EVQ.MASK]; mask !== 0; s++, mask >>>= 1) {
        if ((mask & 1) !== 0) this.grew(changes, r, s, priceOf);
      }
    }
  }

  /** EV record r against sharp index s, priced now: reported when its edge passed the highest reported */
  private grew(changes: AnalyticsChanges, r: number, s: number, priceOf: QuotePrice): void {
    const d = this.ev.data;
    const off = r * EVQ.STRIDE;
    const book = d[off + EVQ.BOOK];
    const price = priceOf(d[off + EVQ.EVENT], d[off + EVQ.MARKET], d[off + EVQ.POINT], d[off + EVQ.PLAYER], d[off + EVQ.OUTCOME], book);
    if (price === 0) return;
    const eff = effectiveAt(price, book);
    const f = this.fair.index.get(d[off + EVQ.EVENT], lineNum(d[off + EVQ.MARKET], d[off + EVQ.PLAYER], d[off + EVQ.POINT]) * 8 + s);
    if (f < 0 || (this.fair.data[f * FAIR.STRIDE + FAIR.VALID] & (1 << MULTIPLICATIVE)) === 0) return;
    const edge = reported(this.fair.data[f * FAIR.STRIDE + FAIR.P + MULTIPLICATIVE * 3 + d[off + EVQ.OUTCOME]], eff);
    const top = this.top(r);
    const floor = top[r * N_SHARPS + s];
    if (!(edge > floor)) return;
    top[r * N_SHARPS + s] = edge;
    const row = this.evRow(d, off, s, eff);
    row[EVR.PRICE] = price;
    changes.evGrew.push({ row, floor });
  }

  /** Opened and closed (quote, sharp) rows of one EVQ record replacing the held record `r` (-1: none). A closed
   *  row is priced as the held record was. */
  private notify(changes: AnalyticsChanges, rec: Float64Array, off: number, r: number): void {
    const old = r < 0 ? 0 : this.ev.data[r * EVQ.STRIDE + EVQ.MASK];
    const now = rec[off + EVQ.MASK];
    for (let s = 0; s < SHARP_BOOK.length; s++) {
      const was = (old >>> s) & 1;
      const is = (now >>> s) & 1;
      if (was === is) continue;
      if (is !== 0) changes.evOpened.push(this.evRow(rec, off, s, rec[off + EVQ.EFF]));
      else changes.evClosed.push(this.evRow(this.ev.data, r * EVQ.STRIDE, s, this.ev.data[r * EVQ.STRIDE + EVQ.EFF]));
    }
  }

  /** One quote against sharp index s as an EVR row at effective price `eff`: each method whose edge is positive
   *  there gets the fair probability of the sharp's current no-vig line, the others (and every method when the
   *  sharp has no line) NaN; the price is the record's (the quote's when its mask last changed). */
  evRow(q: Float64Array, off: number, s: number, eff: number): Float64Array {
    const row = new Float64Array(EVR.STRIDE);
    row[EVR.KIND] = ROW.UPSERT;
    row[EVR.EVENT] = q[off + EVQ.EVENT];
    row[EVR.MARKET] = q[off + EVQ.MARKET];
    row[EVR.POINT] = q[off + EVQ.POINT];
    row[EVR.PLAYER] = q[off + EVQ.PLAYER];
    row[EVR.OUTCOME] = q[off + EVQ.OUTCOME];
    row[EVR.BOOK] = q[off + EVQ.BOOK];
    row[EVR.SHARP] = SHARP_BOOK[s];
    row[EVR.PRICE] = q[off + EVQ.PRICE];
    row[EVR.EFF] = eff;
    const f = this.fair.index.get(q[off + EVQ.EVENT], lineNum(q[off + EVQ.MARKET], q[off + EVQ.PLAYER], q[off + EVQ.POINT]) * 8 + s);
    const fd = this.fair.data;
    const o = q[off + EVQ.OUTCOME];
    const valid = f >= 0 ? fd[f * FAIR.STRIDE + FAIR.VALID] : 0;
    for (let m = 0; m < N_METHODS; m++) {
      const p = fd[f * FAIR.STRIDE + FAIR.P + m * 3 + o];
      row[EVR.FAIR + m] = (valid & (1 << m)) !== 0 && hasEdge(p, eff) ? p : Number.NaN;
    }
    return row;
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
      else this.changes?.arbUpdated.push(copy);
      this.ensure(event).arbs.set(key, copy);
    }
    if (n > 0) this.version++;
  }

  applyMid(rec: Float64Array, n: number): void {
    this.applyTo(this.mid, rec, n);
  }

  /** Every set in the shape scratch() returns, for the property test; EV rows are priced by `priceOf` (the raw
   *  price of a quote now, 0 when none), as a request prices them from the read model. */
  canonical(priceOf: QuotePrice): ScratchSets {
    const sets: ScratchSets = { cons: new Map(), arb: new Map(), ev: new Map(), mid: new Map() };
    for (const e of this.byEvent) {
      if (e === undefined) continue;
      for (const r of e.cons.slots) {
        const rec = this.cons.data.slice(r * CONS.STRIDE, (r + 1) * CONS.STRIDE);
        sets.cons.set(lineKeyOf(rec[CONS.EVENT], rec[CONS.MARKET], rec[CONS.POINT], rec[CONS.PLAYER]), rec);
      }
      for (const a of e.arbs.values()) sets.arb.set(lineKeyOf(a[ARB.EVENT], a[ARB.MARKET], a[ARB.POINT], a[ARB.PLAYER]), a);
      for (const r of e.ev.slots) {
        const off = r * EVQ.STRIDE;
        const mask = this.ev.data[off + EVQ.MASK];
        const d = this.ev.data;
        const price = priceOf(d[off + EVQ.EVENT], d[off + EVQ.MARKET], d[off + EVQ.POINT], d[off + EVQ.PLAYER], d[off + EVQ.OUTCOME], d[off + EVQ.BOOK]);
        const eff = effectiveAt(price, d[off + EVQ.BOOK]);
        for (let s = 0; s < SHARP_BOOK.length; s++) {
          if (((mask >>> s) & 1) === 0) continue;
          const row = this.evRow(d, off, s, eff);
          row[EVR.PRICE] = price;
          sets.ev.set(evKeyOf(row, 0), row);
        }
      }
      for (const r of e.mids.slots) {
        const m = this.mid.data.slice(r * MID.STRIDE, (r + 1) * MID.STRIDE);
        sets.mid.set(midKeyOf(m, 0), m);
      }
    }
    return sets;
  }
}

/** the edge percent a webhook reports for fair probability p at effective price eff (0 when none is positive) */
function reported(p: number, eff: number): number {
  const edge = p === p ? edgePct(p, eff) : 0;
  return edge > 0 ? edge : 0;
}

function eventKey(d: Float64Array, o: number): number {
  return d[o + EVENT];
}

/** consensus key within its event: the line */
function consK2(d: Float64Array, o: number): number {
  return lineNum(d[o + CONS.MARKET], d[o + CONS.PLAYER], d[o + CONS.POINT]);
}

/** EV quote key: event and outcome in k1; line and book in k2 (both exact integers). */
function evK1(d: Float64Array, o: number): number {
  return d[o + EVQ.EVENT] * 4 + d[o + EVQ.OUTCOME];
}

function evK2(d: Float64Array, o: number): number {
  return lineNum(d[o + EVQ.MARKET], d[o + EVQ.PLAYER], d[o + EVQ.POINT]) * 1024 + d[o + EVQ.BOOK];
}

/** middle key: event and market in k1; player and the (lo, hi) pair in k2 (lines are quarter points) */
function midK1(d: Float64Array, o: number): number {
  return d[o + MID.EVENT] * 128 + d[o + MID.MARKET];
}

function midK2(d: Float64Array, o: number): number {
  return ((d[o + MID.PLAYER] + 1) * 16384 + Math.round(d[o + MID.LO] * 4 + 8192)) * 16384 + Math.round(d[o + MID.HI] * 4 + 8192);
}

/** no-vig line key within its event: line and sharp index */
function fairK2(d: Float64Array, o: number): number {
  return lineNum(d[o + FAIR.MARKET], d[o + FAIR.PLAYER], d[o + FAIR.POINT]) * 8 + SHARP_INDEX[d[o + FAIR.SHARP]];
}
