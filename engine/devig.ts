// De-vig: turn the implied probabilities pi_i = 1/d_i of ONE complete outcome set (S = sum pi_i > 1) into fair
// probabilities (issue 3, "Math"). A 3-way market is de-vigged over all three outcomes; callers never mix a
// 2-way and a 3-way set. Every root is found inside a bracket whose ends are proven to have opposite signs, with an
// iteration cap (Newton's method held in the bracket for the power exponent, Brent's method for the others); the
// result is accepted only if the written p_i sum to 1 within 1e-12.
// No closures: the solvers dispatch on a small integer, and the power method's one scratch array (the logarithms
// of the implied probabilities) is allocated once, so a call allocates nothing.
//
// Contract of devig(implied, method, out):
// - returns false and writes NaN into out[0..n) when n < 2, out is shorter than n, any pi_i is not in (0, 1),
//   S < 1 (underround: an arbitrage or stale data, not de-vigged), or the method has no valid answer;
// - S within the float noise of 1 (|S - 1| <= NOISE, engine/analytics-math.ts: a zero-margin set such as
//   1.08 / 13.5, whose doubles sum to 0.9999999999999999) copies the implied probabilities unchanged, for every
//   method: it is no arbitrage (isArbitrageSum) and has no margin to remove;
// - additive: a side whose p_i = pi_i - (S-1)/n is <= 0 is flagged and excluded (issue 3): it gets NaN, no fair
//   probability, and the others keep theirs (they then sum to more than 1: the method's known failure on longshots,
//   which is why the side is flagged rather than renormalised). additiveFlags() names the flagged sides. The set is
//   still accepted (true): p_i sum to 1, so some side is always positive. A two-way set never flags a side:
//   p_2 = (1 + pi_2 - pi_1)/2 > 0 because pi_1 < 1; only n >= 3 can.
// - worst_case: per outcome the lowest p among multiplicative, additive (for a side it does not flag), power and
//   shin. Its p_i sum to at most 1 (not a distribution: a conservative fair price per side).

import { NOISE } from './analytics-math.js';

export type DevigMethod = 'multiplicative' | 'additive' | 'power' | 'shin' | 'odds_ratio' | 'worst_case';

export const DEVIG_METHODS: readonly DevigMethod[] = Object.freeze([
  'multiplicative', 'additive', 'power', 'shin', 'odds_ratio', 'worst_case',
] as const);

export function isDevigMethod(s: unknown): s is DevigMethod {
  return typeof s === 'string' && (DEVIG_METHODS as readonly string[]).includes(s);
}

/** An implied sum within the float noise of 1: a zero-margin set, de-vigged as the identity. */
function zeroMargin(S: number): boolean {
  return Math.abs(S - 1) <= NOISE;
}

/** Largest accepted |sum p_i - 1| of a solved set. */
export const SUM_TOLERANCE = 1e-12;
/** Brent stops once |residual| is this small, well inside SUM_TOLERANCE. */
const RESIDUAL_STOP = 1e-15;
const MAX_ITER = 200;
const EPS = Number.EPSILON;

const POWER = 0;
const SHIN = 1;
const ODDS_RATIO = 2;
type Solver = typeof POWER | typeof SHIN | typeof ODDS_RATIO;

/** Shin probability for implied pi, booksum S and insider share z in [0, 1]; the rationalised form
 * 2q / (sqrt(z^2 + 4(1-z)q) + z), q = pi^2/S, equals (sqrt(z^2 + 4(1-z)q) - z) / (2(1-z)) and stays exact at
 * z = 0 (gives pi/sqrt(S)) and z = 1 (gives q). */
export function shinProbability(pi: number, S: number, z: number): number {
  const q = (pi * pi) / S;
  return (2 * q) / (Math.sqrt(z * z + 4 * (1 - z) * q) + z);
}

/** The power method's solver input: ln pi_i, so that pi_i^k = exp(k ln pi_i). Math.pow with a fractional
 * exponent costs about twice an exp here, and a root needs a dozen evaluations of two or three of them
 * (bench/analytics.ts: a two-way devigAll fell from about 3.6 to 1.5 us). */
let LOGS = new Float64Array(3);

