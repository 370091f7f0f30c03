import t from 'tap';
import { NumberList } from '../engine/number-list.js';

t.test('number list - keeps its storage when emptied, so a work list refilled every batch allocates nothing', async (t) => {
  const list = new NumberList(4);
  for (let i = 0; i < 10; i++) list.push(i);
  t.equal(list.length, 10, 'grew past its first capacity');
  t.same(Array.from(list.data.subarray(0, list.length)), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'growing kept every number in order');
  const storage = list.data;
  list.length = 0;
  for (let i = 0; i < 10; i++) list.push(100 + i);
  t.equal(list.data, storage, 'refilled to the same length in the same array');
  t.equal(list.data[9], 109, 'the refill overwrote the old numbers');
});
