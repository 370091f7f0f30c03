// The main thread's handle on the webhook delivery worker: posts one job per attempt and resolves its result.
// A worker that dies is restarted; the attempts it held resolve as failed ("delivery worker restarted"), so the
// retry schedule takes them again and nothing waits forever.

import { Worker } from 'node:worker_threads';
import type { SendJob, SendResult, WorkerReady } from './webhook-protocol.js';

export class DeliveryWorker {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { job: SendJob; done: (r: SendResult) => void }>();
  private nextId = 1;
  private closing = false;
  private readonly url = new URL('./webhook-sender.js', import.meta.url);

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const w = new Worker(this.url);
      this.worker = w;
      w.on('message', (r: SendResult | WorkerReady) => {
        // ready, not 'online': 'online' comes before the worker's modules are loaded, and under load that took
        // seconds during which the first jobs waited unanswered
        if ('ready' in r) return resolve();
        const p = this.pending.get(r.id);
        if (p === undefined) return;
        this.pending.delete(r.id);
        p.done(r);
      });
      w.once('error', (e) => {
        if (this.worker === w) this.restart(e);
        reject(e);
      });
      w.once('exit', () => {
        if (this.worker === w && !this.closing) this.restart(new Error('exited'));
      });
      w.unref();
    });
  }

  private restart(e: Error): void {
    this.worker = null;
    const now = Date.now();
    for (const [id, p] of this.pending) p.done({ id, statusCode: null, error: `delivery worker restarted: ${e.message}`, attemptedAt: now, durationMs: 0 });
    this.pending.clear();
    if (!this.closing) void this.start().catch(() => undefined);
  }

  get inFlight(): number {
    return this.pending.size;
  }

  send(job: Omit<SendJob, 'id'>): Promise<SendResult> {
    const id = this.nextId++;
    const full: SendJob = { ...job, id };
    return new Promise((done) => {
      this.pending.set(id, { job: full, done });
      if (this.worker === null) {
        this.pending.delete(id);
        done({ id, statusCode: null, error: 'delivery worker not running', attemptedAt: Date.now(), durationMs: 0 });
        return;
      }
      this.worker.postMessage(full);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    const w = this.worker;
    this.worker = null;
    if (w !== null) await w.terminate();
  }
}
