// Pure formulas behind the arbitrage, EV, consensus and middles views (issue 3, "Math"). Prices are decimal
// odds; percents are percents. De-vig lives in devig.ts, conversions and display in odds.ts.

import { impliedProbability, isTakeable, tidy } from './odds.js';

/** Price an exchange quote is really worth after commission on net winnings: 1 + (d - 1)(1 - commission). */
export function effectivePrice(d: number, commission: number): number {
  return 1 + (d - 1) * (1 - commission);
}

/** Price a prediction-market quote is really worth after a fee of `rate * P * (1 - P)` per $1 contract bought at
 *  P = 1/d (Kalshi's taker fee): a contract costs P (1 + rate (1 - P)) and pays 1, so d / (1 + rate (1 - 1/d)).
 *  Increasing in d (the ladders' order is the raw prices' order), and between the prices a commission on winnings
 *  of rate / (1 + rate) and of rate would leave (at d -> infinity and d -> 1). */
export function tradingFeePrice(d: number, rate: number): number {
  return d / (1 + rate * (1 - 1 / d));
}

/**
 * The float noise of an implied sum and of an edge. Each 1/d is correctly rounded, so a sum of two or three of them
 * lies a few ulps (about 1e-16) from the exact sum, and p * d - 1 likewise: the zero-margin line 1.08 / 13.5 sums to
 * 0.9999999999999999 (a "profit" of 2.2e-14 %), a price at exactly the fair odds can show an edge of 2.2e-14 %.
 * Neither is an arbitrage or a +EV price: the implied sum must be below 1 - NOISE, the edge p * d - 1 above NOISE
 * (1e-10 %: a millionth of a cent on a million staked). Every view, incremental or from scratch, served or pushed,
 * decides by these two predicates.
 */
export const NOISE = 1e-12;

/** An implied sum that is an arbitrage: below 1 by more than the float noise. */
export function isArbitrageSum(S: number): boolean {
  return S < 1 - NOISE;
}

/** A fair probability p and a decimal (effective) price d with a positive edge beyond the float noise. Monotone in
 *  d, so the quotes with an edge are a prefix of a ladder ordered by price. */
export function hasEdge(p: number, d: number): boolean {
  return p * d - 1 > NOISE;
}

/**
 * Implied sum S = sum 1/d_i over the best (effective) price per outcome of one market and line. When S is an
 * arbitrage sum (isArbitrageSum: below 1 beyond the float noise) the set is an arbitrage and out[0..n) receives
 * each outcome's share of the total stake, (1/d_i)/S; otherwise out is left untouched. Returns NaN (out
 * untouched) when a price is not takeable (<= 1, infinite or NaN), since 1/Infinity = 0 would fake an arbitrage.
 */
export function arbitrage(prices: ArrayLike<number>, out: Float64Array): number {
  const n = prices.length;
  let S = 0;
  for (let i = 0; i < n; i++) {
    const d = prices[i]!;
    if (!isTakeable(d)) return Number.NaN;
    S += impliedProbability(d);
  }
  if (isArbitrageSum(S)) for (let i = 0; i < n; i++) out[i] = impliedProbability(prices[i]!) / S;
  return S;
}

/** The sums of implied probabilities within which a book's own two-way moneyline is taken as consistent (SPEC:
 *  "two-way moneylines are checked for internal consistency"): below 0.98 the book offers itself as an arbitrage,
 *  above 1.5 no book prices a moneyline; either is a feed error far more often than a price. */
export const MONEYLINE_SUM = [0.98, 1.5] as const;

/** Whether a book's two moneyline prices (decimal; 0 for a side it does not quote) are consistent: a side alone is
 *  not judged. The same rule holds a book back in /odds and keeps its quotes out of every analytics view. */
export function consistentMoneyline(p0: number, p1: number): boolean {
  if (p0 === 0 || p1 === 0) return true;
  const s = 1 / p0 + 1 / p1;
  return s >= MONEYLINE_SUM[0] && s <= MONEYLINE_SUM[1];
}

/** Return on total stake of an arbitrage with implied sum S: (1/S - 1) * 100 (not 1 - S), as served: tidied to 12
 *  significant digits (odds.ts tidy), which is also what minProfit and webhook thresholds compare. */
export function profitPct(S: number): number {
  return tidy((1 / S - 1) * 100);
}

/** Edge of a fair probability p against decimal price d: (p d - 1) * 100, as served and as thresholds and verdict bands
 *  judge it: 0 within the float noise (NOISE), else tidied to 12 significant digits, so that 0.4 at 2.55, 2 % in
 *  decimal arithmetic, is 2 although its doubles give 1.9999999999999796. */
