// What the shards' analytics publish, one row at a time, shared by the incremental engine (analytics.ts) and
// the from-scratch recomputation (analytics-scratch.ts): which quotes count, and how a consensus, an arbitrage
// and a group's middles are written as records (engine/records.ts CONS, ARB, MID).

import { BOOKMAKERS, MARKETS, OUTRIGHTS } from './catalogue.js';
import { DEVIG_METHODS } from './devig.js';
import { SERVED_DIGITS } from './odds.js';
import { ARB, CONS, EVR, MID, ROW } from './records.js';
import { consistentMoneyline } from './analytics-math.js';
import { LD, MAX_OUTCOMES, type PriceStore } from './price-store.js';
import { SHARP_BOOKS, STALE_MS } from './sla.js';

export const N_METHODS = DEVIG_METHODS.length;
/** sharps fit one Int32 mask of (sharp, method) bits per quote: 5 x 6 = 30 */
export const MAX_SHARPS = 5;
/** sharp index per book id, -1 for soft-only books */
export const SHARP_INDEX = new Int8Array(1024).fill(-1);
export const SHARP_BOOK: number[] = [];
if (SHARP_BOOKS.length > MAX_SHARPS) throw new Error(`at most ${MAX_SHARPS} sharp books`);
for (const key of SHARP_BOOKS) {
  const id = BOOKMAKERS.findIndex((b) => b.key === key);
  if (id >= 0) {
    SHARP_INDEX[id] = SHARP_BOOK.length;
    SHARP_BOOK.push(id);
  }
}
export const SHARP_BOOK_IDS: readonly number[] = SHARP_BOOK;
export const PREDICTION = Uint8Array.from(BOOKMAKERS, (b) => (b.kind === 'prediction' ? 1 : 0));
/** DFS pick'em legs are not single bets at a price (the payout is per entry), so they take part in no
 *  analytics; every other kind does. */
const COUNTS = Uint8Array.from(BOOKMAKERS, (b) => (b.kind === 'dfs' ? 0 : 1));
/** outcomes per market id */
export const OUTCOMES = Uint8Array.from(MARKETS, (m) => (m.shape === 'three_way' ? 3 : 2));
/** 1 for markets whose lines can form middles (spreads, totals, props) */
export const MIDDLE_MARKET = Uint8Array.from(MARKETS, (m) => (m.key === 'spreads' || m.key === 'totals' || m.kind === 'prop' ? 1 : 0));
export const SPREADS = MARKETS.findIndex((m) => m.key === 'spreads');
const DEFAULT_STALE_MS = 300_000;

export function staleMs(book: number): number {
  return book < STALE_MS.length ? STALE_MS[book] : DEFAULT_STALE_MS;
}

/** Whether a quote counts, shared by the incremental engine and scratch(): not a DFS book, no older than its
 *  book's stale threshold (age strictly above it is stale), and, on a two-way moneyline, in a consistent pair with
 *  its book's other side (consistentSlot). */
export function isFresh(store: PriceStore, slot: number, now: number): boolean {
  const book = store.bookOf(slot);
  return counts(book) && now - store.lastUpdateOf(slot) <= staleMs(book) && consistentSlot(store, slot);
}

/** the two-way moneyline, and an outright's Yes and No: the markets whose book-lines are checked for consistency
 *  (a venue's own Yes at 1/0.12 and No at 1/0.80 is an arbitrage against itself, as a 2.1 / 2.1 moneyline is) */
export const H2H = MARKETS.findIndex((m) => m.key === 'h2h');
export const OUTRIGHT = MARKETS.findIndex((m) => m.key === OUTRIGHTS);
export function pairJudged(market: number): boolean {
  return market === H2H || market === OUTRIGHT;
}

/** A quote's book-line is consistent (consistentMoneyline) or of a market whose pairs are not judged. */
export function consistentSlot(store: PriceStore, slot: number): boolean {
  if (!pairJudged(store.lineMarket(store.lineOfSlot(slot)))) return true;
  const base = slot - (slot % MAX_OUTCOMES);
  return consistentMoneyline(store.priceOf(base), store.priceOf(base + 1));
}