function logsOf(implied: ArrayLike<number>): Float64Array {
  const n = implied.length;
  if (LOGS.length < n) LOGS = new Float64Array(n);
  for (let i = 0; i < n; i++) LOGS[i] = Math.log(implied[i]!);
  return LOGS;
}

/** fair probability of one outcome at parameter x; for POWER `pi` is ln pi (logsOf) */
function fairOf(kind: Solver, pi: number, S: number, x: number): number {
  if (kind === POWER) return Math.exp(x * pi);
  if (kind === SHIN) return shinProbability(pi, S, x);
  return pi / (x + pi - x * pi); // odds(p) = odds(pi)/c
}

/** sum of the fair p_i at parameter x, minus 1; decreasing in x for all three solvers. */
function residual(kind: Solver, implied: ArrayLike<number>, n: number, S: number, x: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += fairOf(kind, implied[i]!, S, x);
  return sum - 1;
}

/** Brent's method (Brent 1973; the zbrent layout of Numerical Recipes) on [a, b] where the residual changes
 * sign. Returns NaN when the bracket does not. */
function brent(kind: Solver, implied: ArrayLike<number>, n: number, S: number, a: number, b: number): number {
  let fa = residual(kind, implied, n, S, a);
  let fb = residual(kind, implied, n, S, b);
  if (Math.abs(fa) <= RESIDUAL_STOP) return a;
  if (Math.abs(fb) <= RESIDUAL_STOP) return b;
  if ((fa > 0 && fb > 0) || (fa < 0 && fb < 0) || Number.isNaN(fa) || Number.isNaN(fb)) return Number.NaN;
  let c = b;
  let fc = fb;
  let d = b - a;
  let e = d;
  for (let iter = 0; iter < MAX_ITER; iter++) {
    if ((fb > 0 && fc > 0) || (fb < 0 && fc < 0)) {
      c = a; fc = fa; d = b - a; e = d;
    }
    if (Math.abs(fc) < Math.abs(fb)) {
      a = b; b = c; c = a; fa = fb; fb = fc; fc = fa;
    }
    const tol = 2 * EPS * Math.abs(b);
    const xm = 0.5 * (c - b);
    if (Math.abs(xm) <= tol || Math.abs(fb) <= RESIDUAL_STOP) return b;
    if (Math.abs(e) >= tol && Math.abs(fa) > Math.abs(fb)) {
      const s = fb / fa;
      let p: number;
      let q: number;
      if (a === c) {
        p = 2 * xm * s;
        q = 1 - s;
      } else {
        const qq = fa / fc;
        const r = fb / fc;
        p = s * (2 * xm * qq * (qq - r) - (b - a) * (r - 1));
        q = (qq - 1) * (r - 1) * (s - 1);
      }
      if (p > 0) q = -q;
      p = Math.abs(p);
      if (2 * p < Math.min(3 * xm * q - Math.abs(tol * q), Math.abs(e * q))) {
        e = d; d = p / q; // interpolation accepted
      } else {
        d = xm; e = d; // bisection
      }
    } else {
      d = xm; e = d;
    }
    a = b;
    fa = fb;
    b += Math.abs(d) > tol ? d : xm > 0 ? tol : -tol;
    fb = residual(kind, implied, n, S, b);
  }
  return b; // cap reached: the caller's sum check decides
}

/** Sum of pi_i, or NaN when n < 2 or any pi_i is outside (0, 1). */
export function bookSum(implied: ArrayLike<number>): number {
  const n = implied.length;
  if (n < 2) return Number.NaN;
  let S = 0;
  for (let i = 0; i < n; i++) {
    const pi = implied[i]!;
    if (!(pi > 0 && pi < 1)) return Number.NaN;
    S += pi;
  }
  return S;
}

/** Power exponent k > 1 with sum pi_i^k = 1 (S > 1), or NaN. Bracket: at k = 1 the residual is S - 1 > 0; with
 * m = max pi_i > 1/n (since S > 1) and K = ln n / -ln m, sum pi_i^(2K) <= n m^(2K) = 1/n < 1. */
export function solvePowerK(implied: ArrayLike<number>): number {
  const S = bookSum(implied);
  if (!(S > 1)) return S === 1 ? 1 : Number.NaN;
  const n = implied.length;
  let m = 0;
  for (let i = 0; i < n; i++) if (implied[i]! > m) m = implied[i]!;
  return powerRoot(implied, logsOf(implied), n, 1, (2 * Math.log(n)) / -Math.log(m));
}

