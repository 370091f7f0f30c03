// Fixed-stride records kept across batches in one growable Float64Array with a free list, instead of a small
// typed array per record: on this machine allocating a Float64Array of 13 to 44 numbers (`slice` included) costs
// 0.5 to 0.8 us and later GC work, more than evaluating the record (bench/analytics.ts: a middles group's
// evaluation fell from 4.5 us with a slice per changed record).

export class RecordPool {
  data: Float64Array;
  private next = 0;
  private readonly free: number[] = [];

  constructor(readonly stride: number, capacity = 256) {
    this.data = new Float64Array(stride * capacity);
  }

  /** a record index (its fields start at index * stride); the data array may be replaced by a larger one */
  alloc(): number {
    const r = this.free.pop();
    if (r !== undefined) return r;
    if ((this.next + 1) * this.stride > this.data.length) {
      const grown = new Float64Array(Math.ceil(this.data.length * 1.5) + this.stride * 16);
      grown.set(this.data);
      this.data = grown;
    }
    return this.next++;
  }

  release(r: number): void {
    this.free.push(r);
  }
}

/** Copies n numbers (a loop: `set(subarray())` would allocate a view per call). */
export function copyRecord(from: Float64Array, off: number, to: Float64Array, at: number, n: number): void {
  for (let i = 0; i < n; i++) to[at + i] = from[off + i];
}