export function counts(book: number): boolean {
  return book >= COUNTS.length || COUNTS[book] === 1;
}

const SEEN = new Int32Array(1024);
let seenStamp = 0;

/** Implied probabilities are summed in units of 1 / FIXED (rounded), so the incremental engine can add and
 *  remove them exactly and its sums equal a from-scratch recomputation bit for bit. Any realistic sum stays far
 *  below 2^53 units. */
export const FIXED = 1e12;

/**
 * The consensus odds 1 / p of a mean of implied probabilities summed in FIXED units, to the significant digits those
 * sums carry: p is exact to within 1 / FIXED, so 1 / p to a relative 1 / (p * FIXED), and its twelfth digit was
 * noise (one book at 9.0 was served 9.00000000001, at 3.27 as 3.26999999999: the analytics audit). At most
 * SERVED_DIGITS; 10 for p from 0.1 to 1, one fewer per decade below.
 */
export function consensusOdds(p: number): number {
  const digits = Math.max(1, Math.min(SERVED_DIGITS, Math.floor(Math.log10(p * FIXED)) - 1));
  return Number((1 / p).toPrecision(digits));
}

/** The identity fields of a consensus record (CONS, or CONSO: the same offsets). */
export function writeConsensusHead(store: PriceStore, line: number, d: Float64Array, off: number): void {
  d[off + CONS.KIND] = ROW.UPSERT;
  d[off + CONS.EVENT] = store.lineEvent(line);
  d[off + CONS.MARKET] = store.lineMarket(line);
  d[off + CONS.POINT] = store.linePoint(line);
  d[off + CONS.PLAYER] = store.linePlayer(line);
}

/** Best and worst raw price (ties to the lower book id) of one outcome's fresh quotes into the outcome fields at
 *  b, non-prediction and prediction books apart (`cnt` / `pcnt`: how many there are; 0 skips the search). The
 *  ladder is ordered by effective price, and a raw price is at least its effective price and at most
 *  1 + (eff - 1) / (1 - max commission), so each search stops as soon as nothing further can beat it: usually
 *  after a quote or two from either end. The bounds carry a relative slack of 1e-9: an effective price is
 *  computed in floating point and may sit an ulp off, and a raw price equal to the best (or worst) must still be
 *  met for the book-id tie-break. */
const SLACK = 1 + 1e-9;

export function writeExtremes(store: PriceStore, line: number, o: number, cnt: number, pcnt: number, flags: boolean,
  now: number, d: Float64Array, b: number): void {
  const ladder = store.ladder(line, o);
  const widen = 1 / (1 - store.maxCommission);
  for (let p = 0; p < 2; p++) {
    const want = p === 1 ? 1 : 0;
    let best = 0, bestBook = -1, worst = 0, worstBook = -1;
    if ((p === 0 ? cnt : pcnt) > 0) {
      for (let k = 0; k < ladder.length; k += LD.STRIDE) {
        if (bestBook >= 0 && (1 + (ladder[k + LD.PRICE] - 1) * widen) * SLACK < best) break;
        const book = ladder[k + LD.BOOK];
        if (PREDICTION[book] !== want || (flags ? (ladder[k + LD.FLAG] & 1) === 0 : !isFresh(store, ladder[k + LD.SLOT], now))) continue;
        const price = ladder[k + LD.RAW];
        if (bestBook < 0 || price > best || (price === best && book < bestBook)) { best = price; bestBook = book; }
      }
      for (let k = ladder.length - LD.STRIDE; k >= 0; k -= LD.STRIDE) {
        if (worstBook >= 0 && ladder[k + LD.PRICE] > worst * SLACK) break;
        const book = ladder[k + LD.BOOK];
        if (PREDICTION[book] !== want || (flags ? (ladder[k + LD.FLAG] & 1) === 0 : !isFresh(store, ladder[k + LD.SLOT], now))) continue;
        const price = ladder[k + LD.RAW];
        if (worstBook < 0 || price < worst || (price === worst && book < worstBook)) { worst = price; worstBook = book; }
      }
    }
    if (p === 0) {
      d[b + CONS.BEST] = best; d[b + CONS.BEST_BOOK] = bestBook; d[b + CONS.WORST] = worst; d[b + CONS.WORST_BOOK] = worstBook;
    } else {
      d[b + CONS.PBEST] = best; d[b + CONS.PBEST_BOOK] = bestBook; d[b + CONS.PWORST] = worst; d[b + CONS.PWORST_BOOK] = worstBook;
    }
  }
}

