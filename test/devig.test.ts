import t from 'tap';
import {
  ADDITIVE_FLAGGED, additiveFlags, additiveValid, DEVIG_METHODS, devig, devigAll, isDevigMethod, shinProbability, shinZTwoWay, solveOddsRatioC, solvePowerK,
  solveShinZ, SUM_TOLERANCE, type DevigMethod,
} from '../engine/devig.js';
import { decimalToAmerican, impliedProbability } from '../engine/odds.js';
import { Prng, uniform } from '../engine/prng.js';

// Vectors below were worked by hand and cross-checked with a 40-digit Decimal bisection in Python (same
// formulas, independent code); "implied" is always 1/d computed by engine/odds.ts.

/** The assertion near() uses (a tap Test satisfies it). */
interface Asserts {
  ok(value: unknown, message: string): boolean;
}
const implied = (prices: number[]): number[] => prices.map(impliedProbability);
const sum = (xs: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return s;
};
function near(tt: Asserts, actual: number, expected: number, tol: number, msg: string): void {
  tt.ok(Math.abs(actual - expected) <= tol, `${msg}: got ${actual}, expected ${expected} +- ${tol}`);
}
function run(prices: number[], method: DevigMethod): { ok: boolean; p: number[] } {
  const out = new Float64Array(prices.length);
  const ok = devig(implied(prices), method, out);
  return { ok, p: [...out] };
}

t.test('devig - method names', async (t) => {
  t.same([...DEVIG_METHODS], ['multiplicative', 'additive', 'power', 'shin', 'odds_ratio', 'worst_case'], 'the six methods of issue 3, default first');
  for (const m of DEVIG_METHODS) t.ok(isDevigMethod(m), `${m} is a method`);
  t.notOk(isDevigMethod('Multiplicative'), 'names are case-sensitive');
  t.notOk(isDevigMethod('proportional'), 'unknown name');
  t.notOk(isDevigMethod(undefined), 'non-string');
});

t.test('devig - two-way even money 1.909 / 1.909', async (t) => {
  // pi = 1/1.909 = 0.52383446830801..., S = 2 pi = 1.04766893661603 (4.77 % overround)
  // every method is symmetric, so both sides get 0.5; multiplicative is exact: pi / (2 pi) = 0.5
  for (const m of DEVIG_METHODS) {
    const { ok, p } = run([1.909, 1.909], m);
    t.ok(ok, `${m} accepts the set`);
    near(t, p[0]!, 0.5, 1e-15, `${m} side 1`);
    near(t, p[1]!, 0.5, 1e-15, `${m} side 2`);
  }
  const pi = 1 / 1.909;
  // power: pi^k = 1/2 -> k = ln 2 / ln 1.909 = 0.693147180559945 / 0.646583 = 1.0720215110343466
  near(t, solvePowerK([pi, pi]), Math.log(2) / Math.log(1.909), 1e-12, 'power k = ln 2 / ln 1.909');
  near(t, solvePowerK([pi, pi]), 1.0720215110343466, 1e-12, 'power k = 1.07202151103435');
  // odds ratio: odds(0.5) = 1 = odds(pi)/c -> c = pi/(1 - pi) = 1/0.909 = 1.1001100110011
  near(t, solveOddsRatioC([pi, pi]), 1 / 0.909, 1e-12, 'odds-ratio c = 1/0.909');
  // Shin two-way: D = pi - pi = 0, z = (S - 1)(S - 0)/(S * 1) = S - 1 = 0.04766893661603
  near(t, shinZTwoWay(pi, pi), 2 * pi - 1, 1e-15, 'Shin z = S - 1 for a symmetric pair');
  // fair price 1/0.5 = 2.0 displays as +100 (even money) through engine/odds.ts
  const { p } = run([1.909, 1.909], 'multiplicative');
  t.equal(1 / p[0]!, 2, 'fair decimal is exactly 2.0');
  t.equal(decimalToAmerican(1 / p[0]!), 100, 'fair price displays as +100');
});

