// Best bets (issue 5): a sweep of every line of a sport, each side graded by the verdict engine against the sharp
// book's fresh no-vig line; kept when its best price among the caller's books is +EV by at least min_edge and
// enough books quote the line. Also edge alerts: a book whose price is far from the other books' consensus.
//
// Consensus of an alert is leave-one-out and robust: the median no-vig probability (multiplicative) of the OTHER
// books with a fresh complete set on the same line, so one wild price moves neither its own consensus nor, much,
// the consensus the other books are judged against; at least two other books are needed. distance = (consensus_prob * price - 1) * 100: positive when the book pays more than
// the market thinks fair (a stale or wrong line: why it looks +EV), negative when it pays far less. A book is
// called stale when every other book has moved its price on that side since this book last moved; otherwise
// the price is off the market.

import { BOOKMAKERS, MARKETS } from './catalogue.js';
import { devig } from './devig.js';
import { canonicalInEvent } from './players.js';
import type { EventView, PlayerLookup, ReadModel } from './read-model.js';
import { STALE_MS } from './sla.js';
import { edgePct } from './analytics-math.js';
import { lastWrite, quoteOf, sharpFair, verdictOf, type Bet, type Quote, type Verdict } from './verdict.js';

export interface SweepOptions {
  /** market ids considered, null for all */
  markets: ReadonlySet<number> | null;
  /** books the caller can use (bookScope) */
  scope: readonly number[];
  sharp: number;
  minEdge: number;
  minBooks: number;
  /** edge alert threshold: |distance| above this percent */
  alertPct: number;
  includeLive: boolean;
  now: number;
}

export interface BestBet {
  bet: Bet;
  verdict: Exclude<Verdict, 'NO_DATA'>;
  fair: number;
  quote: Quote;
  edge: number;
  /** books with a fresh price on this side of this line */
  booksCompared: number;
  /** oldest write among the sharp set and the graded quote, ms */
  oldest: number;
}

export interface EdgeAlert {
  bet: Bet;
  book: number;
  price: number;
  consensusProb: number;
  distance: number;
  kind: 'stale_line' | 'off_market';
  /** books in the consensus */
  others: number;
  changedAt: number;
  /** the oldest of the other books' last moves on this side, ms */
  othersMovedSince: number;
}

export const MAX_ALERTS = 100;
const SKIP = BOOKMAKERS.map((b) => b.kind === 'dfs');
const CONSENSUS = BOOKMAKERS.map((b) => b.kind === 'sportsbook' || b.kind === 'exchange');
const implied = new Float64Array(3);
const fair = new Float64Array(3);
/** implied and fair of a two-way line (views made once: a subarray per call is an allocation) */
const implied2 = implied.subarray(0, 2);
const fair2 = fair.subarray(0, 2);

/** one line of an event: (market, person, point) with the records of the books quoting it */
interface Line {
  market: number;
  player: number;
  point: number;
  records: number[];
}

function linesOf(rm: ReadModel, names: Pick<PlayerLookup, 'key'>, ev: EventView, markets: ReadonlySet<number> | null): Line[] {
  const canon = canonicalInEvent(ev.records.map((r) => rm.player(r)), names);
  const lines = new Map<string, Line>();
  for (const r of ev.records) {
    const market = rm.market(r);
    if ((markets !== null && !markets.has(market)) || SKIP[rm.book(r)]) continue;
    const pid = rm.player(r);
    const player = pid < 0 ? -1 : canon.get(pid)!;
    const point = rm.point(r);
    const k = `${market}|${player}|${point}`;
    let line = lines.get(k);
    if (line === undefined) lines.set(k, (line = { market, player, point, records: [] }));
    line.records.push(r);
  }
  return [...lines.values()];
}

/** Every graded +EV bet (unranked) and every edge alert of the events. */
export function sweep(rm: ReadModel, names: Pick<PlayerLookup, 'key'>, events: Iterable<EventView>, o: SweepOptions): { bets: BestBet[]; alerts: EdgeAlert[] } {
  const bets: BestBet[] = [];
  const alerts: EdgeAlert[] = [];
  for (const ev of events) {
    // games only: the verdict engine finds a bet by its teams, and futures and event markets have none
    if (ev.status === 'final' || ev.kind !== 'game' || (!o.includeLive && ev.commence <= o.now)) continue;
    for (const line of linesOf(rm, names, ev, o.markets)) {
      const n = MARKETS[line.market].shape === 'three_way' ? 3 : 2;
      const players = line.player < 0 ? [-1] : [...new Set(line.records.map((r) => rm.player(r)))];
      const fresh = (r: number, q: number) => rm.price(r, q) > 0 && o.now - lastWrite(rm, r, q) <= STALE_MS[rm.book(r)] && rm.consistent(r);
      const complete = completeSets(rm, line.records, n, fresh);
      for (let slot = 0; slot < n; slot++) {
        const bet: Bet = { ev, market: line.market, players, player: line.player, slot, point: line.point };
        const quoting = line.records.filter((r) => fresh(r, slot));
        alertsOf(rm, bet, quoting, complete, n, o, alerts);
        if (quoting.length < o.minBooks) continue;
        const f = sharpFair(rm, bet, o.sharp, o.now);
        if (f.prob !== f.prob) continue;
        let best: Quote | null = null;
        for (const b of o.scope) {
          const q = quoteOf(rm, bet, b, o.now);
          if (q !== null && (best === null || q.eff > best.eff)) best = q;
        }
        if (best === null) continue;
        const edge = edgePct(f.prob, best.eff);
        if (!(edge > 0) || edge < o.minEdge) continue;
        bets.push({ bet, verdict: verdictOf(edge), fair: f.prob, quote: best, edge, booksCompared: quoting.length, oldest: Math.min(f.lu, best.lu) });
      }
    }
  }
  return { bets, alerts };
}

