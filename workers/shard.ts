// A shard worker: owns the price store of the events hashed to it and answers every batch with its change
// records. Long-lived (not a piscina task: piscina gives no thread affinity).

import { parentPort, workerData } from 'node:worker_threads';
import { Analytics } from '../engine/analytics.js';
import { PriceStore } from '../engine/price-store.js';
import { CHG, RecordBuffer } from '../engine/records.js';
import { MSG, decode, encode, type ChangesMsg, type Encoded, type ToShard } from './protocol.js';

const port = parentPort;
if (port === null) throw new Error('workers/shard.js must run as a worker thread');

const store = new PriceStore(1 << 16);
/** `analytics: false` (benchmarks only) keeps the store alone, to measure what the analytics cost */
const analytics = (workerData as { analytics?: boolean } | null)?.analytics === false ? null : new Analytics(store);
const NONE = new Float64Array(0);
const nothing = { cons: NONE, nCons: 0, arb: NONE, nArb: 0, fair: NONE, nFair: 0, ev: NONE, nEv: 0, mid: NONE, nMid: 0 };
const out = new RecordBuffer(CHG.STRIDE, 4096);
/** the last APPLY's buffer, read to the end: the answer is written into it (workers/protocol.ts sized()) */
let spare: ArrayBuffer | null = null;
/** buffers the main thread handed back (MSG.SPARE) and chunks' buffers, for an early batch's quote records */
const spares: ArrayBuffer[] = [];
const MAX_SPARES = 4;
/** a batch sent in chunks (ApplyMsg.more): the seqs of its chunks so far, and what they applied */
const chunkSeqs: number[] = [];
let chunkApplied = 0;
let chunkStale = 0;

/** Keeps a buffer read to the end for a later message, or hands it back to the main thread (its APPLYs use them). */
function keep(buffer: ArrayBuffer): void {
  if (spares.length < MAX_SPARES) spares.push(buffer);
  else port!.postMessage(encode({ t: MSG.SPARE, buffer }), [buffer]);
}

/** Answers the batches `seqs` (none: an unsolicited batch of analytics after a tick or a restore). */
function reply(seqs: number[], applied: number, stale: number): void {
  const n = out.length;
  const a = analytics === null ? nothing : analytics.flush(false);
  if (seqs.length === 0 && n === 0 && a.nCons + a.nArb + a.nFair + a.nEv + a.nMid === 0) return;
  const msg: ChangesMsg = { t: MSG.CHANGES, seqs, n, rec: out.drain(), applied, stale, quotes: store.quoteCount, quotesFirst: false, ...a };
  const buf = encode(msg, spare);
  if (buf.buffer === spare) spare = null;
  port!.postMessage(buf, [buf.buffer as ArrayBuffer]);
}

/** An early batch's quote records, ahead of its analytics (protocol.ts ApplyMsg): a CHANGES that answers no seq. */
function quotesFirst(): void {
  const n = out.length;
  const s = spares.pop() ?? null;
  const msg: ChangesMsg = { t: MSG.CHANGES, seqs: [], n, rec: out.drain(), applied: 0, stale: 0, quotes: store.quoteCount, quotesFirst: true, ...nothing };
  const buf = encode(msg, s);
  port!.postMessage(buf, [buf.buffer as ArrayBuffer]);
}

// Each batch is answered as soon as it is applied. (Answering a busy shard's queued batches together was tried:
// it saves re-evaluating lines moved by several of them, but a client with a bounded number of batches in
// flight then waits for the whole merged answer while the main thread and the shard take turns instead of
// overlapping, and throughput fell by a third; bench/analytics.ts and bench/ingest.ts.)
port.on('message', (buf: Encoded) => {
  const msg = decode<ToShard>(buf);
  switch (msg.t) {
    case MSG.APPLY: {
      // the chunks of one batch are one batch of the analytics: their lines are evaluated once, after the last
      if (chunkSeqs.length === 0) analytics?.begin(msg.now);
      const before = store.staleIgnored;
      const applied = store.apply(msg.obs, msg.n, out);
      const stale = store.staleIgnored - before;
      if (msg.more) {
        chunkSeqs.push(msg.seq);
        chunkApplied += applied;
        chunkStale += stale;
        keep(msg.obs.buffer as ArrayBuffer);
        break;
      }
      spare = msg.obs.buffer as ArrayBuffer;
      if (msg.early && analytics !== null && out.length > 0) quotesFirst();
      if (chunkSeqs.length === 0) reply([msg.seq], applied, stale);
      else {
        chunkSeqs.push(msg.seq);
        reply(chunkSeqs.splice(0), chunkApplied + applied, chunkStale + stale);
        chunkApplied = 0;
        chunkStale = 0;
      }
      break;
    }
    case MSG.SPARE:
      keep(msg.buffer);
      break;
    case MSG.RESTORE:
      analytics?.begin(msg.now);
      store.restore(msg.rec, msg.n);
      reply([], 0, 0);
      break;
    case MSG.REMOVE:
      analytics?.begin(msg.now);
      for (const ev of msg.events) store.removeEvent(ev, out);
      reply([msg.seq], 0, 0);
      break;
    case MSG.KICKOFF:
      analytics?.begin(msg.now);
      for (let i = 0; i < msg.events.length; i++) store.dropBefore(msg.events[i], msg.at[i], out);
      reply([msg.seq], 0, 0);
      break;
    case MSG.TICK:
      analytics?.begin(msg.now);
      analytics?.tick();
      reply([], 0, 0);
      break;
  }
});

const ready = encode({ t: MSG.READY });
port.postMessage(ready, [ready.buffer as ArrayBuffer]);