t.test('devig - lopsided two-way 1.25 / 4.0', async (t) => {
  // pi = 1/1.25 = 0.8, 1/4 = 0.25; S = 1.05
  const m = run([1.25, 4.0], 'multiplicative');
  t.ok(m.ok, 'multiplicative accepts');
  near(t, m.p[0]!, 0.8 / 1.05, 1e-15, 'multiplicative favourite 0.8/1.05 = 0.761904761904762');
  near(t, m.p[1]!, 0.25 / 1.05, 1e-15, 'multiplicative dog 0.25/1.05 = 0.238095238095238');
  // fair prices 1.05/0.8 = 1.3125 -> -round(100/0.3125) = -320; 1.05/0.25 = 4.2 -> +round(320) = +320
  t.equal(decimalToAmerican(1 / m.p[0]!), -320, 'fair favourite displays -320');
  t.equal(decimalToAmerican(1 / m.p[1]!), 320, 'fair dog displays +320');

  // additive: (S - 1)/n = 0.05/2 = 0.025 -> 0.8 - 0.025 = 0.775, 0.25 - 0.025 = 0.225
  const a = run([1.25, 4.0], 'additive');
  t.ok(a.ok, 'additive accepts');
  near(t, a.p[0]!, 0.775, 1e-15, 'additive favourite 0.775');
  near(t, a.p[1]!, 0.225, 1e-15, 'additive dog 0.225');

  // power: k with 0.8^k + 0.25^k = 1; k = 1.0999661041871806 (Decimal bisection);
  // check: 0.8^1.09997 = 0.782352132235624, 0.25^1.09997 = 0.217647867764376, sum 1
  near(t, solvePowerK([0.8, 0.25]), 1.0999661041871806, 1e-12, 'power k');
  const pw = run([1.25, 4.0], 'power');
  near(t, pw.p[0]!, 0.7823521322356238, 1e-13, 'power favourite');
  near(t, pw.p[1]!, 0.2176478677643762, 1e-13, 'power dog');

  // Shin two-way closed form: D = 0.8 - 0.25 = 0.55, D^2 = 0.3025
  // z = (1.05 - 1)(1.05 - 0.3025) / (1.05 (1 - 0.3025)) = 0.05 * 0.7475 / 0.732375 = 0.037375 / 0.732375
  //   = 0.0510325994196962
  near(t, shinZTwoWay(0.8, 0.25), 0.037375 / 0.732375, 1e-15, 'Shin z closed form');
  // For two outcomes Shin equals additive: sqrt(z^2 + 4(1-z)q_2) = 1 + (1-z)(q_2 - q_1) at the root, so
  // p_2 = (1 + q_2 - q_1)/2 = (1 + (pi_2^2 - pi_1^2)/S)/2 = (1 + pi_2 - pi_1)/2 = (1 + 0.25 - 0.8)/2 = 0.225
  const s = run([1.25, 4.0], 'shin');
  near(t, s.p[0]!, 0.775, 1e-15, 'Shin favourite 0.775 (= additive for n = 2)');
  near(t, s.p[1]!, 0.225, 1e-15, 'Shin dog 0.225 (= additive for n = 2)');

  // odds ratio, two outcomes: o1/(c + o1) + o2/(c + o2) = 1 <=> c^2 = o1 o2, odds o1 = 0.8/0.2 = 4, o2 = 0.25/0.75 = 1/3
  // c = sqrt(4/3) = 1.1547005383792515; p1 = 4/(c + 4) = 0.775990762260204, p2 = (1/3)/(c + 1/3) = 0.224009237739796
  const c = Math.sqrt(4 / 3);
  near(t, solveOddsRatioC([0.8, 0.25]), c, 1e-12, 'odds-ratio c = sqrt(o1 o2)');
  const o = run([1.25, 4.0], 'odds_ratio');
  near(t, o.p[0]!, 4 / (c + 4), 1e-13, 'odds-ratio favourite 0.775990762260204');
  near(t, o.p[1]!, 1 / 3 / (c + 1 / 3), 1e-13, 'odds-ratio dog 0.224009237739796');

  // worst case per side: favourite min(0.76190 mult, 0.775 add, 0.78235 power, 0.775 shin) = multiplicative,
  // dog min(0.23810, 0.225, 0.21765, 0.225) = power
  const w = run([1.25, 4.0], 'worst_case');
  t.ok(w.ok, 'worst_case accepts');
  t.equal(w.p[0], m.p[0], 'worst-case favourite is the multiplicative 0.761904761904762');
  t.equal(w.p[1], pw.p[1], 'worst-case dog is the power 0.217647867764376');
});

