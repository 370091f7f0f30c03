// Price conversions. Prices are stored as decimal odds (float64); American is a display format only and is
// never the input of further math.

/** Round half away from zero (Math.round rounds -2.5 to -2). */
export function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** Decimal to American: d >= 2 gives +round((d-1)*100), else -round(100/(d-1)); even money is +100. */
export function decimalToAmerican(d: number): number {
  if (d >= 2) return roundHalfAway((d - 1) * 100);
  return -roundHalfAway(100 / (d - 1));
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

/** A decimal price that can actually be taken: finite and above 1. */
export function isTakeable(d: number): boolean {
  return d > 1 && d < Number.POSITIVE_INFINITY;
}