/** Consensus record of a line into d at off (UPSERT), recomputed from its ladders: fresh quotes at `now` only;
 *  raw prices. The incremental engine keeps the same numbers as running sums (analytics.ts). */
export function writeConsensus(store: PriceStore, line: number, d: Float64Array, off: number, now: number): void {
  writeConsensusHead(store, line, d, off);
  const n = OUTCOMES[store.lineMarket(line)];
  const stamp = ++seenStamp;
  let books = 0;
  let pbooks = 0;
  for (let o = 0; o < 3; o++) {
    const b = off + CONS.O + o * CONS.OSIZE;
    let sum = 0, cnt = 0, psum = 0, pcnt = 0;
    if (o < n) {
      const ladder = store.ladder(line, o);
      for (let k = 0; k < ladder.length; k += LD.STRIDE) {
        if (!isFresh(store, ladder[k + LD.SLOT], now)) continue;
        const book = ladder[k + LD.BOOK];
        const units = Math.round(FIXED / ladder[k + LD.RAW]);
        if (SEEN[book] !== stamp) {
          SEEN[book] = stamp;
          if (PREDICTION[book] === 1) pbooks++;
          else books++;
        }
        if (PREDICTION[book] === 1) { psum += units; pcnt++; }
        else { sum += units; cnt++; }
      }
    }
    d[b + CONS.SUM] = cnt === 0 ? 0 : sum / FIXED; d[b + CONS.CNT] = cnt;
    d[b + CONS.PSUM] = pcnt === 0 ? 0 : psum / FIXED; d[b + CONS.PCNT] = pcnt;
    writeExtremes(store, line, o, cnt, pcnt, false, now, d, b);
  }
  d[off + CONS.BOOKS] = books;
  d[off + CONS.PBOOKS] = pbooks;
}

/** Arbitrage record of a line into d at off; returns the implied sum of the best fresh effective prices
 *  (Infinity when an outcome has no fresh quote). */
export function writeArb(store: PriceStore, line: number, flags: boolean, d: Float64Array, off: number, now = 0): number {
  const n = OUTCOMES[store.lineMarket(line)];
  d[off + ARB.KIND] = ROW.UPSERT;
  d[off + ARB.EVENT] = store.lineEvent(line);
  d[off + ARB.MARKET] = store.lineMarket(line);
  d[off + ARB.POINT] = store.linePoint(line);
  d[off + ARB.PLAYER] = store.linePlayer(line);
  d[off + ARB.N] = n;
  d[off + ARB.DETECTED_AT] = 0;
  let S = 0;
  for (let o = 0; o < 3; o++) {
    let k = 0;
    if (o < n) {
      const ladder = store.ladder(line, o);
      for (let i = 0; i < ladder.length && k < ARB.ALTS; i += LD.STRIDE) {
        const slot = ladder[i + LD.SLOT];
        if (flags ? (ladder[i + LD.FLAG] & 1) === 0 : !isFresh(store, slot, now)) continue;
        const leg = off + ARB.LEGS + (o * ARB.ALTS + k) * ARB.LSIZE;
        d[leg + ARB.BOOK] = ladder[i + LD.BOOK];
        d[leg + ARB.PRICE] = ladder[i + LD.RAW];
        d[leg + ARB.EFF] = ladder[i + LD.PRICE];
        if (k === 0) S += 1 / ladder[i + LD.PRICE];
        k++;
      }
      if (k === 0) S = Infinity;
    }
    for (; k < ARB.ALTS; k++) {
      const leg = off + ARB.LEGS + (o * ARB.ALTS + k) * ARB.LSIZE;
      d[leg + ARB.BOOK] = -1;
      d[leg + ARB.PRICE] = 0;
      d[leg + ARB.EFF] = 0;
    }
  }
  d[off + ARB.SUM] = S;
  return S;
}

