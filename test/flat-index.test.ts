import t from 'tap';
import { FlatIndex } from '../engine/flat-index.js';
import { uniform } from '../engine/prng.js';

t.test('flat index - random inserts, replacements and deletes agree with a Map, clusters and wrap-around included', async (t) => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const r = uniform(seed);
    // a small table and few distinct keys: long clusters that wrap past the end of the table, and many deletes
    // inside them, the cases where moving a key back into a gap could lose or strand one
    const index = new FlatIndex(8);
    const ref = new Map<string, number>();
    let mismatches = 0;
    for (let step = 0; step < 20_000; step++) {
      const k1 = Math.floor(r() * 7);
      const k2 = Math.floor(r() * 9) * 4294967296 + Math.floor(r() * 5);
      const key = `${k1}|${k2}`;
      const op = r();
      if (op < 0.45) {
        const v = Math.floor(r() * 1000);
        index.set(k1, k2, v);
        ref.set(key, v);
      } else if (op < 0.9) {
        if (index.delete(k1, k2) !== ref.delete(key)) mismatches++;
      } else if (index.get(k1, k2) !== (ref.get(key) ?? -1)) mismatches++;
      if (index.size !== ref.size) mismatches++;
    }
    for (let k1 = 0; k1 < 7; k1++) {
      for (let a = 0; a < 9; a++) {
        for (let b = 0; b < 5; b++) {
          const k2 = a * 4294967296 + b;
          if (index.get(k1, k2) !== (ref.get(`${k1}|${k2}`) ?? -1)) mismatches++;
        }
      }
    }
    t.equal(mismatches, 0, `seed ${seed}: every get, delete and size as the Map's, and every key findable at the end`);
  }
});

t.test('flat index - keys that come and go at a steady count never rebuild the table (no tombstones to sweep)', async (t) => {
  const index = new FlatIndex(1024);
  const r = uniform(9);
  const live: number[] = [];
  for (let i = 0; i < 600; i++) {
    index.set(i, i * 7, i);
    live.push(i);
  }
  const before = index.rebuilds;
  const bytes = index.bytes;
  let next = 600;
  for (let step = 0; step < 200_000; step++) {
    const at = Math.floor(r() * live.length);
    const k = live[at];
    index.delete(k, k * 7);
    live[at] = next;
    index.set(next, next * 7, next);
    next++;
  }
  t.equal(index.rebuilds, before, '200,000 deletes and inserts at 600 live keys rebuilt nothing');
  t.equal(index.bytes, bytes, 'and the table kept its size');
  t.equal(index.size, 600, '600 keys live');
  t.ok(live.every((k) => index.get(k, k * 7) === k), 'each of them found');
});

t.test('flat index - grows when half full and keeps every key', async (t) => {
  const index = new FlatIndex(4);
  for (let i = 0; i < 5000; i++) index.set(i % 13, i, i * 2);
  t.ok(index.rebuilds > 0, 'it grew');
  t.equal(index.size, 5000, 'every key counted');
  let missing = 0;
  for (let i = 0; i < 5000; i++) if (index.get(i % 13, i) !== i * 2) missing++;
  t.equal(missing, 0, 'every key found after the growth');
});

t.test('flat index - touchAll reads the buckets where lookups of the keys start', async (t) => {
  const index = new FlatIndex(1024);
  const starts = Int32Array.of(index.startOf(3, 77), index.startOf(4, 78));
  t.equal(index.touchAll(starts, 2), -2, 'an empty table: both buckets are empty (-1 each)');
  index.set(3, 77, 5);
  // alone in the table, the key sits in the bucket its lookup starts from
  t.equal(index.touchAll(starts, 1), 3, 'the first bucket holds the key (its first part)');
  t.equal(index.get(3, 77), 5, 'touching changes nothing');
  t.equal(index.size, 1, 'touching adds nothing');
});
