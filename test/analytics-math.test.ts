import t from 'tap';
import { arbitrage, consensus, edgePct, effectivePrice, tradingFeePrice, hasEdge, holdPct, isArbitrageSum, kelly, middle, NOISE, profitPct, RunningMean } from '../engine/analytics-math.js';
import { FIXED, consensusOdds } from '../engine/analytics-rows.js';
import { decimalToAmerican } from '../engine/odds.js';
import { Prng } from '../engine/prng.js';

// Every expected number is worked out in the comment beside it; the long decimals were checked with Python's
// 30-digit Decimal.

/** The assertion near() uses (a tap Test satisfies it). */
interface Asserts {
  ok(value: unknown, message: string): boolean;
}
function near(tt: Asserts, actual: number, expected: number, tol: number, msg: string): void {
  tt.ok(Math.abs(actual - expected) <= tol, `${msg}: got ${actual}, expected ${expected} +- ${tol}`);
}

t.test('exchange - effective price after commission', async (t) => {
  // betfair 2.10 at 5 %: 1 + (2.10 - 1)(1 - 0.05) = 1 + 1.10 * 0.95 = 1 + 1.045 = 2.045
  near(t, effectivePrice(2.1, 0.05), 2.045, 1e-15, 'betfair 2.10 at 5 % -> 2.045');
  // 3.0 at 2 %: 1 + 2 * 0.98 = 2.96
  near(t, effectivePrice(3, 0.02), 2.96, 1e-15, '3.0 at 2 % -> 2.96');
  t.equal(effectivePrice(1.8, 0), 1.8, 'no commission leaves the price');
});

t.test('prediction market - effective price after a trading fee of rate * P * (1 - P) a contract', async (t) => {
  // Kalshi 2.00 (P = 0.50) at 0.07: a $1 contract costs 0.50 + 0.07 * 0.50 * 0.50 = 0.5175, so 1 / 0.5175 = 1.9323671497584543
  near(t, tradingFeePrice(2, 0.07), 1 / 0.5175, 1e-15, 'kalshi 2.00 -> 1.93237');
  // 4.00 (P = 0.25): 0.25 + 0.07 * 0.25 * 0.75 = 0.263125, so 3.8004750593824228
  near(t, tradingFeePrice(4, 0.07), 1 / 0.263125, 1e-15, 'kalshi 4.00 -> 3.80048');
  // 1.25 (P = 0.80): 0.80 + 0.07 * 0.80 * 0.20 = 0.8112, so 1.2327416173570019
  near(t, tradingFeePrice(1.25, 0.07), 1 / 0.8112, 1e-15, 'kalshi 1.25 -> 1.23274');
  t.equal(tradingFeePrice(2.5, 0), 2.5, 'no fee leaves the price');
  // the ladders' order: increasing in the raw price
  let last = 0;
  const bad: number[] = [];
  for (let d = 1.01; d < 100; d *= 1.01) {
    const e = tradingFeePrice(d, 0.07);
    if (!(e > last && e < d)) bad.push(d);
    last = e;
  }
  t.same(bad, [], 'increasing in the raw price and below it, 1.01 to 100');
});

t.test('arbitrage - two-way 2.10 / 2.05', async (t) => {
  const out = new Float64Array(2);
  // S = 1/2.10 + 1/2.05 = 0.476190476190476 + 0.487804878048780 = 0.963995354239257
  //   = (2.05 + 2.10)/(2.10 * 2.05) = 4.15/4.305
  const S = arbitrage([2.1, 2.05], out);
  near(t, S, 4.15 / 4.305, 1e-15, 'S = 4.15/4.305 = 0.963995354239257');
  // profit = (1/S - 1) * 100 = (4.305/4.15 - 1) * 100 = 0.155/4.15 * 100 = 3.73493975903614 %
  near(t, profitPct(S), 3.734939759036145, 5e-12, 'profit 3.734939759 % of total stake (served to 12 significant digits)');
  t.ok(profitPct(S) > (1 - S) * 100, 'profit is return on stake, not 1 - S (3.6005 %)');
  // stake shares: (1/2.10)/S = 2.05/4.15 = 0.493975903614458; (1/2.05)/S = 2.10/4.15 = 0.506024096385542
  near(t, out[0]!, 2.05 / 4.15, 1e-15, 'stake share on 2.10 = 49.3976 %');
  near(t, out[1]!, 2.1 / 4.15, 1e-15, 'stake share on 2.05 = 50.6024 %');
  // with 100 staked: 49.3976 * 2.10 = 103.735 = 50.6024 * 2.05, both sides return 100/S
  near(t, 100 * out[0]! * 2.1, 100 / S, 1e-12, 'side 1 returns 100/S');
  near(t, 100 * out[1]! * 2.05, 100 / S, 1e-12, 'side 2 returns 100/S');
});

