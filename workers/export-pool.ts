// The piscina pool for request-scoped heavy work (DESIGN.md section 1): today it formats the pages of the
// closing-line exports, so a 500,000-row export does not hold the main thread (which serves every other request
// and the WebSocket streams) for the seconds its formatting takes.

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { ExportFormat, ExportRow } from './export-format.js';
import type { FormatTask } from './export-task.js';

export class ExportPool {
  private readonly pool: Piscina<FormatTask, Uint8Array>;

  constructor(maxThreads = Math.max(1, Math.floor(availableParallelism() / 2))) {
    this.pool = new Piscina<FormatTask, Uint8Array>({
      filename: new URL('./export-task.js', import.meta.url).href,
      minThreads: 0,
      maxThreads,
      // a thread idle for a minute is let go: exports are occasional
      idleTimeout: 60_000,
    });
  }

  /** one page formatted as a chunk of the body (UTF-8) */
  format(format: ExportFormat, rows: ExportRow[], first: boolean): Promise<Uint8Array> {
    return this.pool.run({ format, rows, first });
  }

  /** tasks the pool has run since it started */
  get completed(): number {
    return this.pool.completed;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
