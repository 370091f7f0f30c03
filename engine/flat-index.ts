// An open-addressing hash index from a two-part numeric key to an int, in one Float64Array of buckets
// [k1, k2, value]. One probe is usually one cache line, where a Map of Maps costs a miss per level: on this
// 2-core machine the store's update cost fell from about 4 us to about 1 us with it (bench/ingest.ts).
//
// k1 is a non-negative int32 (an interned event id); k2 a non-negative integer below 2^53.
//
// Linear probing with backward-shift deletion: a delete moves the keys after it in its cluster back into the gap
// instead of leaving a tombstone, so a table whose keys come and go (the main thread's positive-EV quotes, about
// 0.8 inserts or deletes an update in the random worst case) never fills with tombstones and is never swept: with
// tombstones, a table of 600,000 keys was rebuilt whenever a few hundred thousand inserts had filled it with them:
// 48 MB at once, a pause of 110 to 130 ms on the thread that owned it (backward shift: none above 6 ms from the
// index, in a microbenchmark of 2 M deletes and inserts at 600,000 keys; the same time per operation on average).

const EMPTY = -1;
const STRIDE = 3;

export class FlatIndex {
  private buckets: Float64Array;
  private mask: number;
  /** live keys */
  size = 0;
  /** tables built since the first: only growth rebuilds one */
  rebuilds = 0;

  constructor(capacity = 1024) {
    let n = 16;
    while (n < capacity * 2) n *= 2;
    this.buckets = new Float64Array(n * STRIDE).fill(EMPTY);
    this.mask = n - 1;
  }

  private static hash(k1: number, k2: number): number {
    let h = Math.imul(k1, 0x9e3779b1) ^ Math.imul(k2 >>> 0, 0x85ebca77) ^ Math.imul((k2 / 4294967296) | 0, 0xc2b2ae3d);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
    return h >>> 0;
  }

  /** the value stored for the key, or -1 */
  get(k1: number, k2: number): number {
    const b = this.buckets;
    let i = FlatIndex.hash(k1, k2) & this.mask;
    for (;;) {
      const off = i * STRIDE;
      const key = b[off];
      if (key === EMPTY) return -1;
      if (key === k1 && b[off + 1] === k2) return b[off + 2];
      i = (i + 1) & this.mask;
    }
  }

  /** Where a lookup of the key starts (an offset for `touchAll`): a caller about to look up many keys computes these
   *  first, then touches them all, so that their cache misses overlap (a load per few instructions; with a hash
   *  between loads the processor keeps only one or two in flight: PriceStore.warm, ReadModel.warm,
   *  Analytics.warmMiddles). */
  startOf(k1: number, k2: number): number {
    return (FlatIndex.hash(k1, k2) & this.mask) * STRIDE;
  }

  /** Loads the buckets at starts[0..n) (startOf() offsets into the current table) in a loop that does nothing else;
   *  returns the sum of their first numbers, for the caller to keep so the loads are not dropped. */
  touchAll(starts: Int32Array, n: number): number {
    const b = this.buckets;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += b[starts[i]];
    return sum;
  }

  /** inserts or replaces */
  set(k1: number, k2: number, value: number): void {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const b = this.buckets;
    let i = FlatIndex.hash(k1, k2) & this.mask;
    for (;;) {
      const off = i * STRIDE;
      const key = b[off];
      if (key === EMPTY) {
        b[off] = k1;
        b[off + 1] = k2;
        b[off + 2] = value;
        this.size++;
        return;
      }
      if (key === k1 && b[off + 1] === k2) {
        b[off + 2] = value;
        return;
      }
      i = (i + 1) & this.mask;
    }
  }

  delete(k1: number, k2: number): boolean {
    const b = this.buckets;
    const mask = this.mask;
    let i = FlatIndex.hash(k1, k2) & mask;
    for (;;) {
      const off = i * STRIDE;
      const key = b[off];
      if (key === EMPTY) return false;
      if (key === k1 && b[off + 1] === k2) break;
      i = (i + 1) & mask;
    }
    this.size--;
    // close the gap at i: a later key of the cluster moves into it when its home bucket is not in (i, j], that is
    // when the probe from its home passes i on the way to j
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const off = j * STRIDE;
      if (b[off] === EMPTY) break;
      const home = FlatIndex.hash(b[off], b[off + 1]) & mask;
      if (((j - home) & mask) < ((j - i) & mask)) continue;
      const to = i * STRIDE;
      b[to] = b[off];
      b[to + 1] = b[off + 1];
      b[to + 2] = b[off + 2];
      i = j;
    }
    b[i * STRIDE] = EMPTY;
    return true;
  }

  /** Doubles the table when live keys would fill half of it. */
  private grow(): void {
    const old = this.buckets;
    const n = (this.mask + 1) * 2;
    this.buckets = new Float64Array(n * STRIDE).fill(EMPTY);
    this.mask = n - 1;
    this.size = 0;
    this.rebuilds++;
    for (let off = 0; off < old.length; off += STRIDE) {
      if (old[off] >= 0) this.set(old[off], old[off + 1], old[off + 2]);
    }
  }

  /** bytes held by the table */
  get bytes(): number {
    return this.buckets.byteLength;
  }
}