t.test('arbitrage - three-way with draw, exchange leg at its effective price', async (t) => {
  const out = new Float64Array(3);
  // home 2.60 (book), draw 3.90 (book), away exchange 3.85 at 2 % -> 1 + 2.85 * 0.98 = 3.793
  // S = 1/2.6 + 1/3.9 + 1/3.793 = 0.384615384615 + 0.256410256410 + 0.263643553915 = 0.904669194941
  const away = effectivePrice(3.85, 0.02);
  near(t, away, 3.793, 1e-15, 'effective away 3.793');
  const S = arbitrage([2.6, 3.9, away], out);
  near(t, S, 1 / 2.6 + 1 / 3.9 + 1 / 3.793, 1e-15, 'S = 0.904669194941');
  near(t, S, 0.9046691949407478, 1e-13, 'S numeric');
  // profit = (1/0.904669194941 - 1) * 100 = 10.5376424434896 %
  t.equal(profitPct(S), Number(((1 / S - 1) * 100).toPrecision(12)), 'profit formula, to 12 significant digits');
  near(t, profitPct(S), 10.53764244348963, 1e-10, 'profit 10.5376 %');
  near(t, out[0]! + out[1]! + out[2]!, 1, 1e-15, 'stake shares sum to 1');
  near(t, out[1]!, 0.2834298524192042, 1e-13, 'draw share (1/3.9)/S = 0.256410256410/0.904669194941 = 0.28343');
});

t.test('arbitrage - no arbitrage leaves out untouched; bad prices give NaN', async (t) => {
  const out = new Float64Array([7, 7]);
  // 1.909 / 1.909: S = 2/1.909 = 1.04766893661603 >= 1
  near(t, arbitrage([1.909, 1.909], out), 2 / 1.909, 1e-15, 'S of a normal two-way');
  t.same([...out], [7, 7], 'out untouched when S >= 1');
  t.ok(Number.isNaN(arbitrage([Number.POSITIVE_INFINITY, 2], out)), 'infinite price would fake 1/d = 0');
  t.ok(Number.isNaN(arbitrage([1, 5], out)), 'price 1 is not takeable');
  t.ok(Number.isNaN(arbitrage([Number.NaN, 5], out)), 'NaN price');
  t.same([...out], [7, 7], 'out untouched on bad prices');
});

t.test('EV and Kelly - p 0.5 at 2.10', async (t) => {
  // edge = (0.5 * 2.10 - 1) * 100 = (1.05 - 1) * 100 = 5 %
  near(t, edgePct(0.5, 2.1), 5, 1e-12, 'edge 5 %');
  // full Kelly = (1.05 - 1)/(2.10 - 1) = 0.05/1.10 = 0.0454545454545...
  near(t, kelly(0.5, 2.1, 1), 0.05 / 1.1, 1e-15, 'full Kelly 0.0454545');
  // default fraction 0.5: 0.0227272727...
  near(t, kelly(0.5, 2.1), 0.025 / 1.1, 1e-15, 'half Kelly 0.0227273 (default)');
  near(t, kelly(0.5, 2.1, 0.25), 0.0125 / 1.1, 1e-15, 'quarter Kelly 0.0113636');
  // negative edge: 0.5 * 1.90 - 1 = -0.05 -> clipped to 0; edge -5 %
  near(t, edgePct(0.5, 1.9), -5, 1e-12, 'edge -5 %');
  t.equal(kelly(0.5, 1.9), 0, 'Kelly clips a negative edge at 0');
  t.equal(kelly(0.5, 2.0), 0, 'zero edge stakes 0');
  t.throws(() => kelly(0.5, 2.1, 1.5), RangeError, 'fraction above 1');
  t.throws(() => kelly(0.5, 2.1, -0.1), RangeError, 'fraction below 0');
  // EV against a de-vigged sharp line: fair 0.775 (1.25 / 4.0 additive) vs soft 1.35: 0.775 * 1.35 = 1.04625
  near(t, edgePct(0.775, 1.35), 4.625, 1e-12, 'edge 4.625 %');
  // Kelly (1.04625 - 1)/0.35 = 0.132142857 full
  near(t, kelly(0.775, 1.35, 1), 0.04625 / 0.35, 1e-14, 'full Kelly 0.1321429');
});

