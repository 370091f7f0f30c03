import t from 'tap';
import { americanToDecimal, decimalToAmerican, impliedProbability, isTakeable, roundHalfAway, tidy } from '../engine/odds.js';

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

t.test('odds - a price whose decimal lands on a half rounds as the decimal, not as its double', async (t) => {
  // 2.005 and 1.32 have no exact double: the quotients come out a hair below the half the decimals give
  t.equal((2.005 - 1) * 100, 100.49999999999999, 'precondition: (2.005 - 1) * 100 is 100.49999999999999');
  t.equal(decimalToAmerican(2.005), 101, '2.005: (1.005) * 100 = 100.5 -> +101, not +100');
  t.equal(100 / (1.32 - 1), 312.49999999999994, 'precondition: 100 / (1.32 - 1) is 312.49999999999994');
  t.equal(decimalToAmerican(1.32), -313, '1.32: 100 / 0.32 = 312.5 -> -313, not -312');
  // a price just below the half stays below it
  t.equal(decimalToAmerican(2.00499), 100, '2.00499: 100.499 -> +100');
  t.equal(decimalToAmerican(1.3200001), -312, '1.3200001: 312.4999... -> -312');
});

t.test('odds - a price a hair under even money by float noise displays +100, as its served decimal 2 does', async (t) => {
  // a parlay of -150 and -500: (1 + 100/150) * (1 + 100/500) is 1.9999999999999998 in doubles, served as 2 (tidy)
  const d = (1 + 100 / 150) * (1 + 100 / 500);
  t.equal(d, 1.9999999999999998, 'precondition: the product is a hair under 2');
  t.equal(decimalToAmerican(d), 100, '+100 (regression: -100 beside a served price of 2)');
  t.equal(decimalToAmerican(1.9999), -100, '1.9999 is a real price under even money: -100 (100 / 0.9999 = 100.01)');
  t.equal(decimalToAmerican(1.99), -101, '1.99: 100 / 0.99 = 101.01 -> -101');
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

t.test('odds - tidy serves a derived number without the float noise of its arithmetic', async (t) => {
  // [computed, served, where the noise comes from]
  const cases: [number, number, string][] = [
    [100 * (1.86 - 1), 86, 'a middle leg won at 1.86 per 100: 86.00000000000001'],
    [100 * (1.954 - 1) - 100, -4.6, 'net if below at 1.954: -4.6000000000000085'],
    [1 / 0.641025641026, 1.56, "one book's consensus at 1.56 from its fixed-point implied probability: 1.5599999999991263"],
    [1 + 16.101 * (1 - 0.02), 16.77898, 'matchbook 17.101 after 2 % commission: 16.778979999999997'],
    [(1 / (2 / 2.05) - 1) * 100, 2.5, 'an arbitrage at 2.05 / 2.05: 2.499999999999991'],
    [0.1 + 0.2, 0.3, '0.30000000000000004'],
    [185.49009009009006, 185.49009009, 'a real middle profit keeps 12 significant digits: 185.490090090'],
    [0.0016673175461599512, 0.00166731754616, 'a small kelly fraction keeps 12 significant digits, not 12 decimals'],
    [-0.00012345678901234, -0.000123456789012, 'negative and small'],
    [123456789012345.6, 123456789012000, 'large: rounded at the 12th significant digit'],
    [1e-30 * 3.0000000000000004, 3e-30, 'below the table of powers of ten: toPrecision'],
  ];
  for (const [x, want, why] of cases) t.equal(tidy(x), want, `${why}: ${x} -> ${want}`);
  for (const x of [0, -0, Number.NaN, Infinity, -Infinity]) t.ok(Object.is(tidy(x), x), `${x} is served as it is`);
  t.equal(String(tidy(2 / 3)), '0.666666666667', 'prints as the short decimal');
  // against toPrecision(12) over many values: the same number, but where the scaling by a power of ten lands exactly
  // on a tie in the 13th digit that the exact double falls just short of (-4.088134765625e-6 here): one unit apart
  let s = 7;
  let differ = 0;
  let far = 0;
  for (let i = 0; i < 20_000; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const x = (s / 2147483648 - 0.5) * 10 ** ((i % 25) - 12);
    const want = Number(x.toPrecision(12));
    if (tidy(x) === want) continue;
    differ++;
    if (Math.abs(tidy(x) - want) > 1.5 * 10 ** (Math.floor(Math.log10(Math.abs(x))) - 11)) far++;
  }
  t.equal(far, 0, 'within one unit of the 12th significant digit of Number(x.toPrecision(12)), 20,000 values from 1e-13 to 1e12');
  t.ok(differ <= 2, `equal to it but at ties of the 13th digit (${differ} of 20,000)`);
});