/** A line's books whose every side is fresh (those the edge alerts' consensus takes) with their multiplicative
 *  no-vig probabilities, n a record in `fair`: de-vigged once per line for all its sides (once per side before). */
interface CompleteSets {
  recs: number[];
  fair: number[];
}

function completeSets(rm: ReadModel, records: readonly number[], n: number, fresh: (r: number, q: number) => boolean): CompleteSets {
  const out: CompleteSets = { recs: [], fair: [] };
  for (const r of records) {
    if (!CONSENSUS[rm.book(r)]) continue;
    let ok = true;
    for (let q = 0; q < n && ok; q++) ok = fresh(r, q);
    if (!ok) continue;
    for (let q = 0; q < n; q++) implied[q] = 1 / rm.price(r, q);
    if (!devig(n === 3 ? implied : implied2, 'multiplicative', n === 3 ? fair : fair2)) continue;
    out.recs.push(r);
    for (let q = 0; q < n; q++) out.fair.push(fair[q]);
  }
  return out;
}

function alertsOf(rm: ReadModel, bet: Bet, quoting: readonly number[], complete: CompleteSets, n: number, o: SweepOptions, out: EdgeAlert[]): void {
  if (complete.recs.length < 2) return;
  // each complete set's no-vig probability of this side, sorted: each quoting book's leave-one-out median is then
  // read off by index (a sort per book of the others cost O(k^2 log k) a line side: the main-thread audit)
  const recs = complete.recs;
  const probs = recs.map((_, i) => complete.fair[i * n + bet.slot]);
  const m = probs.length;
  // indices filled by a loop: Array.from({ length: m }, f) took most of this function's time (a generic iterable path)
  const order: number[] = [];
  for (let i = 0; i < m; i++) order.push(i);
  order.sort((a, b) => probs[a] - probs[b]);
  const sorted = order.map((i) => probs[i]);
  const rank = new Map<number, number>();
  order.forEach((i, at) => rank.set(recs[i], at));
  // the earliest and second earliest move of this side among the complete sets, for "the others moved since"
  let min1 = Number.POSITIVE_INFINITY;
  let min1r = -1;
  let min2 = Number.POSITIVE_INFINITY;
  for (const r of recs) {
    const ch = rm.changedAt(r, bet.slot);
    if (ch < min1) {
      min2 = min1;
      min1 = ch;
      min1r = r;
    } else if (ch < min2) min2 = ch;
  }
  for (const r of quoting) {
    if (!CONSENSUS[rm.book(r)]) continue;
    const skip = rank.get(r) ?? -1;
    const k = skip < 0 ? m : m - 1;
    if (k < 2) continue;
    const consensusProb = medianWithout(sorted, skip);
    const othersMovedSince = skip >= 0 && r === min1r ? min2 : min1;
    const price = rm.price(r, bet.slot);
    const distance = edgePct(consensusProb, price);
    if (!(Math.abs(distance) > o.alertPct)) continue;
    const changedAt = rm.changedAt(r, bet.slot);
    out.push({
      bet, book: rm.book(r), price, consensusProb, distance, others: k, changedAt, othersMovedSince,
      kind: changedAt < othersMovedSince ? 'stale_line' : 'off_market',
    });
  }
}

/** The median of an ascending list without its element at `skip` (-1: the whole list), read off by index: the same
 *  number median() gives for the list without it. */
export function medianWithout(sorted: readonly number[], skip: number): number {
  const k = skip < 0 ? sorted.length : sorted.length - 1;
  const at = (j: number): number => (skip < 0 || j < skip ? sorted[j] : sorted[j + 1]);
  return k % 2 === 1 ? at(k >> 1) : (at((k >> 1) - 1) + at(k >> 1)) / 2;
}

/** median of a small list (sorted in place) */
export function median(xs: number[]): number {
  xs.sort((a, b) => a - b);
  const m = xs.length >> 1;
  return xs.length % 2 === 1 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
}