t.test('consensus - two-way across three books', async (t) => {
  // home: 1/1.90 = 0.526315789474, 1/1.95 = 0.512820512821, 1/2.00 = 0.5  -> mean 1.539136302295/3 = 0.513045434098
  // away: 1/1.95 = 0.512820512821, 1/1.90 = 0.526315789474, 1/1.85 = 0.540540540541 -> mean 0.526558947612
  const c = consensus([[1.9, 1.95, 2.0], [1.95, 1.9, 1.85]]);
  near(t, c.consensus_prob[0]!, 0.513045434098066, 1e-14, 'home consensus prob');
  near(t, c.consensus_prob[1]!, 0.526558947611579, 1e-14, 'away consensus prob');
  // inverses: 1/0.513045434098 = 1.949145111793, 1/0.526558947612 = 1.899122604479
  near(t, c.consensus_odds[0]!, 1.949145111793073, 1e-12, 'home consensus odds');
  near(t, c.consensus_odds[1]!, 1.899122604479335, 1e-12, 'away consensus odds');
  // hold = (0.513045434098 + 0.526558947612 - 1) * 100 = 3.96043817096 %
  near(t, c.hold_pct, 3.960438170964487, 1e-11, 'hold 3.9604 %');
  // the mean of implied probabilities, not of prices: mean price home 1.95 would give 1/1.95 = 0.5128
  t.ok(Math.abs(c.consensus_prob[0]! - 1 / 1.95) > 1e-4, 'averages probabilities, not prices');
  t.equal(decimalToAmerican(c.consensus_odds[0]!), -105, 'display: 100/0.949145 = 105.36 -> -105');
});

t.test('consensus - served odds carry the digits of the fixed-point sums, not their noise', async (t) => {
  // one book at 9.0: its implied probability is summed as round(1e12 / 9) = 111111111111 units, p = 0.111111111111,
  // and 1 / p = 9.000000000009: at 12 digits that was served 9.00000000001. p is exact to 1e-12, 1 / p to a relative
  // 1e-12 / 0.111 = 9e-12: 10 digits (log10(0.111 * 1e12) = 11.05, less one)
  const one = (d: number) => Math.round(FIXED / d) / FIXED;
  t.equal(consensusOdds(one(9)), 9, 'one book at 9.0');
  t.equal(consensusOdds(one(3.27)), 3.27, 'one book at 3.27 (was 3.26999999999)');
  let off = 0;
  for (let c = 101; c <= 5000; c++) if (consensusOdds(one(c / 100)) !== c / 100) off++;
  t.equal(off, 0, 'every one-book price from 1.01 to 50.00 comes back as quoted');
  // a longshot: 1 / 1000 = 1e9 units; log10(1e-3 * 1e12) = 9, less one: 8 digits
  t.equal(consensusOdds(one(1000)), 1000, 'one book at 1000');
  // two books at 2.0 and 4.0: p = (0.5 + 0.25) / 2 = 0.375, 1 / p = 2.666...: 10 digits
  t.equal(consensusOdds(0.375), 2.666666667, 'a mean that is no price: ten significant digits');
});

t.test('consensus - three-way, a book missing one outcome', async (t) => {
  // home 2.10, 2.20 (a third book does not quote it: NaN is skipped): (0.476190476 + 0.454545455)/2 = 0.465367965
  // draw 3.40, 3.30, 3.50: (0.294117647 + 0.303030303 + 0.285714286)/3 = 0.294287412 (0.882862236/3)
  // away 3.60, 3.50, 3.70: (0.277777778 + 0.285714286 + 0.270270270)/3 = 0.277920778
  // hold = (0.465367965 + 0.294287412 + 0.277920778 - 1) * 100 = 3.75761552 %
  const c = consensus([[2.1, 2.2, Number.NaN], [3.4, 3.3, 3.5], [3.6, 3.5, 3.7]]);
  near(t, c.consensus_prob[0]!, (1 / 2.1 + 1 / 2.2) / 2, 1e-15, 'home over two books');
  near(t, c.consensus_prob[0]!, 0.4653679653679654, 1e-12, 'home 0.465367965');
  near(t, c.consensus_prob[1]!, 0.2942874119344708, 1e-12, 'draw 0.294287412');
  near(t, c.consensus_prob[2]!, 0.2779207779207779, 1e-12, 'away 0.277920778');
  near(t, c.hold_pct, 3.757615522321405, 1e-10, 'hold 3.7576 %');
  const empty = consensus([[Number.NaN], [2]]);
  t.ok(Number.isNaN(empty.consensus_prob[0]!) && Number.isNaN(empty.hold_pct), 'no quotes: NaN, not 0');
});