/** per line of a group: the best two fresh quotes on the over side (outcome 0) and the under side (outcome 1),
 *  as [book, raw price, effective price] x 2, book -1 when none */
export const TOPS_SIZE = 12;
const TOPS = new Float64Array(64 * TOPS_SIZE);
const MID_REC = new Float64Array(MID.STRIDE);
/** middlesOfGroup's scratch, per line of the group (at most 64 pair up): its end of a window, where its tops start,
 *  and the places of the lines whose under side `only` marks */
const XS = new Float64Array(64);
const AT = new Int32Array(64);
const MARKED = new Int32Array(64);
/** the pairs to evaluate, a * 64 + b, and their points for `warm` */
const PAIRS = new Int32Array(64 * 64);
const PAIR_POINTS = new Float64Array(2 * 64 * 64);

export function topTwo(store: PriceStore, line: number, o: number, flags: boolean, now: number, d: Float64Array, off: number): void {
  const ladder = store.ladder(line, o);
  let k = 0;
  for (let i = 0; i < ladder.length && k < 2; i += LD.STRIDE) {
    if (flags ? (ladder[i + LD.FLAG] & 1) === 0 : !isFresh(store, ladder[i + LD.SLOT], now)) continue;
    d[off + k * 3] = ladder[i + LD.BOOK];
    d[off + k * 3 + 1] = ladder[i + LD.RAW];
    d[off + k * 3 + 2] = ladder[i + LD.PRICE];
    k++;
  }
  for (; k < 2; k++) d[off + k * 3] = -1;
}

/** Middles of one group: for every pair of its lines with lo < hi, the best fresh "over" at lo and the best
 *  fresh "under" at hi from two different books (when one book is best on both sides, the better of its two
 *  second-best pairings). Spreads use the home margin: the home leg at home point h covers above -h, the away
 *  leg of the line with home point h' covers below -h'. Each middle is handed to `emit` in a scratch record
 *  that is reused: copy what you keep. `books` is the group's distinct books with a fresh quote, counted here
 *  when -1 (the incremental engine keeps it as it goes). With `only`, just the pairs whose over line's index a has
 *  bit 0 of only[a] set (its over side changed) or whose under line's index b has bit 1 of only[b] set. With `tops`, each line's top two are read from tops at line * TOPS_SIZE (kept current by the
 *  caller, see topTwo) instead of being searched. `gone` is told each pair of points (lo < hi) it evaluated that
 *  gave no middle. `warm` is given the pairs of points it will evaluate (lo at 2i, hi at 2i + 1 of `pairs`, n of
 *  them) before the first is: the caller may load what it will read for them. */