t.test('devig - three-way with draw 2.10 / 3.40 / 3.60', async (t) => {
  // pi = 0.476190476190476 + 0.294117647058824 + 0.277777777777778, S = 1.04808590102708
  const pi = implied([2.1, 3.4, 3.6]);
  near(t, sum(pi), 1.048085901027077, 1e-15, 'S');
  const m = run([2.1, 3.4, 3.6], 'multiplicative');
  // 0.476190476/1.048085901 = 0.454342984409800, 0.280623608017817, 0.265033407572383
  near(t, m.p[0]!, 0.4543429844097996, 1e-15, 'multiplicative home');
  near(t, m.p[1]!, 0.2806236080178174, 1e-15, 'multiplicative draw');
  near(t, m.p[2]!, 0.2650334075723831, 1e-15, 'multiplicative away');
  // additive: (S - 1)/3 = 0.0480859010270775/3 = 0.0160286336756925, subtracted from each pi
  const a = run([2.1, 3.4, 3.6], 'additive');
  near(t, a.p[0]!, 0.4601618425147837, 1e-15, 'additive home 0.476190476 - 0.016028634');
  near(t, a.p[1]!, 0.2780890133831310, 1e-15, 'additive draw 0.294117647 - 0.016028634');
  near(t, a.p[2]!, 0.2617491441020853, 1e-15, 'additive away 0.277777778 - 0.016028634');
  // power k = 1.04611206147482 (Decimal bisection): p = pi^k
  near(t, solvePowerK(pi), 1.046112061474824, 1e-12, 'power k');
  const pw = run([2.1, 3.4, 3.6], 'power');
  near(t, pw.p[0]!, 0.4601744578604877, 1e-13, 'power home');
  near(t, pw.p[1]!, 0.2779799640763887, 1e-13, 'power draw');
  near(t, pw.p[2]!, 0.2618455780631236, 1e-13, 'power away');
  // Shin, bracketed (n = 3): z = 0.0240828367317284
  near(t, solveShinZ(pi), 0.02408283673172844, 1e-12, 'Shin z');
  const s = run([2.1, 3.4, 3.6], 'shin');
  near(t, s.p[0]!, 0.4586657159613357, 1e-13, 'Shin home');
  near(t, s.p[1]!, 0.2787376371327903, 1e-13, 'Shin draw');
  near(t, s.p[2]!, 0.2625966469058740, 1e-13, 'Shin away');
  // odds ratio c = 1.07671271483744
  near(t, solveOddsRatioC(pi), 1.076712714837436, 1e-12, 'odds-ratio c');
  const o = run([2.1, 3.4, 3.6], 'odds_ratio');
  near(t, o.p[0]!, 0.4577949693195404, 1e-13, 'odds-ratio home');
  near(t, o.p[1]!, 0.2790092536613221, 1e-13, 'odds-ratio draw');
  near(t, o.p[2]!, 0.2631957770191375, 1e-13, 'odds-ratio away');
  // worst case: home min(0.45434 mult, 0.46016, 0.46017, 0.45867) = mult; draw min(0.28062, 0.27809, 0.27798,
  // 0.27874) = power; away min(0.26503, 0.26175, 0.26185, 0.26260) = additive
  const w = run([2.1, 3.4, 3.6], 'worst_case');
  t.same(w.p, [m.p[0], pw.p[1], a.p[2]], 'worst case takes multiplicative, power, additive per side');
});