t.test('RunningMean - hand-worked add, replace, remove', async (t) => {
  const m = new RunningMean();
  t.ok(Number.isNaN(m.mean), 'empty mean is NaN');
  m.add(0.5);
  m.add(0.25);
  m.add(0.75);
  t.equal(m.count, 3, 'three values');
  t.equal(m.mean, 0.5, '(0.5 + 0.25 + 0.75)/3 = 0.5');
  m.replace(0.25, 0.4);
  near(t, m.mean, 1.65 / 3, 1e-15, '(0.5 + 0.4 + 0.75)/3 = 0.55');
  m.remove(0.5);
  t.equal(m.count, 2, 'two values');
  near(t, m.mean, 0.575, 1e-15, '(0.4 + 0.75)/2 = 0.575');
  m.remove(0.4);
  m.remove(0.75);
  t.equal(m.count, 0, 'empty again');
  t.ok(Number.isNaN(m.mean), 'mean NaN when empty');
  m.add(0.1);
  t.equal(m.mean, 0.1, 'emptying resets the sum exactly');
  t.throws(() => new RunningMean().remove(1), RangeError, 'remove from empty');
});

t.test('RunningMean - equals a from-scratch mean after 10,000 random operations', async (t) => {
  const rng = new Prng(7);
  const m = new RunningMean();
  const values: number[] = [];
  let worst = 0;
  for (let i = 0; i < 10_000; i++) {
    const r = rng.next();
    // implied probabilities of very different sizes, as in a consensus over longshots and favourites
    const x = rng.chance(0.2) ? 1 / rng.range(1.01, 1001) : rng.range(0, 1);
    if (values.length === 0 || r < 0.45) {
      m.add(x);
      values.push(x);
    } else if (r < 0.75) {
      const k = rng.int(values.length);
      m.replace(values[k]!, x);
      values[k] = x;
    } else {
      const k = rng.int(values.length);
      m.remove(values[k]!);
      values[k] = values[values.length - 1]!;
      values.pop();
    }
    if (values.length === 0) {
      if (m.count !== 0) t.fail('count drifted');
      continue;
    }
    let s = 0;
    for (const v of values) s += v;
    const diff = Math.abs(m.mean - s / values.length);
    if (diff > worst) worst = diff;
    if (m.count !== values.length) t.fail(`count ${m.count} != ${values.length} at step ${i}`);
  }
  t.ok(worst <= 1e-12, `largest difference from scratch ${worst} <= 1e-12`);
  t.equal(m.count, values.length, 'final count');
});

t.test('middles - over 44.5 at 1.91 vs under 47.5 at 1.91', async (t) => {
  const r = middle(44.5, 1.91, 47.5, 1.91);
  if (r === null) return t.fail('middle expected');
  t.same(r.window, { low: 44.5, high: 47.5, width: 3 }, 'window 44.5 to 47.5, width 3');
  t.same(r.hit_numbers, [45, 46, 47], 'whole numbers strictly inside (44.5, 47.5)');
  t.same(r.push_numbers, [], 'half-point lines never push');
  // both win: 100 * 0.91 + 100 * 0.91 = 182
  near(t, r.profit_if_hit!, 182, 1e-12, 'profit if hit 182');
  // below 44.5: Under wins 91, Over loses 100 -> -9; above 47.5: same by symmetry
  near(t, r.net_if_below, -9, 1e-12, 'net if below -9');
  near(t, r.net_if_above, -9, 1e-12, 'net if above -9');
  // miss = -9; h = 9/(182 + 9) = 9/191 = 0.0471204188481675
  near(t, r.break_even_hit_rate!, 9 / 191, 1e-14, 'break-even hit rate 4.712 %');
  // check: EV at h = 9/191 is 182h - 9(1 - h) = 0
  near(t, 182 * r.break_even_hit_rate! - 9 * (1 - r.break_even_hit_rate!), 0, 1e-12, 'EV zero at the break-even rate');
});