export function middlesOfGroup(store: PriceStore, lines: readonly number[], flags: boolean, now: number, books: number,
  only: Uint8Array | null, emit: (rec: Float64Array) => void, tops: Float64Array | null = null,
  gone: ((lo: number, hi: number) => void) | null = null, warm: ((pairs: Float64Array, n: number) => void) | null = null): void {
  const market = store.lineMarket(lines[0]);
  const spreads = market === SPREADS;
  const n = Math.min(lines.length, 64);
  if (books < 0) {
    // every line of the group counts here, also past the first 64 that pair up
    const stamp = ++seenStamp;
    books = 0;
    for (const l of lines) {
      for (let o = 0; o < 2; o++) {
        const ladder = store.ladder(l, o);
        for (let i = 0; i < ladder.length; i += LD.STRIDE) {
          const book = ladder[i + LD.BOOK];
          if (SEEN[book] === stamp || (flags ? (ladder[i + LD.FLAG] & 1) === 0 : !isFresh(store, ladder[i + LD.SLOT], now))) continue;
          SEEN[book] = stamp;
          books++;
        }
      }
    }
  }
  const T = tops ?? TOPS;
  if (tops === null) {
    for (let j = 0; j < n; j++) {
      const l = lines[j];
      topTwo(store, l, 0, flags, now, TOPS, j * TOPS_SIZE);
      topTwo(store, l, 1, flags, now, TOPS, j * TOPS_SIZE + 6);
    }
  }
  // Each line's end of a window and the place of its tops are read once, not once per pair (a line's point is in its
  // record, and the records lie apart). With `only`, a line whose over side it leaves out is paired with the lines
  // whose under side it marks alone: a move on one side of one line of n visits about n pairs instead of n^2, in the
  // order of a loop over every pair that skips the others.
  let marked = 0;
  for (let j = 0; j < n; j++) {
    const l = lines[j];
    XS[j] = spreads ? -store.linePoint(l) : store.linePoint(l);
    AT[j] = (tops === null ? j : l) * TOPS_SIZE;
    if (only !== null && (only[j] & 2) !== 0) MARKED[marked++] = j;
  }
  // a group is one event's market (and player): every middle of it has the same identity
  const event = store.lineEvent(lines[0]);
  const player = store.linePlayer(lines[0]);
  // the pairs first (lo < hi), so that the caller can load what each will read before any is evaluated
  let np = 0;
  for (let a = 0; a < n; a++) {
    const every = only === null || (only[a] & 1) !== 0;
    const m = every ? n : marked;
    for (let i = 0; i < m; i++) {
      const b = every ? i : MARKED[i];
      if (!(XS[a] < XS[b])) continue;
      PAIR_POINTS[2 * np] = XS[a];
      PAIR_POINTS[2 * np + 1] = XS[b];
      PAIRS[np++] = a * 64 + b;
    }
  }
  if (warm !== null) warm(PAIR_POINTS, np);
  const rec = MID_REC;
  for (let k = 0; k < np; k++) {
    const a = PAIRS[k] >> 6;
    const b = PAIRS[k] & 63;
    const xl = XS[a];
    const xh = XS[b];
    const ov = AT[a];
    const un = AT[b] + 6;
    if (T[ov] < 0 || T[un] < 0) {
      if (gone !== null) gone(xl, xh);
      continue;
    }
    let o = ov;
    let u = un;
    if (T[ov] === T[un]) {
      const alt1 = T[ov + 3] < 0 ? -Infinity : T[ov + 5] + T[un + 2];
      const alt2 = T[un + 3] < 0 ? -Infinity : T[ov + 2] + T[un + 5];
      if (alt1 === -Infinity && alt2 === -Infinity) {
        if (gone !== null) gone(xl, xh);
        continue;
      }
      if (alt1 >= alt2) o = ov + 3;
      else u = un + 3;
    }
    rec[MID.KIND] = ROW.UPSERT;
    rec[MID.EVENT] = event;
    rec[MID.MARKET] = market;
    rec[MID.PLAYER] = player;
    rec[MID.LO] = xl;
    rec[MID.HI] = xh;
    rec[MID.OVER_BOOK] = T[o];
    rec[MID.OVER_PRICE] = T[o + 1];
    rec[MID.OVER_EFF] = T[o + 2];
    rec[MID.UNDER_BOOK] = T[u];
    rec[MID.UNDER_PRICE] = T[u + 1];
    rec[MID.UNDER_EFF] = T[u + 2];
    rec[MID.BOOKS] = books;
    emit(rec);
  }
}

/** Everything the analytics would publish, recomputed from the store alone at `now` (tests and benchmarks). */
export function lineKeyOf(event: number, market: number, point: number, player: number): string {
  return `${event}|${market}|${point}|${player}`;
}

export function evKeyOf(d: Float64Array, off: number): string {
  return `${lineKeyOf(d[off + EVR.EVENT], d[off + EVR.MARKET], d[off + EVR.POINT], d[off + EVR.PLAYER])}|${d[off + EVR.OUTCOME]}|${d[off + EVR.BOOK]}|${d[off + EVR.SHARP]}`;
}

export function midKeyOf(d: Float64Array, off: number): string {
  return `${d[off + MID.EVENT]}|${d[off + MID.MARKET]}|${d[off + MID.PLAYER]}|${d[off + MID.LO]}|${d[off + MID.HI]}`;
}
