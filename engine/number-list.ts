// A list of numbers that keeps its storage from batch to batch. Emptying a JS array with `length = 0` releases its
// elements, so a work list refilled every batch reallocated them each time, growing from a few slots (the
// analytics' dirty-line, sharp-line and group lists: about 14 bytes of garbage per update on the simulator's
// market; bench/analytics.ts).

export class NumberList {
  data: Float64Array;
  length = 0;

  constructor(capacity = 64) {
    this.data = new Float64Array(capacity);
  }

  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }
}
