// Owns the shard worker threads. Every batch sent stays pending until its change records come back, so a
// shard that dies loses nothing: it is restarted, rebuilt from the read model, and sent its pending batches
// again in order.

import { Worker } from 'node:worker_threads';
import { MSG, decode, encode, type ChangesMsg, type Encoded, type FromShard, type ToShard } from './protocol.js';

export interface ShardPoolOptions {
  shards: number;
  /** change records of one batch, in the order the shard answered */
  onChanges(shard: number, msg: ChangesMsg): void;
  /** full quote state of a shard's events, to rebuild a restarted shard */
  restoreFor(shard: number): { records: Float64Array; count: number };
  /** called when a shard died and was restarted */
  onRestart?(shard: number, error: Error | null): void;
  /** the wall clock the shards judge freshness against (ms) */
  now(): number;
  /** false keeps the shards' analytics off (benchmarks only) */
  analytics?: boolean;
}

/** A batch resent to this many restarted shards in a row is dropped as poison. */
const MAX_TRIES = 3;
/** recycled message buffers kept per shard (about the batches in flight) */
const MAX_SPARES = 16;

interface Pending {
  msg: ToShard;
  tries: number;
  /** `stale`: observations of the batch ignored as older than the quote they would update */
  done: (error: Error | null, stale: number) => void;
}

class Shard {
  worker: Worker | null = null;
  /** a batch is being sent in chunks (ApplyMsg.more), and whether its first found the shard with nothing in flight */
  chunking = false;
  early = false;
  readonly pending = new Map<number, Pending>();
  restarts = 0;
  quotes = 0;
  /** CHANGES buffers read to the end, for the next APPLY messages (workers/protocol.ts sized()) */
  readonly spares: ArrayBuffer[] = [];
  constructor(readonly index: number) {}
}

export class ShardPool {
  private readonly shards: Shard[] = [];
  private seq = 0;
  private closing = false;
  private readonly url = new URL('./shard.js', import.meta.url);

  constructor(private readonly opts: ShardPoolOptions) {
    for (let i = 0; i < opts.shards; i++) this.shards.push(new Shard(i));
  }

  get size(): number {
    return this.shards.length;
  }

  async start(): Promise<void> {
    await Promise.all(this.shards.map((s) => this.spawn(s)));
  }

  /** Sends a batch of observations to a shard; resolves once its change records were handed to onChanges, with the
   *  number of its observations the store ignored as older than the quote they would update. `more`: a chunk of a
   *  batch whose next chunk follows in the same synchronous pass (ApplyMsg.more); it resolves with the batch's last
   *  chunk (the chunks' ignored observations are counted once, by one of their promises). `now`: the batch's time,
   *  the analytics' clock for it (when an arbitrage opened, which quotes are fresh): a node replaying the cluster's
   *  stream applies a batch at the time it was taken, so its analytics agree with those of the node that took it. */
  apply(shard: number, obs: Float64Array, n: number, more = false, now = this.opts.now()): Promise<number> {
    const s = this.shards[shard];
    if (!s.chunking) s.early = s.pending.size === 0;
    s.chunking = more;
    return this.send(s, { t: MSG.APPLY, seq: ++this.seq, n, obs, now, early: s.early, more });
  }

  async removeEvents(shard: number, events: number[]): Promise<void> {
    await this.send(this.shards[shard], { t: MSG.REMOVE, seq: ++this.seq, events, now: this.opts.now() });
  }

  /** Tells a shard that games started (`at[i]` the start of `events[i]`): their quotes last observed before the start
   *  leave the store. Pending until answered, as a batch (a restarted shard is sent it again). */
  async kickoff(shard: number, events: number[], at: number[]): Promise<void> {
    await this.send(this.shards[shard], { t: MSG.KICKOFF, seq: ++this.seq, events, at, now: this.opts.now() });
  }

  /** Tells every shard the time: quotes that went stale leave the analytics. Nothing waits for it. */
  tick(): void {
    const now = this.opts.now();
    for (const s of this.shards) this.post(s, { t: MSG.TICK, now });
  }

  /** quotes held per shard, as last reported */
  quoteCounts(): number[] {
    return this.shards.map((s) => s.quotes);
  }

