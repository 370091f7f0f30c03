// Price store benchmark: PriceStore.apply against a naive string-keyed Map store doing the same updates, in the
// same run, over one fixed-seed workload (DESIGN.md section 6: 10k events x 3 markets x 20 books, random
// updates). Prints the machine, throughput with p50/p99/p99.9 per batch of 1,000 (perf_hooks histogram), and
// bytes per stored quote at 1,000,000 quotes.
//
//   node --expose-gc dist/bench/store.js

import os from 'node:os';
import { createHistogram } from 'node:perf_hooks';
import { PriceStore } from '../engine/price-store.js';
import { CHG, OBS, RecordBuffer } from '../engine/records.js';
import { uniform as mulberry32 } from '../engine/prng.js';

const SEED = 20260301;
const EVENTS = 10_000;
const MARKETS = 3; // 0 h2h (no point), 1 spreads, 2 totals
const BOOKS = 20;
const OUTCOMES = 2;
const QUOTES = EVENTS * MARKETS * BOOKS * OUTCOMES; // 1,200,000
const BATCH = 1_000;
const UPDATES = 3_000_000;
const MEMORY_QUOTES = 1_000_000;
const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z


/** The workload: every quote posted once, then random updates: 30% repeat the price (a verification), 1% move
 *  the book to a neighbouring line, 0.5% arrive late (stale); the rest move the price by a few ticks. */
class Workload {
  private readonly rnd: () => number;
  private readonly price = new Float64Array(QUOTES);
  private readonly ts = new Float64Array(QUOTES);
  /** line offset (-1, 0, 1 half-points from the event's base line) per (event, market, book) */
  private readonly offset = new Int8Array(EVENTS * MARKETS * BOOKS);
  private clock = T0;
  private seeded = 0;

  constructor(seed: number) {
    this.rnd = mulberry32(seed);
  }

  private point(event: number, market: number, book: number): number {
    if (market === 0) return Number.NaN;
    const off = this.offset[(event * MARKETS + market) * BOOKS + book] * 0.5;
    return market === 1 ? -7.5 + (event % 16) * 0.5 + off : 200.5 + (event % 40) + off;
  }

  private write(buf: Float64Array, i: number, q: number, point: number, price: number, ts: number): void {
    const outcome = q % OUTCOMES;
    const book = Math.floor(q / OUTCOMES) % BOOKS;
    const market = Math.floor(q / (OUTCOMES * BOOKS)) % MARKETS;
    const event = Math.floor(q / (OUTCOMES * BOOKS * MARKETS));
    const off = i * OBS.STRIDE;
    buf[off + OBS.EVENT] = event;
    buf[off + OBS.MARKET] = market;
    buf[off + OBS.POINT] = point;
    buf[off + OBS.PLAYER] = -1;
    buf[off + OBS.OUTCOME] = outcome;
    buf[off + OBS.BOOK] = book;
    buf[off + OBS.PRICE] = price;
    buf[off + OBS.TS] = ts;
  }

  private coords(q: number): [number, number, number] {
    const book = Math.floor(q / OUTCOMES) % BOOKS;
    const market = Math.floor(q / (OUTCOMES * BOOKS)) % MARKETS;
    const event = Math.floor(q / (OUTCOMES * BOOKS * MARKETS));
    return [event, market, book];
  }

  /** The next `n` observations of the seeding pass (every quote once); returns how many were written. */
  fillSeed(buf: Float64Array, n: number): number {
    let i = 0;
    for (; i < n && this.seeded < QUOTES; i++, this.seeded++) {
      const q = this.seeded;
      const price = Math.round((1.5 + this.rnd() * 1.5) * 100) / 100;
      this.price[q] = price;
      this.ts[q] = ++this.clock;
      const [event, market, book] = this.coords(q);
      this.write(buf, i, q, this.point(event, market, book), price, this.clock);
    }
    return i;
  }