t.test('middles - whole-number lines 44 / 47 push at both ends', async (t) => {
  // over 44 at 1.95, under 47 at 1.87
  const r = middle(44, 1.95, 47, 1.87);
  if (r === null) return t.fail('middle expected');
  t.same(r.hit_numbers, [45, 46], '45 and 46 strictly inside (44, 47)');
  // at 44: Over pushes (stake back, 0), Under wins 100 * 0.87 = 87
  // at 47: Under pushes, Over wins 100 * 0.95 = 95
  t.equal(r.push_numbers.length, 2, 'two push numbers');
  t.equal(r.push_numbers[0]!.number, 44, 'lower line pushes');
  near(t, r.push_numbers[0]!.net, 87, 1e-12, 'net at 44 = +87');
  t.equal(r.push_numbers[1]!.number, 47, 'upper line pushes');
  near(t, r.push_numbers[1]!.net, 95, 1e-12, 'net at 47 = +95');
  near(t, r.profit_if_hit!, 182, 1e-12, 'profit if hit 95 + 87 = 182');
  near(t, r.net_if_below, -13, 1e-12, 'below: 87 - 100 = -13');
  near(t, r.net_if_above, -5, 1e-12, 'above: 95 - 100 = -5');
  // miss = (-13 - 5)/2 = -9; h = 9/191
  near(t, r.break_even_hit_rate!, 9 / 191, 1e-14, 'break-even 9/191');
});

t.test('middles - half-point windows with no hit number', async (t) => {
  // over 44.5 vs under 45: nothing strictly inside (44.5, 45); 45 is whole: Under pushes, Over wins 91
  const a = middle(44.5, 1.91, 45, 1.91);
  if (a === null) return t.fail('middle expected');
  t.same(a.hit_numbers, [], 'no hit numbers');
  t.same(a.push_numbers.map((p) => p.number), [45], 'push at 45');
  near(t, a.push_numbers[0]!.net, 91, 1e-12, 'net at 45 = Over wins 91');
  t.same(a.window, { low: 44.5, high: 45, width: 0.5 }, 'width 0.5');
  // nothing can hit: no profit if hit, no break-even hit rate (regression: 182 and a rate were served as if it could)
  t.same([a.profit_if_hit, a.break_even_hit_rate], [null, null], 'nothing to hit: profit_if_hit and break_even_hit_rate null');
  near(t, a.net_if_below, -9, 1e-12, 'below: Under wins 91, Over loses 100');
  // over 45 vs under 45.5: 45 whole: Over pushes, Under wins 91
  const b = middle(45, 1.91, 45.5, 1.91);
  if (b === null) return t.fail('middle expected');
  t.same(b.hit_numbers, [], 'no hit numbers');
  t.same(b.push_numbers.map((p) => p.number), [45], 'push at 45');
  near(t, b.push_numbers[0]!.net, 91, 1e-12, 'net at 45 = Under wins 91');
  // spreads cross zero: over -1.5 vs under 1.5 -> hits -1, 0, 1
  t.same(middle(-1.5, 1.9, 1.5, 1.9)?.hit_numbers, [-1, 0, 1], 'negative lines');
});

t.test('middles - quarter (Asian) lines settle as two halves: half a leg won, pushed or lost', async (t) => {
  // over 220.25 and under 221.75, both 2.00 (a win of 100 each), 100 on each leg; 220.25 is 50 on 220 and 50 on 220.5,
  // 221.75 is 50 on 221.5 and 50 on 222.
  // 220: Over 220 pushes (0) and Over 220.5 loses (-50); both Unders win (+100): net +50 (regression: it was not listed)
  // 221: both Overs win (+100), both Unders win (+100): a hit, +200
  // 222: both Overs win (+100); Under 221.5 loses (-50), Under 222 pushes (0): net +50
  // below 220: Over loses 100, Under wins 100: 0; above 222: 0
  const a = middle(220.25, 2.0, 221.75, 2.0);
  if (a === null) return t.fail('middle expected');
  t.same(a.hit_numbers, [221], 'hit at 221 only');
  t.same(a.push_numbers, [{ number: 220, net: 50 }, { number: 222, net: 50 }], '220 and 222: half a leg lost or pushed, net +50 each');
  t.same([a.profit_if_hit, a.net_if_below, a.net_if_above], [200, 0, 0], 'hit +200, below and above 0');
  // over 220.75 and under 221.25 at 1.91 (a win of 91): 221 wins half of each leg and pushes the other half:
  // Over 220.5 wins 45.5, Over 221 pushes; Under 221 pushes, Under 221.5 wins 45.5: +91, and no number wins both whole
  const b = middle(220.75, 1.91, 221.25, 1.91);
  if (b === null) return t.fail('middle expected');
  t.same(b.hit_numbers, [], 'nothing wins both legs whole (regression: 221 was a hit worth 182)');
  t.equal(b.push_numbers.length, 1, 'one push number');
  t.equal(b.push_numbers[0]!.number, 221, 'at 221');
  near(t, b.push_numbers[0]!.net, 91, 1e-12, 'half of each leg won: 45.5 + 45.5');
  t.same([b.profit_if_hit, b.break_even_hit_rate], [null, null], 'nothing to hit');
  // a half line against a quarter one: over 44.5, under 46.25 at 1.91: 45 hits (182); at 46 the Over wins 91, the
  // Under 46 pushes and the Under 46.5 wins 45.5: 136.5
  const c = middle(44.5, 1.91, 46.25, 1.91);
  if (c === null) return t.fail('middle expected');
  t.same(c.hit_numbers, [45], 'hit at 45');
  t.equal(c.push_numbers.length, 1, 'one push number');
  near(t, c.push_numbers[0]!.net, 136.5, 1e-12, '46: 91 + 45.5');
});