  restarts(): number[] {
    return this.shards.map((s) => s.restarts);
  }

  /** Milliseconds each shard's thread has spent busy (its event loop active: applying batches, keeping the analytics
   *  current, answering) since it last started. Its rate is the shard's load: at 1 the shard is saturated, and
   *  ingest waits on it. */
  busyMs(): number[] {
    return this.shards.map((s) => s.worker?.performance.eventLoopUtilization().active ?? 0);
  }

  /** Test and operations hook: kills a shard's thread as a crash would. */
  async kill(shard: number): Promise<void> {
    await this.shards[shard].worker?.terminate();
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.shards.map((s) => s.worker?.terminate()));
  }

  private send(shard: Shard, msg: ToShard & { seq: number }): Promise<number> {
    return new Promise((resolve, reject) => {
      shard.pending.set(msg.seq, { msg, tries: 0, done: (e, stale) => (e === null ? resolve(stale) : reject(e)) });
      this.post(shard, msg);
    });
  }

  private post(shard: Shard, msg: ToShard): void {
    if (shard.worker === null) return; // sent again after the restart
    const spare = msg.t === MSG.APPLY ? shard.spares.pop() ?? null : null;
    // a spare too small for this APPLY is dropped: kept on top of the stack, it would be tried and passed over by
    // every APPLY after it
    const buf = encode(msg, spare);
    shard.worker.postMessage(buf, [buf.buffer as ArrayBuffer]);
  }

  private spawn(shard: Shard): Promise<void> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(this.url, { workerData: { analytics: this.opts.analytics !== false } });
      let ready = false;
      worker.on('message', (buf: Encoded) => {
        const msg = decode<FromShard>(buf);
        if (msg.t === MSG.READY) {
          ready = true;
          shard.worker = worker;
          resolve();
          return;
        }
        if (msg.t === MSG.SPARE) {
          if (shard.spares.length < MAX_SPARES) shard.spares.push(msg.buffer);
          return;
        }
        const answered = [];
        for (const seq of msg.seqs) {
          const p = shard.pending.get(seq);
          if (p === undefined) continue;
          shard.pending.delete(seq);
          answered.push(p);
        }
        shard.quotes = msg.quotes;
        this.opts.onChanges(shard.index, msg);
        // onChanges and its listeners read the records synchronously and keep copies: the buffer is free again, for
        // a later APPLY, or back to the shard when there are more than those need (an early batch is answered in
        // two messages: protocol.ts ApplyMsg)
        if (buf instanceof Float64Array) {
          if (shard.spares.length < MAX_SPARES) shard.spares.push(buf.buffer as ArrayBuffer);
          else if (shard.worker === worker) this.post(shard, { t: MSG.SPARE, buffer: buf.buffer as ArrayBuffer });
        }
        // one answer covers one batch (its chunks' seqs): its ignored observations go to one of them
        for (let i = 0; i < answered.length; i++) answered[i].done(null, i === 0 ? msg.stale : 0);
      });
      let failure: Error | null = null;
      worker.on('error', (e) => {
        failure = e;
      });
      worker.on('exit', () => {
        if (shard.worker === worker) shard.worker = null;
        if (!ready) {
          reject(failure ?? new Error(`shard ${shard.index} exited before it was ready`));
          return;
        }
        if (this.closing) return;
        void this.restart(shard, failure);
      });
    });
  }

  private async restart(shard: Shard, error: Error | null): Promise<void> {
    shard.restarts++;
    await this.spawn(shard);
    const { records, count } = this.opts.restoreFor(shard.index);
    this.post(shard, { t: MSG.RESTORE, n: count, rec: records, now: this.opts.now() });
    for (const [seq, p] of [...shard.pending].sort((a, b) => a[0] - b[0])) {
      if (++p.tries >= MAX_TRIES) {
        shard.pending.delete(seq);
        p.done(new Error(`batch ${seq} dropped: shard ${shard.index} died ${MAX_TRIES} times while holding it`), 0);
        continue;
      }
      this.post(shard, p.msg);
    }
    this.opts.onRestart?.(shard.index, error);
  }
}