export function edgePct(p: number, d: number): number {
  const x = p * d - 1;
  return Math.abs(x) <= NOISE ? 0 : tidy(x * 100);
}

/** Hold of a line whose outcomes' consensus probabilities sum to `sum`: (sum - 1) * 100, as served: 0 within the float
 *  noise (three books at 1.25 / 5, each a zero-margin pair, average to 0.9999999999999999), else tidied. */
export function holdPct(sum: number): number {
  return Math.abs(sum - 1) <= NOISE ? 0 : tidy((sum - 1) * 100);
}

/** Kelly stake as a fraction of bankroll: max(0, (p d - 1)/(d - 1)) * fraction, 0 within the float noise (hasEdge);
 *  fraction in [0, 1]. */
export function kelly(p: number, d: number, fraction = 0.5): number {
  if (!(fraction >= 0 && fraction <= 1)) throw new RangeError(`kelly fraction must be in [0, 1], got ${fraction}`);
  const edge = p * d - 1;
  if (!(edge > NOISE)) return edge <= NOISE ? 0 : Number.NaN; // d <= 1 means edge < 0, so d - 1 > 0 below
  return (edge / (d - 1)) * fraction;
}

export interface Consensus {
  consensus_prob: number[];
  consensus_odds: number[];
  hold_pct: number;
}

/**
 * Consensus over books. pricesPerOutcome[i] holds the decimal prices of the books quoting outcome i; entries that
 * are not takeable (NaN for "not quoted") are skipped. consensus_prob[i] = mean of 1/d over those books (NaN when
 * none), consensus_odds[i] = 1/consensus_prob[i], hold_pct = (sum consensus_prob - 1) * 100.
 */
export function consensus(pricesPerOutcome: readonly (readonly number[])[]): Consensus {
  const n = pricesPerOutcome.length;
  const consensus_prob = new Array<number>(n);
  const consensus_odds = new Array<number>(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const row = pricesPerOutcome[i]!;
    let s = 0;
    let count = 0;
    for (let j = 0; j < row.length; j++) {
      const d = row[j]!;
      if (!isTakeable(d)) continue;
      s += impliedProbability(d);
      count++;
    }
    const p = count > 0 ? s / count : Number.NaN;
    consensus_prob[i] = p;
    consensus_odds[i] = 1 / p;
    sum += p;
  }
  return { consensus_prob, consensus_odds, hold_pct: (sum - 1) * 100 };
}

/**
 * Mean of a multiset maintained by add/remove/replace in O(1), for the incremental consensus. The sum is kept
 * with Neumaier compensation (sum + carried rounding error), so a long run of adds and removes does not drift:
 * the mean stays within 1e-12 of a from-scratch mean (test: 10,000 random operations). When the count returns
 * to 0 the sum is reset to exactly 0, which clears whatever error is left. The caller only removes values it added.
 */
export class RunningMean {
  private sum: number;
  private comp: number;
  private n: number;

  constructor() {
    this.sum = 0;
    this.comp = 0;
    this.n = 0;
  }

  get count(): number {
    return this.n;
  }

  /** NaN when empty. */
  get mean(): number {
    return this.n === 0 ? Number.NaN : (this.sum + this.comp) / this.n;
  }

  add(x: number): void {
    this.accumulate(x);
    this.n++;
  }

  remove(x: number): void {
    if (this.n === 0) throw new RangeError('RunningMean.remove on an empty mean');
    if (--this.n === 0) {
      this.sum = 0;
      this.comp = 0;
    } else {
      this.accumulate(-x);
    }
  }

  replace(oldValue: number, newValue: number): void {
    if (this.n === 0) throw new RangeError('RunningMean.replace on an empty mean');
    this.accumulate(newValue);
    this.accumulate(-oldValue);
  }

  private accumulate(x: number): void {
    const t = this.sum + x;
    this.comp += Math.abs(this.sum) >= Math.abs(x) ? this.sum - t + x : x - t + this.sum;
    this.sum = t;
  }
}

export interface PushNumber {
  number: number;
  /** net per 100 staked on each leg when the result lands exactly here */
  net: number;
}

export interface Middle {
  window: { low: number; high: number; width: number };
  hit_numbers: number[];
  push_numbers: PushNumber[];
  /** null when no whole number lies strictly inside the window (nothing can hit) */
  profit_if_hit: number | null;
  net_if_below: number;
  net_if_above: number;
  /** null when nothing can hit */
  break_even_hit_rate: number | null;
}

