// The piscina task that writes a best-bets body (engine/best-bets-body.ts) over a snapshot of a sport's events
// (ReadModel.snapshot), in the pool's thread (workers/work-pool.ts) instead of the main thread.

import { bestBetsBody, type BestBetsQuery } from '../engine/best-bets-body.js';
import { ReadModel, type ReadModelSnapshot } from '../engine/read-model.js';

export interface BestBetsTask {
  snapshot: ReadModelSnapshot;
  query: BestBetsQuery;
}

export default function bestBetsTask(task: BestBetsTask): string {
  const { rm, players } = ReadModel.fromSnapshot(task.snapshot);
  return bestBetsBody(rm, players, task.snapshot.events.map((e) => rm.event(e.idx)!), task.query);
}
