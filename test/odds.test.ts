import t from 'tap';
import { americanToDecimal, decimalToAmerican, impliedProbability, isTakeable, roundHalfAway } from '../engine/odds.js';

t.test('odds - decimal to American against hand-worked numbers', async (t) => {
  // [decimal, American, how it was worked out]
  const cases: [number, number, string][] = [
    [2.0, 100, 'even money: (2 - 1) * 100 = +100'],
    [1.5, -200, '100 / 0.5 = 200'],
    [1 + 1 / 1.1, -110, '100 / 0.90909.. = 110 (float gives 109.99999999999999)'],
    [1.9090909090909092, -110, 'the usual -110 decimal, as stored'],
    [2.5, 150, '1.5 * 100 = +150'],
    [1.4, -250, '100 / 0.4 = 250 (float gives 250.00000000000006)'],
    [3.125, 213, '2.125 * 100 = 212.5, half rounds away from zero'],
    [1.8, -125, '100 / 0.8 = 125'],
    [1.6666666666666667, -150, '100 / 0.6666.. = 150 (float gives 149.99999999999997)'],
    [2.125, 113, '1.125 * 100 = 112.5 exactly, rounds up to +113'],
    [2.625, 163, '1.625 * 100 = 162.5 exactly, rounds up to +163'],
    [11, 1000, '10 * 100 = +1000'],
    [1.01, -10000, '100 / 0.01 = 10000'],
  ];
  for (const [d, a, why] of cases) t.equal(decimalToAmerican(d), a, `${d} -> ${a > 0 ? '+' : ''}${a}: ${why}`);
});

t.test('odds - a negative American value at exactly x.5 rounds away from zero', async (t) => {
  // 100 / (d - 1) is exactly 112.5 and 137.5 in float64 for these two decimals (checked: no representation error)
  t.equal(100 / (1.8888888888888888 - 1), 112.5, 'precondition: 100 / (d - 1) is exactly 112.5');
  t.equal(decimalToAmerican(1.8888888888888888), -113, '-112.5 rounds away from zero to -113, not -112');
  t.equal(100 / (1.7272727272727273 - 1), 137.5, 'precondition: 100 / (d - 1) is exactly 137.5');
  t.equal(decimalToAmerican(1.7272727272727273), -138, '-137.5 rounds away from zero to -138');
  t.equal((3.125 - 1) * 100, 212.5, 'precondition: (d - 1) * 100 is exactly 212.5');
  t.equal(decimalToAmerican(3.125), 213, '+212.5 rounds away from zero to +213');
});

t.test('odds - roundHalfAway is symmetric', async (t) => {
  t.equal(roundHalfAway(2.5), 3, '2.5 -> 3');
  t.equal(roundHalfAway(-2.5), -3, '-2.5 -> -3 (Math.round would give -2)');
  t.equal(roundHalfAway(-2.4), -2, '-2.4 -> -2');
  t.equal(roundHalfAway(2.4999), 2, '2.4999 -> 2');
});

t.test('odds - American to decimal', async (t) => {
  t.equal(americanToDecimal(150), 2.5, '+150 -> 2.5');
  t.ok(Math.abs(americanToDecimal(-110) - 1.9090909090909092) < 1e-12, '-110 -> 1.90909..');
  t.equal(americanToDecimal(-100), 2, '-100 -> 2');
  t.equal(americanToDecimal(100), 2, '+100 -> 2');
  t.equal(americanToDecimal(-200), 1.5, '-200 -> 1.5');
  t.equal(americanToDecimal(1000), 11, '+1000 -> 11');
  t.ok(Number.isNaN(americanToDecimal(50)), '+50 is not an American price: NaN');
  t.ok(Number.isNaN(americanToDecimal(-50)), '-50 is not an American price: NaN');
  t.ok(Number.isNaN(americanToDecimal(0)), '0 is not an American price: NaN');
  t.ok(Number.isNaN(americanToDecimal(Number.NaN)), 'NaN in, NaN out');
});

t.test('odds - American round trip', async (t) => {
  for (const a of [-10000, -250, -200, -150, -125, -110, -105, 100, 105, 110, 150, 213, 1000]) {
    t.equal(decimalToAmerican(americanToDecimal(a)), a, `${a} survives decimal and back`);
  }
});

t.test('odds - implied probability', async (t) => {
  t.equal(impliedProbability(2), 0.5, '2.0 -> 50%');
  t.equal(impliedProbability(4), 0.25, '4.0 -> 25%');
  t.equal(impliedProbability(1.25), 0.8, '1.25 -> 80%');
  t.ok(Math.abs(impliedProbability(1.9090909090909092) - 0.5238095238095238) < 1e-12, '-110 -> 52.38%');
  const vig = impliedProbability(1.9090909090909092) * 2;
  t.ok(Math.abs(vig - 1.0476190476190477) < 1e-12, 'a -110/-110 market sums to 104.76%');
});

t.test('odds - takeable prices', async (t) => {
  t.equal(isTakeable(1), false, '1.0 pays nothing: not takeable');
  t.equal(isTakeable(0.5), false, '0.5 is not decimal odds');
  t.equal(isTakeable(0), false, '0 is not takeable');
  t.equal(isTakeable(-2), false, 'negative is not takeable');
  t.equal(isTakeable(Number.NaN), false, 'NaN is not takeable');
  t.equal(isTakeable(Number.POSITIVE_INFINITY), false, 'Infinity is not takeable');
  t.equal(isTakeable(Number.NEGATIVE_INFINITY), false, '-Infinity is not takeable');
  t.equal(isTakeable(1.01), true, '1.01 is takeable');
  t.equal(isTakeable(1000), true, '1000 is takeable');
});
