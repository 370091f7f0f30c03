import t from 'tap';
import { alternate, describe } from '../bench/lib/alternate.js';

t.test('bench alternate - off and on run in turn, best runs and paired ratios', async (t) => {
  const calls: string[] = [];
  // rates of the runs in call order: off 100, on 60, off 80, on 70, off 50, on 45
  const rates = [100, 60, 80, 70, 50, 45];
  const a = await alternate(async (on) => {
    calls.push(on ? 'on' : 'off');
    return rates[calls.length - 1];
  }, 3);
  t.same(calls, ['off', 'on', 'off', 'on', 'off', 'on'], 'off first, then on, in turn');
  t.equal(a.off, 100, 'best off run');
  t.equal(a.on, 70, 'best on run');
  t.equal(a.ratio, 0.7, 'ratio of the best runs');
  // pairs in time: 60/100, 70/80, 45/50, sorted
  t.same(a.pairs, [0.6, 0.875, 0.9], 'each pair on / off, sorted');
  t.equal(describe(a), '70 %; pairs 88 % (60 % to 90 %)', 'best ratio, then median and range of the pairs');
});

t.test('bench alternate - an even number of pairs gives the mean of the middle two as median', async (t) => {
  const rates = [100, 60, 100, 70, 100, 80, 100, 90];
  let i = 0;
  const a = await alternate(async () => rates[i++], 4);
  t.equal(describe(a), '90 %; pairs 75 % (60 % to 90 %)', 'median of 0.6, 0.7, 0.8, 0.9 is 0.75');
});
