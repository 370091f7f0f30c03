// The fixed-seed workload of the ingest and analytics benchmarks: events x 3 game markets (h2h, spreads -3.5,
// totals 221.5) x 2 outcomes x books, as OBS batches per shard. The prefill quotes every combination once, in
// order; the updates hit random existing quotes. Timestamps increase, so no observation is stale.

import { BOOKMAKERS } from '../../engine/catalogue.js';
import { MARKET_INDEX } from '../../engine/ingest.js';
import { uniform } from '../../engine/prng.js';
import { OBS, RecordBuffer } from '../../engine/records.js';

const MARKETS = [MARKET_INDEX.get('h2h')!, MARKET_INDEX.get('spreads')!, MARKET_INDEX.get('totals')!];
const POINTS = [Number.NaN, -3.5, 221.5];

export interface Workload {
  events: number;
  /** book ids */
  books: readonly number[];
  updates: number;
  batch: number;
  /** decimal price of an observation */
  price(r: () => number): number;
  /** timestamp of observation i */
  ts(i: number, prefill: boolean): number;
}

export function batches(w: Workload, prefill: boolean, shards: number, owner: (event: number) => number): Float64Array[][] {
  const r = uniform(prefill ? 7 : 42);
  const nb = w.books.length;
  const per: Float64Array[][] = Array.from({ length: shards }, () => []);
  const bufs = Array.from({ length: shards }, () => new RecordBuffer(OBS.STRIDE, w.batch));
  const total = prefill ? w.events * 3 * 2 * nb : w.updates;
  for (let i = 0; i < total; i++) {
    const e = prefill ? Math.floor(i / (6 * nb)) : Math.floor(r() * w.events);
    const m = prefill ? Math.floor(i / (2 * nb)) % 3 : Math.floor(r() * 3);
    const s = owner(e);
    const off = bufs[s].push();
    const d = bufs[s].data;
    d[off + OBS.EVENT] = e;
    d[off + OBS.MARKET] = MARKETS[m];
    d[off + OBS.POINT] = POINTS[m];
    d[off + OBS.PLAYER] = -1;
    d[off + OBS.OUTCOME] = prefill ? Math.floor(i / nb) % 2 : r() < 0.5 ? 0 : 1;
    d[off + OBS.BOOK] = w.books[prefill ? i % nb : Math.floor(r() * nb)];
    d[off + OBS.PRICE] = w.price(r);
    d[off + OBS.TS] = w.ts(i, prefill);
    if (bufs[s].length === w.batch) per[s].push(bufs[s].take());
  }
  for (let s = 0; s < shards; s++) if (bufs[s].length > 0) per[s].push(bufs[s].take());
  return per;
}

/** The analytics benchmarks' random worst case (bench/analytics.ts, scripts/branchcmp.mjs): 20 books of which three
 *  are sharps, prices around a 4 % margin with noise, so arbitrage and +EV rows exist in numbers (about half of
 *  all quotes +EV against some sharp). */
export const ANALYTICS_BOOKS: readonly number[] = ['pinnacle', 'betfair_ex_uk', 'lowvig', 'draftkings', 'fanduel',
  'betmgm', 'williamhill_us', 'espnbet', 'betrivers', 'fanatics', 'bovada', 'betonlineag', 'williamhill', 'paddypower',
  'skybet', 'unibet_eu', 'betsson', 'onexbet', 'sportsbet', 'tab'].map((k) => BOOKMAKERS.findIndex((b) => b.key === k));

export function marginPrice(r: () => number): number {
  return Math.round((1.92 + (r() - 0.5) * 0.16) * 100) / 100;
}

/** The random worst case's OBS batches for one shard: the prefill (every quote once) or `updates` random updates,
 *  timestamps from t0 a millisecond apart per thousand. */
export function analyticsWorkload(events: number, updates: number, batch: number, prefill: boolean, t0: number,
  owner: (e: number) => number = () => 0, shards = 1): Float64Array[][] {
  return batches({ events, books: ANALYTICS_BOOKS, updates, batch, price: marginPrice, ts: (i) => t0 + i / 1000 }, prefill, shards, owner);
}

/** Middles-heavy markets (bench/analytics.ts 2d, scripts/branchcmp.mjs wide): `events` totals, each of the 20 books of
 *  ANALYTICS_BOOKS on one of 24 lines (the store keeps one line per book and market), so a game's middles group holds
 *  about 14 lines and a middle for most of their pairs. The prefill quotes both sides of every book once; an update
 *  reprices one side of a random book of a random event, and one in ten first moves the book to a random line.
 *  Batches of 1,000 (the prefill's of 1,000 too), timestamps t0 and t0 + 1,000. */
export function wideTotalsWorkload(events: number, updates: number, t0: number): { prefill: Float64Array[]; updates: Float64Array[] } {
  const totals = MARKET_INDEX.get('totals')!;
  const r = uniform(11);
  const nb = ANALYTICS_BOOKS.length;
  /** each (event, book)'s line */
  const line = Int32Array.from({ length: events * nb }, () => Math.floor(r() * 24));
  const out = (prefill: boolean): Float64Array[] => {
    const list: Float64Array[] = [];
    const buf = new RecordBuffer(OBS.STRIDE, 1000);
    const total = prefill ? events * nb * 2 : updates;
    for (let i = 0; i < total; i++) {
      const event = prefill ? Math.floor(i / (nb * 2)) : Math.floor(r() * events);
      const book = prefill ? i % nb : Math.floor(r() * nb);
      const outcome = prefill ? Math.floor(i / nb) % 2 : r() < 0.5 ? 0 : 1;
      if (!prefill && r() < 0.1) line[event * nb + book] = Math.floor(r() * 24);
      const off = buf.push();
      const d = buf.data;
      d[off + OBS.EVENT] = event;
      d[off + OBS.MARKET] = totals;
      d[off + OBS.POINT] = 200.5 + line[event * nb + book];
      d[off + OBS.PLAYER] = -1;
      d[off + OBS.OUTCOME] = outcome;
      d[off + OBS.BOOK] = ANALYTICS_BOOKS[book];
      d[off + OBS.PRICE] = marginPrice(r);
      d[off + OBS.TS] = prefill ? t0 : t0 + 1000;
      if (buf.length === 1000) list.push(buf.take());
    }
    if (buf.length > 0) list.push(buf.take());
    return list;
  };
  return { prefill: out(true), updates: out(false) };
}
