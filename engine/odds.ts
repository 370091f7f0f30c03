// Price conversions. Prices are stored as decimal odds (float64); American is a display format only and is
// never the input of further math.

/** Round half away from zero (Math.round rounds -2.5 to -2). */
export function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** Decimal to American: d >= 2 gives +round((d-1)*100), else -round(100/(d-1)); even money is +100. A quotient
 *  near a half is tidied to 12 significant digits before it is rounded, so that a price whose exact decimal lands
 *  on a half rounds away from zero as the decimal does: 2.005 is the double 2.00499999999999989..., (d-1)*100
 *  gives 100.49999999999999 and would display +100 where 100.5 is +101 (1.32: 312.49999999999994, -313 not -312). */
export function decimalToAmerican(d: number): number {
  // a price a hair under even money by float noise (a parlay's product, 1.9999999999999998) is served as 2 (tidy):
  // its display is +100 as well, not -100
  const plus = d >= 2 || (d > 1.999999999 && tidy(d) >= 2);
  return plus ? roundHalfAway(nearHalf((d - 1) * 100)) : -roundHalfAway(nearHalf(100 / (d - 1)));
}

/** x tidied when its fraction is within 1e-6 of a half, else as it is: only there can float noise flip the rounding,
 *  and tidy() costs about 25 ns where the rest of a conversion costs 5 to 9 (measured over 10^7 conversions). */
function nearHalf(x: number): number {
  return Math.abs(x - Math.trunc(x) - 0.5) < 1e-6 ? tidy(x) : x;
}

/** American to decimal: +a gives 1 + a/100, -a gives 1 + 100/a. Returns NaN for |a| < 100. */
export function americanToDecimal(a: number): number {
  if (a >= 100) return 1 + a / 100;
  if (a <= -100) return 1 + 100 / -a;
  return Number.NaN;
}

export function impliedProbability(d: number): number {
  return 1 / d;
}

/** The highest decimal price taken anywhere (ingest, typed prices): 1 + 99,999 times the stake. */
export const MAX_PRICE = 100_000;
/** The lowest decimal price a caller may type (American -10,000,000): below it the implied probability is 1 to more
 *  than 12 digits and the American display passes 2^53. */
export const MIN_TYPED_PRICE = 1.00001;

/** A decimal price that can actually be taken: finite and above 1. */
export function isTakeable(d: number): boolean {
  return d > 1 && d < Number.POSITIVE_INFINITY;
}

/** exact powers of ten, 10^0 .. 10^22 (every one a double exactly) */
const POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
  1e18, 1e19, 1e20, 1e21, 1e22];

/** Significant digits a derived number keeps when it is served (tidy). */
export const SERVED_DIGITS = 12;

/**
 * A derived number as it is served and compared with a client's threshold: rounded to 12 significant digits, so
 * that the float noise of the arithmetic that made it goes (100 * (1.86 - 1) = 86.00000000000001 is served as 86,
 * the consensus odds of one book at 1.56, 1 / 0.641025641026 = 1.5599999999991263, as 1.56) and a value that is a
 * round number in decimal meets a threshold at that number (`minEdge=2` keeps an edge of 2). A double carries 15 to
 * 17 significant digits, the noise sits in the last two or three; prices have at most six.
 * The scaled value is rounded to an integer (half away from zero, as toPrecision), which divided by an exact power
 * of ten gives the double nearest to the decimal (so it prints as the short decimal). For the served quantities
 * only (percents, stakes, fair prices, effective prices, nets): the math runs on the exact doubles, never on tidied
 * ones.
 */
export function tidy(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const p = SERVED_DIGITS - 1 - Math.floor(Math.log10(Math.abs(x)));
  if (p >= 0 && p <= 22) return roundHalfAway(x * POW10[p]!) / POW10[p]!;
  if (p < 0 && p >= -22) return roundHalfAway(x / POW10[-p]!) * POW10[-p]!;
  return Number(x.toPrecision(SERVED_DIGITS));
}