t.test('devig - longshots: additive validity', async (t) => {
  // Two-way can never go negative: p_2 = pi_2 - (pi_1 + pi_2 - 1)/2 = (1 + pi_2 - pi_1)/2 > 0 since pi_1 < 1.
  // 1.01 / 34: pi = 0.99009900990099 + 0.0294117647058824, S = 1.01951077460687;
  // p_2 = (1 + 0.0294117647058824 - 0.99009900990099)/2 = 0.0196563774024461
  t.ok(additiveValid(implied([1.01, 34])), '1.01 / 34 is additive-valid');
  const a2 = run([1.01, 34], 'additive');
  t.ok(a2.ok, 'additive accepts 1.01 / 34');
  near(t, a2.p[1]!, 0.01965637740244613, 1e-15, 'longshot additive 0.0196563774024461');
  // Even with a huge margin (1.01 / 1.5, S = 1.657) the dog keeps (1 + 0.6667 - 0.9901)/2 = 0.338
  t.ok(additiveValid(implied([1.01, 1.5])), 'two-way additive is valid at any margin');

  // Three-way 1.10 / 7.00 / 51.0: pi = 0.909090909 + 0.142857143 + 0.019607843, S = 1.07155589508531
  // (S - 1)/3 = 0.0238519650284356 > 0.0196078431372549, so the 51.0 longshot gets -0.00424412189118
  const pi = implied([1.1, 7, 51]);
  near(t, pi[2]! - (sum(pi) - 1) / 3, -0.004244121891180715, 1e-15, 'additive longshot would be -0.0042441');
  t.notOk(additiveValid(pi), 'additiveValid reports the set');
  t.equal(additiveFlags(pi), 0b100, 'additiveFlags names the longshot (side 2)');
  t.equal(additiveFlags(implied([1.01, 34])), 0, 'a two-way set flags no side');
  // the longshot is flagged and excluded; the favourite and the draw keep pi_i - (S - 1)/3:
  // 0.909090909 - 0.023851965 = 0.885238944, 0.142857143 - 0.023851965 = 0.119005178
  const a3 = run([1.1, 7, 51], 'additive');
  t.ok(a3.ok, 'additive accepts the set, per side');
  near(t, a3.p[0]!, 0.8852389440624735, 1e-15, 'favourite keeps its additive 0.8852389');
  near(t, a3.p[1]!, 0.11900517782870725, 1e-15, 'draw keeps its additive 0.1190052');
  t.ok(Number.isNaN(a3.p[2]!), 'the longshot is NaN (flagged, excluded)');
  const all = new Float64Array(18);
  const bits = devigAll(pi, all);
  t.equal(bits & 0b111111, 0b111111, 'devigAll: every method valid, additive included');
  t.equal(bits >> ADDITIVE_FLAGGED, 0b100, 'devigAll flags the longshot');
  t.same([all[3], all[4]], [a3.p[0], a3.p[1]], 'devigAll writes the same additive sides');
  t.ok(Number.isNaN(all[5]!), 'and NaN for the flagged one');
  // the other methods still de-vig it
  for (const m of ['multiplicative', 'power', 'shin', 'odds_ratio'] as const) t.ok(run([1.1, 7, 51], m).ok, `${m} accepts`);
  // worst case leaves additive out for the flagged longshot only: home min(0.84838 mult, 0.88524 additive, 0.89257
  // power, 0.87519 shin) = mult 0.848384030418251, draw min(0.13332, 0.11901, 0.09823, 0.11826) = power
  // 0.0982326296606816, away min(0.01830, 0.00920, 0.00655) = Shin 0.00655175378464651 (Decimal bisection,
  // z = 0.0485291998873541); the additive -0.00424 would have been the lowest
  const w = run([1.1, 7, 51], 'worst_case');
  t.ok(w.ok, 'worst_case accepts with the longshot flagged by additive');
  near(t, w.p[0]!, 0.9090909090909091 / 1.0715558950853068, 1e-15, 'worst home = multiplicative');
  near(t, w.p[1]!, 0.09823262966068157, 1e-13, 'worst draw = power');
  near(t, w.p[2]!, 0.006551753784646512, 1e-13, 'worst away = Shin');
  near(t, solveShinZ(pi), 0.04852919988735406, 1e-12, 'Shin z of the longshot set');
});

t.test('devig - underround set is not de-vigged', async (t) => {
  // 2.10 / 2.05: S = 0.476190476 + 0.487804878 = 0.963995354 < 1 (an arbitrage)
  for (const m of DEVIG_METHODS) {
    const { ok, p } = run([2.1, 2.05], m);
    t.notOk(ok, `${m} returns false`);
    t.ok(p.every(Number.isNaN), `${m} writes NaN`);
  }
  t.ok(Number.isNaN(solvePowerK(implied([2.1, 2.05]))), 'no power k');
  t.ok(Number.isNaN(solveShinZ(implied([2.1, 2.05]))), 'no Shin z');
  t.ok(Number.isNaN(solveOddsRatioC(implied([2.1, 2.05]))), 'no odds-ratio c');
});

t.test('devig - S exactly 1 returns the implied probabilities unchanged', async (t) => {
  // 2.0 / 2.0: 0.5 + 0.5 = 1; 1.25 / 5.0: 0.8 + 0.2 = 1 in float64; 4 / 4 / 2: 0.25 + 0.25 + 0.5 = 1
  for (const prices of [[2, 2], [1.25, 5], [4, 4, 2]]) {
    const pi = implied(prices);
    t.equal(sum(pi), 1, `precondition: S of ${prices.join(' / ')} is exactly 1`);
    for (const m of DEVIG_METHODS) t.same(run(prices, m), { ok: true, p: pi }, `${m} on ${prices.join(' / ')}`);
  }
});