/** The power exponent by Newton's method held inside a bracket [lo, hi] whose ends have opposite signs (rtsafe,
 * Numerical Recipes 9.4): a step that would leave the bracket is replaced by bisection, and the bracket shrinks
 * with every evaluation. f(k) = sum exp(k ln pi_i) - 1 is decreasing and convex, so the tangent at any point meets
 * zero left of the root, and from there Newton's steps climb to it quadratically. The start is the root of f's
 * second-order Taylor polynomial at k = 1 (f(1) = S - 1, f'(1) = sum pi ln pi, f''(1) = sum pi ln^2 pi), within
 * about 1e-4 of the answer; once a step from the left is below 1e-7 the error after it is of the order of that
 * step squared, and the point is taken without another evaluation (the caller checks the p_i sum to 1 within
 * 1e-12). Against a 200-step bisection over 200,000 random two- and three-way sets with margins up to 30 %: within
 * 3e-14 while every pi_i < 0.99, 3e-11 with pi_i up to 1 - 5e-7. Two or three evaluations where Brent's method from
 * [1, hi] took about ten (a two-way devigAll, which a sharp's every move runs, 340 to 260 ns). */
function powerRoot(implied: ArrayLike<number>, logs: Float64Array, n: number, lo: number, hi: number): number {
  let c1 = 0;
  let c2 = 0;
  let c0 = -1;
  for (let i = 0; i < n; i++) {
    const p = implied[i]!;
    const l = logs[i]!;
    c0 += p;
    c1 += p * l;
    c2 += p * l * l;
  }
  const disc = c1 * c1 - 2 * c2 * c0;
  let k = 1 + (disc >= 0 ? (-c1 - Math.sqrt(disc)) / c2 : -c0 / c1);
  if (!(k > lo && k < hi)) k = 0.5 * (lo + hi);
  for (let iter = 0; iter < MAX_ITER; iter++) {
    let sum = 0;
    let slope = 0;
    for (let i = 0; i < n; i++) {
      const e = Math.exp(k * logs[i]!);
      sum += e;
      slope += e * logs[i]!;
    }
    const f = sum - 1;
    if (Math.abs(f) <= RESIDUAL_STOP || Number.isNaN(f)) return Number.isNaN(f) ? Number.NaN : k;
    if (f > 0) lo = k;
    else hi = k;
    const step = -f / slope;
    let next = k + step;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    else if (f > 0 && Math.abs(step) <= 1e-7 * k) return next;
    if (next === k) return k;
    k = next;
  }
  return k; // cap reached: the caller's sum check decides
}

/** Odds-ratio constant c > 1 with sum pi_i / (c + pi_i - c pi_i) = 1 (S > 1), or NaN. Two outcomes in closed
 * form; more by bracketing: at c = 1 the
 * residual is S - 1 > 0; at c = sum pi_i/(1 - pi_i) each p_i < pi_i / (c(1 - pi_i)), so the sum is < 1. */
export function solveOddsRatioC(implied: ArrayLike<number>): number {
  const S = bookSum(implied);
  if (!(S > 1)) return S === 1 ? 1 : Number.NaN;
  const n = implied.length;
  // two outcomes: odds(p_1) odds(p_2) = 1 gives c^2 = odds(pi_1) odds(pi_2)
  if (n === 2) return Math.sqrt((implied[0]! / (1 - implied[0]!)) * (implied[1]! / (1 - implied[1]!)));
  let hi = 0;
  for (let i = 0; i < n; i++) hi += implied[i]! / (1 - implied[i]!);
  return brent(ODDS_RATIO, implied, n, S, 1, hi);
}

/** Shin's z in (0, 1) by bracketing, any n >= 2 (S > 1), or NaN. Bracket: at z = 0 the p_i sum to
 * S/sqrt(S) = sqrt(S) > 1; at z = 1 they sum to sum pi_i^2 / S < 1 (pi_i^2 < pi_i). */
