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
  // the old timer kept the start's phase, anywhere in the second; a timer set for the boundary fires just after it
  t.ok(phases.every((p) => p < 250), `each sample within 250 ms after its boundary (${phases.join(', ')} ms)`);
});