t.test('devig - invalid input', async (t) => {
  const out = new Float64Array(3);
  t.notOk(devig([0.5], 'multiplicative', out), 'one outcome');
  t.notOk(devig([], 'power', out), 'no outcome');
  t.notOk(devig([1, 0.1], 'multiplicative', out), 'pi = 1 (d = 1)');
  t.notOk(devig([0, 1.1], 'multiplicative', out), 'pi = 0');
  t.notOk(devig([0.6, Number.NaN], 'shin', out), 'NaN');
  t.notOk(devig([0.6, -0.5, 1.2], 'shin', out), 'negative');
  t.notOk(devig([0.6, 0.6, 0.6], 'power', new Float64Array(2)), 'out too short');
  t.notOk(devig([0.6, 0.6], 'nope' as DevigMethod, out), 'unknown method');
  t.ok(Number.isNaN(out[0]!) && Number.isNaN(out[1]!), 'NaN written on failure');
});

t.test('devig - Shin two-way closed form equals the bracketed solver', async (t) => {
  const cases = [[1.909, 1.909], [1.25, 4.0], [1.01, 34], [1.5, 2.6], [1.8, 1.95], [1.02, 12]];
  for (const prices of cases) {
    const [p1, p2] = implied(prices) as [number, number];
    const zc = shinZTwoWay(p1, p2);
    const zb = solveShinZ([p1, p2]);
    near(t, zc, zb, 1e-12, `z for ${prices.join(' / ')}`);
    for (const pi of [p1, p2]) near(t, shinProbability(pi, p1 + p2, zc), shinProbability(pi, p1 + p2, zb), 1e-13, `p for ${prices.join(' / ')}`);
  }
  const rng = new Prng(0x5e1);
  for (let i = 0; i < 500; i++) {
    const p1 = rng.range(0.02, 0.97);
    const p2 = rng.range(Math.max(0.02, 1 - p1 + 0.001), 0.99);
    near(t, shinZTwoWay(p1, p2), solveShinZ([p1, p2]), 1e-11, `random pair ${i}`);
  }
});

t.test('devig - solved methods sum to 1 and keep the favourite/longshot order (random sets)', async (t) => {
  const rng = new Prng(20240603);
  const out = new Float64Array(3);
  const tmp = new Float64Array(3);
  let checked = 0;
  for (let i = 0; i < 2000; i++) {
    const n = rng.chance(0.5) ? 2 : 3;
    // fair probabilities, then a margin of 0 to 15 % spread unevenly
    const fair = Array.from({ length: n }, () => rng.range(0.01, 1));
    const fs = sum(fair);
    const pi = fair.map((f) => Math.min(0.999, (f / fs) * (1 + rng.range(0.001, 0.15) * rng.range(0.2, 1))));
    if (!(sum(pi) > 1)) continue;
    checked++;
    for (const m of ['power', 'shin', 'odds_ratio'] as const) {
      if (!devig(pi, m, out)) {
        t.fail(`${m} failed on ${pi.join(', ')}`);
        continue;
      }
      const s = sum(out.subarray(0, n));
      if (!(Math.abs(s - 1) <= SUM_TOLERANCE)) t.fail(`${m} sum ${s} on ${pi.join(', ')}`);
      for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) {
        if (pi[a]! > pi[b]! && !(out[a]! > out[b]!)) t.fail(`${m} order broken on ${pi.join(', ')}`);
      }
    }
    // worst case is the per-side minimum of its components
    if (!devig(pi, 'worst_case', out)) t.fail(`worst_case failed on ${pi.join(', ')}`);
    const S = sum(pi);
    const min = pi.map((x) => x / S);
    for (const m of ['additive', 'power', 'shin'] as const) {
      devig(pi, m, tmp);
      // a side the additive method flags (NaN) takes no part
      for (let k = 0; k < n; k++) if (!Number.isNaN(tmp[k]!)) min[k] = Math.min(min[k]!, tmp[k]!);
    }
    if (!min.every((x, k) => x === out[k])) t.fail(`worst_case != per-side minimum on ${pi.join(', ')}`);
  }
  t.ok(checked > 1500, `checked ${checked} overround sets`);
});

