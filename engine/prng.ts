// Seeded pseudo-random numbers for the simulator: sfc32 (Chris Doty-Humphrey's Small Fast Counting generator,
// 128-bit state, passes PractRand to 2^40+) seeded through splitmix32 so that nearby seeds give unrelated streams.
// Deterministic by construction: the same seed and the same sequence of calls give the same numbers.

const TWO_POW_32 = 4294967296;

/** splitmix32 step: returns the next state and a well-mixed 32-bit output. */
function splitmix32(state: number): [next: number, out: number] {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  z ^= z >>> 15;
  return [next, z >>> 0];
}

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  /** second Box–Muller deviate, NaN when none is pending */
  private spare: number;

  constructor(seed: number) {
    let s = (Math.trunc(seed) ^ Math.trunc(seed / TWO_POW_32)) | 0;
    let out: number;
    [s, out] = splitmix32(s);
    this.a = out;
    [s, out] = splitmix32(s);
    this.b = out;
    [s, out] = splitmix32(s);
    this.c = out;
    [, out] = splitmix32(s);
    this.d = out;
    this.spare = Number.NaN;
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** uniform integer in [0, 2^32) */
  uint32(): number {
    const a = this.a, b = this.b, c = this.c, d = this.d;
    const d1 = (d + 1) | 0;
    const t = (((a + b) | 0) + d1) | 0;
    this.d = d1;
    this.a = b ^ (b >>> 9);
    this.b = (c + (c << 3)) | 0;
    this.c = ((c << 21) | (c >>> 11)) + t | 0;
    return t >>> 0;
  }

  /** uniform in [0, 1) */
  next(): number {
    return this.uint32() / TWO_POW_32;
  }

  /** uniform integer in [0, n) */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** uniform in [lo, hi) */
  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** true with probability p */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** standard normal deviate (Box–Muller; the second deviate of each pair is kept for the next call) */
  normal(): number {
    const spare = this.spare;
    if (spare === spare) {
      this.spare = Number.NaN;
      return spare;
    }
    let u = this.next();
    while (u === 0) u = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    const theta = 2 * Math.PI * this.next();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }

  /** exponential deviate with the given mean */
  exp(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }

  /** Poisson deviate (Knuth for small means, rounded normal above 30) */
  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.normal()));
    const limit = Math.exp(-mean);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k++;
      p *= this.next();
    }
    return k;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Prng.pick: empty array');
    return items[this.int(items.length)]!;
  }

  /** 32 lowercase hex characters shaped like a v4 UUID without dashes (version nibble 4, variant 8..b) */
  hexId(): string {
    const w0 = this.uint32();
    const w1 = ((this.uint32() & 0xffff0fff) | 0x00004000) >>> 0;
    const w2 = ((this.uint32() & 0x3fffffff) | 0x80000000) >>> 0;
    const w3 = this.uint32();
    return hex8(w0) + hex8(w1) + hex8(w2) + hex8(w3);
  }
}

function hex8(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** A uniform [0, 1) generator from a seed, as a plain function (tests, benchmarks). */
export function uniform(seed: number): () => number {
  const p = new Prng(seed);
  return () => p.next();
}