t.test('middles - arbitrage pair breaks even at any hit rate; hi <= lo is null', async (t) => {
  // over 44.5 at 2.10 vs under 47.5 at 2.05: below 105 - 100 = 5, above 110 - 100 = 10, miss 7.5 >= 0 -> 0
  const r = middle(44.5, 2.1, 47.5, 2.05);
  if (r === null) return t.fail('middle expected');
  near(t, r.net_if_below, 5, 1e-12, 'below +5');
  near(t, r.net_if_above, 10, 1e-12, 'above +10');
  t.equal(r.break_even_hit_rate, 0, 'never loses: 0');
  t.equal(middle(47.5, 1.91, 47.5, 1.91), null, 'hi = lo');
  t.equal(middle(47.5, 1.91, 44.5, 1.91), null, 'hi < lo');
  t.equal(middle(44.5, 1, 47.5, 1.91), null, 'price 1 is not takeable');
  t.equal(middle(Number.NaN, 1.91, 47.5, 1.91), null, 'NaN line');
});

t.test('arbitrage and edge - float noise is neither (isArbitrageSum, hasEdge)', async (t) => {
  // 1/1.08 + 1/13.5 = 25/27 + 2/27 = 1: the doubles sum to 0.9999999999999999
  const S = 1 / 1.08 + 1 / 13.5;
  t.ok(S < 1, 'the doubles do sum below 1');
  t.notOk(isArbitrageSum(S), 'but a zero-margin line is no arbitrage');
  const out = new Float64Array([7, 7]);
  arbitrage([1.08, 13.5], out);
  t.same([...out], [7, 7], 'arbitrage() writes no stakes for it');
  t.ok(isArbitrageSum(1 / 1.09 + 1 / 13.5), '1.09 / 13.5: S = 0.991522 is one');
  t.ok(isArbitrageSum(1 - 2e-12), 'a profit of 2e-10 % is one');
  // 0.5000000000000001 * 2 - 1 = 2.2e-16: the odds-ratio method's fair probability of 1.91 / 1.91 against even money
  t.ok(0.5000000000000001 * 2 - 1 > 0, 'the doubles do give a positive edge');
  t.notOk(hasEdge(0.5000000000000001, 2), 'but the fair price is no edge');
  t.ok(hasEdge(0.5, 2.01), '0.5 at 2.01: 0.5 %');
  t.ok(hasEdge(0.5, 2 * (1 + 2e-12)), 'an edge of 2e-10 % is one');
  t.equal(NOISE, 1e-12, 'the noise bound: 1e-10 %');
  t.equal(kelly(0.5000000000000001, 2, 1), 0, 'Kelly stakes nothing on the fair price');
  // served values: edgePct is 0 within the noise, else 12 significant digits; profitPct likewise
  t.equal(edgePct(0.5000000000000001, 2), 0, 'edge at the fair price: 0, not 2.2e-14');
  t.equal(edgePct(0.4, 2.55), 2, '0.4 x 2.55 - 1 = 2 % (1.9999999999999796 in doubles)');
  t.equal(edgePct(0.5, 1.86), -7, 'a negative edge too: -7 %');
  t.equal(profitPct(2 / 2.2), 10, '2.2 / 2.2: 10 % (10.000000000000009 in doubles)');
  t.equal(holdPct(0.9999999999999999), 0, 'a zero-margin line holds 0 %, not -1.1e-14 %');
  t.equal(holdPct(1 / 1.91 + 1 / 1.91), 4.71204188482, '1.91 / 1.91: 4.71204188482 % (12 significant digits)');
});
