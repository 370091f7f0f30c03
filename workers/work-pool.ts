// The piscina pool for request-scoped heavy work (DESIGN.md section 1): it formats the pages of the closing-line
// exports, so a 500,000-row export does not hold the main thread (which serves every other request and the
// WebSocket streams) for the seconds its formatting takes, and runs the best-bets sweeps over a snapshot of the
// sport (workers/best-bets-task.ts). One pool, a task file per kind of work (piscina's per-run `filename`).

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { ExportFormat, ExportRow } from './export-format.js';
import type { FormatTask } from './export-task.js';
import type { BestBetsTask } from './best-bets-task.js';

const BEST_BETS = new URL('./best-bets-task.js', import.meta.url).href;

export class WorkPool {
  private readonly pool: Piscina<FormatTask | BestBetsTask, Uint8Array | string>;

  constructor(maxThreads = Math.max(1, Math.floor(availableParallelism() / 2))) {
    this.pool = new Piscina({
      filename: new URL('./export-task.js', import.meta.url).href,
      minThreads: 0,
      maxThreads,
      // a thread idle for ten minutes is let go: exports and best-bets sweeps are occasional, and a new thread's first
      // sweep took about 190 ms (start, load, compile) against 10 to 14 ms once warm (the simulator's NBA)
      idleTimeout: 600_000,
    });
  }

  /** one page formatted as a chunk of the body (UTF-8) */
  format(format: ExportFormat, rows: ExportRow[], first: boolean): Promise<Uint8Array> {
    return this.pool.run({ format, rows, first }) as Promise<Uint8Array>;
  }

  /** a best-bets body (JSON), swept over the task's snapshot; its records' buffer is moved, not copied */
  bestBets(task: BestBetsTask): Promise<string> {
    return this.pool.run(task, { filename: BEST_BETS, transferList: [task.snapshot.records.buffer as ArrayBuffer] }) as Promise<string>;
  }

  /** tasks the pool has run since it started */
  get completed(): number {
    return this.pool.completed;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