export function solveShinZ(implied: ArrayLike<number>): number {
  const S = bookSum(implied);
  if (!(S > 1)) return S === 1 ? 0 : Number.NaN;
  return brent(SHIN, implied, implied.length, S, 0, 1);
}

/** Shin's z for two outcomes in closed form (Jullien & Salanié 1994; Štrumbelj 2014, eq. for n = 2):
 * z = (S - 1)(S - D^2) / (S(1 - D^2)), D = pi_1 - pi_2, from sqrt(z^2 + 4(1-z)q_1) + sqrt(z^2 + 4(1-z)q_2) = 2. */
export function shinZTwoWay(pi1: number, pi2: number): number {
  const S = pi1 + pi2;
  const D2 = (pi1 - pi2) * (pi1 - pi2);
  return ((S - 1) * (S - D2)) / (S * (1 - D2));
}

/** True when every additive p_i = pi_i - (S - 1)/n is > 0 (and the set itself is valid with S >= 1). */
export function additiveValid(implied: ArrayLike<number>): boolean {
  return bookSum(implied) >= 1 - NOISE && additiveFlags(implied) === 0;
}

/** The sides the additive method flags and excludes: bit i set when p_i = pi_i - (S - 1)/n is <= 0 (0 for a set
 *  that is not de-vigged at all: n < 2, a pi_i outside (0, 1), or S < 1). */
export function additiveFlags(implied: ArrayLike<number>): number {
  const S = bookSum(implied);
  if (!(S >= 1 - NOISE) || zeroMargin(S)) return 0;
  const n = implied.length;
  const m = (S - 1) / n;
  let flags = 0;
  for (let i = 0; i < n; i++) if (!(implied[i]! - m > 0)) flags |= 1 << i;
  return flags;
}

function fail(out: Float64Array, n: number): false {
  out.fill(Number.NaN, 0, Math.min(Math.max(n, 0), out.length));
  return false;
}

/** Writes p_i = fairOf(x) into out and accepts the set only if the written values sum to 1 within 1e-12. */
function writeSolved(kind: Solver, implied: ArrayLike<number>, n: number, S: number, x: number, out: Float64Array): boolean {
  if (Number.isNaN(x)) return fail(out, n);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += out[i] = fairOf(kind, implied[i]!, S, x);
  return Math.abs(sum - 1) <= SUM_TOLERANCE ? true : fail(out, n);
}

function shinZ(implied: ArrayLike<number>, n: number): number {
  return n === 2 ? shinZTwoWay(implied[0]!, implied[1]!) : solveShinZ(implied);
}

/**
 * Fair probabilities of one complete outcome set into out[0..n); see the file header for the contract.
 * @returns true when out holds the method's fair probabilities, false (out all NaN) otherwise.
 */
export function devig(implied: ArrayLike<number>, method: DevigMethod, out: Float64Array): boolean {
  const n = implied.length;
  const S = bookSum(implied);
  if (!(S >= 1 - NOISE) || out.length < n) return fail(out, n);
  if (zeroMargin(S)) {
    for (let i = 0; i < n; i++) out[i] = implied[i]!;
    return true;
  }
  switch (method) {
    case 'multiplicative':
      for (let i = 0; i < n; i++) out[i] = implied[i]! / S;
      return true;
    case 'additive': {
      const m = (S - 1) / n;
      for (let i = 0; i < n; i++) out[i] = implied[i]! - m > 0 ? implied[i]! - m : Number.NaN;
      return true;
    }
    case 'power':
      return writeSolved(POWER, logsOf(implied), n, S, solvePowerK(implied), out);
    case 'shin':
      return writeSolved(SHIN, implied, n, S, shinZ(implied, n), out);
    case 'odds_ratio':
      return writeSolved(ODDS_RATIO, implied, n, S, solveOddsRatioC(implied), out);
    case 'worst_case': {
      // power and shin written one after the other into out, each checked, then the minimum taken per side
      const k = solvePowerK(implied);
      if (!writeSolved(POWER, logsOf(implied), n, S, k, out)) return false;
      const z = shinZ(implied, n);
      if (Number.isNaN(z)) return fail(out, n);
      let shinSum = 0;
      for (let i = 0; i < n; i++) shinSum += fairOf(SHIN, implied[i]!, S, z);
      if (!(Math.abs(shinSum - 1) <= SUM_TOLERANCE)) return fail(out, n);
      const m = (S - 1) / n;
      for (let i = 0; i < n; i++) {
        const pi = implied[i]!;
        let p = Math.min(out[i]!, fairOf(SHIN, pi, S, z), pi / S);
        if (pi - m > 0) p = Math.min(p, pi - m);
        out[i] = p;
      }
      return true;
    }
    default:
      return fail(out, n);
  }
}

