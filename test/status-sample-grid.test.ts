// The status history's samples are taken at the boundaries of their interval's grid, where they are stamped: a sample
// taken 28 s into its slot and stamped at the slot's start showed a breach before the stall that caused it
// (regression found by the status audit: the timer ran at the process's own phase).

import t from 'tap';
import { startTestApp } from './helpers/app.js';

t.test('status history - samples are taken at the grid boundaries they are stamped with', async (t) => {
  const app = await startTestApp(t, { shards: 1, status: { sampleMs: 1000 } });
  const status = app.app.services.status!;
  const phases: number[] = [];
  const sample = status.sample.bind(status);
  status.sample = () => {
    phases.push(Date.now() % 1000);
    return sample();
  };
  while (phases.length < 3) await new Promise((r) => setTimeout(r, 100));
  // the old timer kept the start's phase, anywhere in the second; a timer set for the boundary fires at it (a
  // millisecond early at times, by Date.now())
  t.ok(phases.every((p) => Math.min(p, 1000 - p) < 250), `each sample within 250 ms of its boundary (${phases.join(', ')} ms)`);
  const seconds = await new Promise<number[]>((resolve) => {
    const at: number[] = [];
    status.sample = () => {
      at.push(Math.round(Date.now() / 1000));
      if (at.length === 3) resolve(at);
      return sample();
    };
  });
  t.equal(new Set(seconds).size, 3, `one sample a slot (${seconds.join(', ')}; regression: a timer firing a millisecond early sampled its slot twice)`);
});
