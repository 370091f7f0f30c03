// An open-addressing hash index from a two-part numeric key to an int, in one Float64Array of buckets
// [k1, k2, value]. One probe is usually one cache line, where a Map of Maps costs a miss per level: on this
// 2-core machine the store's update cost fell from about 4 us to about 1 us with it (bench/ingest.ts).
//
// k1 is a non-negative int32 (an interned event id); k2 a non-negative integer below 2^53.

const EMPTY = -1;
const TOMBSTONE = -2;
const STRIDE = 3;

export class FlatIndex {
  private buckets: Float64Array;
  private mask: number;
  /** live keys */
  size = 0;
  /** live keys plus tombstones */
  private used = 0;

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

  /** inserts or replaces */
  set(k1: number, k2: number, value: number): void {
    if ((this.used + 1) * 2 > this.mask + 1) this.rehash();
    const b = this.buckets;
    let i = FlatIndex.hash(k1, k2) & this.mask;
    let free = -1;
    for (;;) {
      const off = i * STRIDE;
      const key = b[off];
      if (key === EMPTY) {
        const at = free >= 0 ? free : off;
        if (free < 0) this.used++;
        b[at] = k1;
        b[at + 1] = k2;
        b[at + 2] = value;
        this.size++;
        return;
      }
      if (key === TOMBSTONE) {
        if (free < 0) free = off;
      } else if (key === k1 && b[off + 1] === k2) {
        b[off + 2] = value;
        return;
      }
      i = (i + 1) & this.mask;
    }
  }

  delete(k1: number, k2: number): boolean {
    const b = this.buckets;
    let i = FlatIndex.hash(k1, k2) & this.mask;
    for (;;) {
      const off = i * STRIDE;
      const key = b[off];
      if (key === EMPTY) return false;
      if (key === k1 && b[off + 1] === k2) {
        b[off] = TOMBSTONE;
        this.size--;
        return true;
      }
      i = (i + 1) & this.mask;
    }
  }

  /** Called when live keys plus tombstones reach half the table: doubles it when live keys alone fill more than
   *  3/8 of it (so a grown table is 3/16 to 1/2 full), else only sweeps the tombstones out. */
  private rehash(): void {
    const old = this.buckets;
    const n = this.size * 8 > (this.mask + 1) * 3 ? (this.mask + 1) * 2 : this.mask + 1;
    this.buckets = new Float64Array(n * STRIDE).fill(EMPTY);
    this.mask = n - 1;
    this.size = 0;
    this.used = 0;
    for (let off = 0; off < old.length; off += STRIDE) {
      if (old[off] >= 0) this.set(old[off], old[off + 1], old[off + 2]);
    }
  }

  /** bytes held by the table */
  get bytes(): number {
    return this.buckets.byteLength;
  }
}