/** devigAll()'s bit ADDITIVE_FLAGGED + i: the additive method flagged side i (its p_i <= 0; its entry is NaN). */
export const ADDITIVE_FLAGGED = 6;

/**
 * Every method of DEVIG_METHODS at once into out[m * 3 + i] (method m in DEVIG_METHODS order), solving each root
 * once: worst_case reuses the power and Shin solutions instead of solving them again. The numbers are exactly
 * those of devig() method by method (the same expressions in the same order).
 * `base`: where in out the first method's entries start.
 * @returns bit m set when method m gave a valid set (the other methods' entries are left as they were), and bit
 * ADDITIVE_FLAGGED + i when the additive method flagged side i.
 */
export function devigAll(implied: ArrayLike<number>, out: Float64Array, base = 0): number {
  const n = implied.length;
  const S = bookSum(implied);
  if (!(S >= 1 - NOISE)) return 0;
  if (zeroMargin(S)) {
    for (let m = 0; m < DEVIG_METHODS.length; m++) for (let i = 0; i < n; i++) out[base + m * 3 + i] = implied[i]!;
    return (1 << DEVIG_METHODS.length) - 1;
  }
  let valid = 1 | (1 << 1);
  for (let i = 0; i < n; i++) out[base + i] = implied[i]! / S;
  const shift = (S - 1) / n;
  for (let i = 0; i < n; i++) {
    const p = implied[i]! - shift;
    if (p > 0) out[base + 3 + i] = p;
    else {
      out[base + 3 + i] = Number.NaN;
      valid |= 1 << (ADDITIVE_FLAGGED + i);
    }
  }
  // the logarithms once, for the power root and its probabilities (solvePowerK's own steps, sharing them)
  let max = 0;
  for (let i = 0; i < n; i++) if (implied[i]! > max) max = implied[i]!;
  const logs = logsOf(implied);
  const k = powerRoot(implied, logs, n, 1, (2 * Math.log(n)) / -Math.log(max));
  const power = solvedAt(POWER, logs, n, S, k, out, base + 6);
  if (power) valid |= 1 << 2;
  const z = shinZ(implied, n);
  const shin = solvedAt(SHIN, implied, n, S, z, out, base + 9);
  if (shin) valid |= 1 << 3;
  if (solvedAt(ODDS_RATIO, implied, n, S, solveOddsRatioC(implied), out, base + 12)) valid |= 1 << 4;
  // worst_case: devig() accepts it exactly when power and Shin are both accepted
  if (power && shin) {
    for (let i = 0; i < n; i++) {
      let p = Math.min(out[base + 6 + i]!, out[base + 9 + i]!, out[base + i]!);
      if (implied[i]! - shift > 0) p = Math.min(p, implied[i]! - shift);
      out[base + 15 + i] = p;
    }
    valid |= 1 << 5;
  }
  return valid;
}

/** writeSolved into out[at..at + n), leaving it as it was when the set is not accepted */
function solvedAt(kind: Solver, implied: ArrayLike<number>, n: number, S: number, x: number, out: Float64Array, at: number): boolean {
  if (Number.isNaN(x)) return false;
  const p0 = fairOf(kind, implied[0]!, S, x);
  const p1 = fairOf(kind, implied[1]!, S, x);
  const p2 = n > 2 ? fairOf(kind, implied[2]!, S, x) : 0;
  let sum = p0 + p1 + p2;
  for (let i = 3; i < n; i++) sum += fairOf(kind, implied[i]!, S, x);
  if (!(Math.abs(sum - 1) <= SUM_TOLERANCE)) return false;
  out[at] = p0;
  out[at + 1] = p1;
  if (n > 2) out[at + 2] = p2;
  for (let i = 3; i < n; i++) out[at + i] = fairOf(kind, implied[i]!, S, x);
  return true;
}