t.test('devigAll - every method at once gives exactly what devig gives method by method', async (t) => {
  const r = uniform(11);
  let checked = 0;
  let invalid = 0;
  let flagged = 0;
  for (let k = 0; k < 2000; k++) {
    const n = r() < 0.3 ? 3 : 2;
    // overrounds from fair books to 15 % margins, lopsided lines and longshots (where additive fails)
    const raw = Array.from({ length: n }, () => 0.02 + r() * 0.96);
    const total = raw.reduce((a, b) => a + b, 0);
    const margin = r() < 0.05 ? 1 : 1 + r() * 0.15;
    const implied = Float64Array.from(raw, (x) => (x / total) * margin);
    const all = new Float64Array(DEVIG_METHODS.length * 3).fill(-1);
    const valid = devigAll(implied, all);
    if (valid >> ADDITIVE_FLAGGED !== additiveFlags(implied)) {
      t.fail(`additive flags differ for ${[...implied]}`);
      return;
    }
    flagged += valid >> ADDITIVE_FLAGGED !== 0 ? 1 : 0;
    for (let m = 0; m < DEVIG_METHODS.length; m++) {
      const one = new Float64Array(n);
      const ok = devig(implied, DEVIG_METHODS[m], one);
      if (ok !== ((valid & (1 << m)) !== 0)) {
        t.fail(`${DEVIG_METHODS[m]} validity differs for ${[...implied]}`);
        return;
      }
      if (!ok) { invalid++; continue; }
      for (let i = 0; i < n; i++) {
        if (!Object.is(one[i], all[m * 3 + i])) {
          t.fail(`${DEVIG_METHODS[m]} outcome ${i}: ${one[i]} vs ${all[m * 3 + i]}`);
          return;
        }
      }
      checked++;
    }
  }
  t.ok(checked > 10_000 && invalid > 0, `${checked} method results equal bit for bit, ${invalid} invalid sets agreed`);
  t.ok(flagged > 0, `${flagged} sets with an additive side flagged agreed`);
});

t.test('devig - the power exponent agrees with a plain bisection on random two- and three-way sets', async (t) => {
  // Newton's method stops once a step from the left is below 1e-7 (engine/devig.ts powerRoot); the exponent must
  // still match 200 halvings of [1, 20] to 1e-12 while every pi < 0.99, and the set must be accepted either way
  const r = uniform(23);
  const bisect = (imp: number[]): number => {
    let lo = 1;
    let hi = 20;
    for (let i = 0; i < 200; i++) {
      const k = (lo + hi) / 2;
      if (imp.reduce((a, p) => a + Math.pow(p, k), 0) - 1 > 0) lo = k;
      else hi = k;
    }
    return (lo + hi) / 2;
  };
  let worst = 0;
  let rejected = 0;
  let sets = 0;
  const out = new Float64Array(3);
  while (sets < 5000) {
    const n = sets % 3 === 0 ? 3 : 2;
    const raw = Array.from({ length: n }, () => 0.01 + r());
    const total = raw.reduce((a, b) => a + b, 0);
    const margin = 1 + r() * 0.3;
    const imp = raw.map((x) => (x / total) * margin);
    if (imp.some((p) => p >= 0.99)) continue;
    sets++;
    worst = Math.max(worst, Math.abs(solvePowerK(imp) - bisect(imp)));
    if (!devig(imp, 'power', out)) rejected++;
  }
  t.ok(worst <= 1e-12, `largest difference ${worst} within 1e-12 over ${sets} sets`);
  t.equal(rejected, 0, 'every set accepted (its fair probabilities sum to 1 within 1e-12)');
});

t.test('devig - a zero-margin set whose doubles sum just below 1 is de-vigged as it is, by every method', async (t) => {
  // 1/1.08 + 1/13.5 = 25/27 + 2/27 = 1 exactly; the doubles sum to 0.9999999999999999. Not an arbitrage (S < 1 - 1e-12
  // is), and no margin to remove: the fair probabilities are the implied ones, 25/27 and 2/27.
  const implied = [1 / 1.08, 1 / 13.5];
  t.ok(implied[0] + implied[1] < 1, 'the doubles sum below 1');
  for (const m of DEVIG_METHODS) {
    const out = new Float64Array(2);
    t.ok(devig(implied, m, out), `${m}: de-vigged`);
    t.same([...out], implied, `${m}: the implied probabilities`);
  }
  const all = new Float64Array(18);
  t.equal(devigAll(implied, all) & 0x3f, 0x3f, 'devigAll: every method valid');
  t.same([all[0], all[1], all[15], all[16]], [...implied, ...implied], 'devigAll: multiplicative and worst case the implied');
  // an underround set beyond the noise stays refused
  t.notOk(devig([1 / 2.1, 1 / 2.1], 'multiplicative', new Float64Array(2)), '2.1 / 2.1 (S = 0.952): not de-vigged');
});