/** A quarter line (x.25, x.75): an Asian line, its stake split in halves on the half and whole lines beside it. */
function quarterLine(line: number): boolean {
  return Math.abs((line * 4) % 2) === 1;
}

/** Net of 100 staked on the Over at `line` (win: 100(d - 1)) when the result is the whole number x: a quarter line
 *  settles as two halves of 50 on line - 0.25 and line + 0.25 (a half won, pushed or lost apiece). */
function overNet(line: number, x: number, win: number): number {
  if (!quarterLine(line)) return x > line ? win : x === line ? 0 : -100;
  let net = 0;
  for (const l of [line - 0.25, line + 0.25]) net += x > l ? win / 2 : x === l ? 0 : -50;
  return net;
}

/** As overNet, for the Under. */
function underNet(line: number, x: number, win: number): number {
  if (!quarterLine(line)) return x < line ? win : x === line ? 0 : -100;
  let net = 0;
  for (const l of [line - 0.25, line + 0.25]) net += x < l ? win / 2 : x === l ? 0 : -50;
  return net;
}

/**
 * Middle between Over at line lo (decimal overPrice) on one book and Under at line hi > lo (underPrice) on
 * another, per 100 staked on EACH leg (200 in total). Nets are profit over the 200 staked. Lines are whole, half or
 * quarter (Asian: x.25 and x.75 stake half on each of the lines 0.25 either side, so a result may win, push or lose
 * half a leg). Per whole-number result x:
 * - hit_numbers: both legs win whole (x strictly inside (lo, hi), beyond a quarter line's nearer half):
 *   profit_if_hit = 100(do - 1) + 100(du - 1).
 * - push_numbers: a leg pushes, whole or half (lo or hi whole; a result beside a quarter line), with the net there:
 *   at a whole lo, Over pushes and Under wins, 100(du - 1); over 220.25 at 220, half the Over lost and the Under
 *   won, -50 + 100(du - 1).
 * - net_if_below (below every such number): Under wins, Over loses, 100(du - 1) - 100; net_if_above:
 *   100(do - 1) - 100.
 * - break_even_hit_rate: the probability h of landing on a hit number at which the expected value is zero, when
 *   a miss is worth miss = (net_if_below + net_if_above)/2 (push numbers are left out of this model):
 *   h * profit_if_hit + (1 - h) * miss = 0, so h = -miss / (profit_if_hit - miss), clipped to [0, 1]. It is 0
 *   when miss >= 0: the pair never loses (an arbitrage), any hit rate breaks even.
 * A window with no hit number (44 to 44.5; 220.75 to 221.25, whose 221 wins half of each leg) cannot hit:
 * profit_if_hit and break_even_hit_rate are null, and what it offers is its push numbers' nets.
 * Returns null when hi <= lo, a line is not finite or a price is not takeable.
 */
export function middle(lo: number, overPrice: number, hi: number, underPrice: number): Middle | null {
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && hi > lo)) return null;
  if (!isTakeable(overPrice) || !isTakeable(underPrice)) return null;
  const overWin = 100 * (overPrice - 1);
  const underWin = 100 * (underPrice - 1);
  const hit_numbers: number[] = [];
  const push_numbers: PushNumber[] = [];
  // below floor(lo) the Over loses whole and the Under wins whole, above ceil(hi) the reverse, whatever the lines
  for (let x = Math.floor(lo); x <= Math.ceil(hi); x++) {
    const o = overNet(lo, x, overWin);
    const u = underNet(hi, x, underWin);
    if (o === overWin && u === underWin) hit_numbers.push(x);
    else if ((o === -100 && u === underWin) || (o === overWin && u === -100)) continue;
    else push_numbers.push({ number: x, net: o + u });
  }
  const profit_if_hit = overWin + underWin;
  const net_if_below = underWin - 100;
  const net_if_above = overWin - 100;
  const miss = (net_if_below + net_if_above) / 2;
  const h = miss >= 0 ? 0 : -miss / (profit_if_hit - miss);
  return {
    // served, and compared with max_width, to 12 significant digits: 2.7 - 1.3 is 1.4000000000000001 in doubles
    window: { low: lo, high: hi, width: tidy(hi - lo) },
    hit_numbers,
    push_numbers,
    profit_if_hit: hit_numbers.length === 0 ? null : profit_if_hit,
    net_if_below,
    net_if_above,
    break_even_hit_rate: hit_numbers.length === 0 ? null : Math.min(1, Math.max(0, h)),
  };
}