  /** `n` random updates. */
  fillUpdates(buf: Float64Array, n: number): void {
    const rnd = this.rnd;
    for (let i = 0; i < n; i++) {
      const q = Math.floor(rnd() * QUOTES);
      const [event, market, book] = this.coords(q);
      const r = rnd();
      let price = this.price[q];
      let ts = ++this.clock;
      if (r < 0.005 && this.ts[q] > 0) {
        ts = this.ts[q] - 1; // late: older than the quote
        price = Math.round((1.5 + rnd() * 1.5) * 100) / 100;
      } else if (r < 0.015 && market !== 0) {
        const k = (event * MARKETS + market) * BOOKS + book;
        this.offset[k] = this.offset[k] === 0 ? (rnd() < 0.5 ? -1 : 1) : 0;
        // a move removes the book's other outcome on the old line: forget it so a later update is a NEW quote
        this.ts[q ^ 1] = 0;
      } else if (r >= 0.315) {
        price = Math.max(1.01, Math.round((price + (Math.floor(rnd() * 9) - 4) / 100) * 100) / 100);
      }
      if (ts > this.ts[q]) {
        this.ts[q] = ts;
        this.price[q] = price;
      }
      this.write(buf, i, q, this.point(event, market, book), price, ts);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Baseline: what one writes first. One Map entry per quote, keyed by a template string of the six fields; no
// ladders, no change records, and a line move leaves the old point's key behind.

interface NaiveQuote {
  price: number;
  lineChangedAt: number;
  verifiedAt: number;
  lastUpdate: number;
}

class NaiveStore {
  readonly quotes = new Map<string, NaiveQuote>();
  staleIgnored = 0;

  apply(obs: Float64Array, count: number): number {
    let applied = 0;
    for (let i = 0, off = 0; i < count; i++, off += OBS.STRIDE) {
      const key = `${obs[off + OBS.EVENT]}|${obs[off + OBS.MARKET]}|${obs[off + OBS.POINT]}|${obs[off + OBS.PLAYER]}|${obs[off + OBS.OUTCOME]}|${obs[off + OBS.BOOK]}`;
      const price = obs[off + OBS.PRICE];
      const ts = obs[off + OBS.TS];
      const q = this.quotes.get(key);
      if (q === undefined) {
        this.quotes.set(key, { price, lineChangedAt: ts, verifiedAt: ts, lastUpdate: ts });
      } else if (ts < q.verifiedAt) {
        this.staleIgnored++;
        continue;
      } else {
        q.verifiedAt = ts;
        q.lastUpdate = ts;
        if (q.price !== price) {
          q.price = price;
          q.lineChangedAt = ts;
        }
      }
      applied++;
    }
    return applied;
  }
}

// ---------------------------------------------------------------------------------------------------------------

interface Target {
  apply(obs: Float64Array, count: number): number;
}

interface Run {
  updatesPerSec: number;
  nsPerUpdate: number;
  p50: number;
  p99: number;
  p999: number;
  applied: number;
}

/** Seeds every quote, then times `UPDATES` random updates in batches of `BATCH`. Input generation is untimed. */
function throughput(target: Target, reset: () => void): Run {
  const work = new Workload(SEED);
  const buf = new Float64Array(BATCH * OBS.STRIDE);
  for (let n = work.fillSeed(buf, BATCH); n > 0; n = work.fillSeed(buf, BATCH)) {
    target.apply(buf, n);
    reset();
  }
  const hist = createHistogram();
  let total = 0n;
  let applied = 0;
  for (let done = 0; done < UPDATES; done += BATCH) {
    work.fillUpdates(buf, BATCH);
    const t0 = process.hrtime.bigint();
    applied += target.apply(buf, BATCH);
    const dt = process.hrtime.bigint() - t0;
    reset();
    total += dt;
    hist.record(dt > 0n ? dt : 1n);
  }
  const ns = Number(total);
  return {
    updatesPerSec: UPDATES / (ns / 1e9),
    nsPerUpdate: ns / UPDATES,
    p50: hist.percentile(50) / 1000,
    p99: hist.percentile(99) / 1000,
    p999: hist.percentile(99.9) / 1000,
    applied,
  };
}

const gc = globalThis.gc;
function collect(): void {
  if (gc !== undefined) {
    gc();
    gc();
  }
}
function used(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Bytes per quote once `MEMORY_QUOTES` distinct quotes are stored (inputs allocated before the first reading). */
function memory(make: () => Target, reset: () => void): { bytes: number; holder: Target } {
  const buf = new Float64Array(BATCH * OBS.STRIDE);
  collect();
  const before = used();
  const target = make();
  for (let q = 0; q < MEMORY_QUOTES; q += BATCH) {
    for (let i = 0; i < BATCH; i++) {
      const n = q + i;
      const off = i * OBS.STRIDE;
      const market = Math.floor(n / (OUTCOMES * BOOKS)) % MARKETS;
      buf[off + OBS.EVENT] = Math.floor(n / (OUTCOMES * BOOKS * MARKETS));
      buf[off + OBS.MARKET] = market;
      buf[off + OBS.POINT] = market === 0 ? Number.NaN : market === 1 ? -3.5 : 220.5;
      buf[off + OBS.PLAYER] = -1;
      buf[off + OBS.OUTCOME] = n % OUTCOMES;
      buf[off + OBS.BOOK] = Math.floor(n / OUTCOMES) % BOOKS;
      buf[off + OBS.PRICE] = 1.5 + (n % 150) / 100;
      buf[off + OBS.TS] = T0 + n;
    }
    target.apply(buf, BATCH);
    reset();
  }
  collect();
  return { bytes: (used() - before) / MEMORY_QUOTES, holder: target };
}

// ---------------------------------------------------------------------------------------------------------------

const started = Date.now();
const cpus = os.cpus();
console.table([{
  cpu: cpus[0]?.model ?? 'unknown',
  cores: cpus.length,
  node: process.version,
  date: new Date().toISOString(),
  'load (1 min)': os.loadavg()[0].toFixed(2),
  workload: `${EVENTS / 1000}k events x ${MARKETS} markets x ${BOOKS} books x ${OUTCOMES} outcomes, seed ${SEED}`,
}]);

// (a) PriceStore; change records are written into a reused buffer, emptied between batches (untimed).
const out = new RecordBuffer(CHG.STRIDE, BATCH * 4);
/** PriceStore behind the Target interface: one call per batch of 1,000, so the adapter costs nothing measurable */
class FlatTarget implements Target {
  readonly store = new PriceStore();
  apply(obs: Float64Array, count: number): number {
    return this.store.apply(obs, count, out);
  }
}
const emptyOut = (): void => {
  out.length = 0;
};

let flatTarget: FlatTarget | null = new FlatTarget();
const flat = throughput(flatTarget, emptyOut);
const flatStale = flatTarget.store.staleIgnored;
flatTarget = null;
collect();

// (b) baseline in the same run, same seed, same updates
let naive: NaiveStore | null = new NaiveStore();
const base = throughput(naive, () => {});
const naiveStale = naive.staleIgnored;
naive = null;
collect();

const fmt = (x: number, d = 0): string => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
console.log(`\nthroughput: ${fmt(UPDATES)} random updates after seeding ${fmt(QUOTES)} quotes; latency per batch of ${fmt(BATCH)}`);
console.table([
  {
    store: 'PriceStore (flat typed arrays, ladders, change records)',
    'updates/s': fmt(flat.updatesPerSec),
    'ns/update': fmt(flat.nsPerUpdate, 0),
    'p50 us/batch': fmt(flat.p50, 1),
    'p99 us/batch': fmt(flat.p99, 1),
    'p99.9 us/batch': fmt(flat.p999, 1),
    applied: fmt(flat.applied),
    stale: fmt(flatStale),
  },
  {
    store: 'baseline: Map<string, object> (no ladders, no records)',
    'updates/s': fmt(base.updatesPerSec),
    'ns/update': fmt(base.nsPerUpdate, 0),
    'p50 us/batch': fmt(base.p50, 1),
    'p99 us/batch': fmt(base.p99, 1),
    'p99.9 us/batch': fmt(base.p999, 1),
    applied: fmt(base.applied),
    stale: fmt(naiveStale),
  },
]);
console.log(`PriceStore / baseline throughput: ${fmt(flat.updatesPerSec / base.updatesPerSec, 2)}x`);

// (c) memory per stored quote
const flatMem = memory(() => new FlatTarget(), emptyOut);
const flatCount = (flatMem.holder as FlatTarget).store.quoteCount;
flatMem.holder = { apply: () => 0 };
collect();
const naiveMem = memory(() => new NaiveStore(), () => {});
const naiveCount = (naiveMem.holder as NaiveStore).quotes.size;

console.log(`\nmemory: heapUsed + arrayBuffers growth after storing ${fmt(MEMORY_QUOTES)} distinct quotes${gc === undefined
  ? ' (APPROXIMATE: global.gc is unavailable, run node with --expose-gc)' : ', measured after global.gc()'}`);
console.table([
  { store: 'PriceStore', quotes: fmt(flatCount), 'bytes/quote': fmt(flatMem.bytes, 1), note: 'flat records, hash indexes, ladders (all growth slack included)' },
  { store: 'baseline: Map<string, object>', quotes: fmt(naiveCount), 'bytes/quote': fmt(naiveMem.bytes, 1), note: 'key string + object + Map entry' },
]);
console.log(`PriceStore / baseline memory: ${fmt(flatMem.bytes / naiveMem.bytes, 3)}x; total run ${fmt((Date.now() - started) / 1000, 1)} s`);
