// A shard worker: owns the price store of the events hashed to it and answers every batch with its change
// records. Long-lived (not a piscina task: piscina gives no thread affinity).

import { parentPort, workerData } from 'node:worker_threads';
import { Analytics } from '../engine/analytics.js';
import { PriceStore } from '../engine/price-store.js';
import { CHG, RecordBuffer } from '../engine/records.js';
import { MSG, decode, encode, type ChangesMsg, type ToShard } from './protocol.js';

const port = parentPort;
if (port === null) throw new Error('workers/shard.js must run as a worker thread');

const store = new PriceStore(1 << 16);
/** `analytics: false` (benchmarks only) keeps the store alone, to measure what the analytics cost */
const analytics = (workerData as { analytics?: boolean } | null)?.analytics === false ? null : new Analytics(store);
const NONE = new Float64Array(0);
const nothing = { cons: NONE, nCons: 0, arb: NONE, nArb: 0, fair: NONE, nFair: 0, ev: NONE, nEv: 0, mid: NONE, nMid: 0 };
const out = new RecordBuffer(CHG.STRIDE, 4096);

/** Answers the batches `seqs` (none: an unsolicited batch of analytics after a tick or a restore). */
function reply(seqs: number[], applied: number, stale: number): void {
  const n = out.length;
  const a = analytics === null ? nothing : analytics.flush(false);
  if (seqs.length === 0 && n === 0 && a.nCons + a.nArb + a.nFair + a.nEv + a.nMid === 0) return;
  const msg: ChangesMsg = { t: MSG.CHANGES, seqs, n, rec: out.drain(), applied, stale, quotes: store.quoteCount, ...a };
  const buf = encode(msg);
  port!.postMessage(buf, [buf.buffer as ArrayBuffer]);
}

// Batches that arrive while the shard is busy are answered together: each is applied to the store at once, and
// the answer (change records of all of them, and the analytics brought up to date once) leaves when the queue
// is empty. A message event drains every queued message before setImmediate callbacks run, so an idle shard
// answers a lone batch one turn of the event loop after applying it, and a busy one merges its backlog: a line
// moved by several queued batches is re-evaluated once, and one message carries them all (up to MAX_MERGED
// observations, so the first of a long queue is not kept waiting for the rest).
let answering: number[] = [];
/** observations in the batches being answered: past this, answer at once (bounds the first batch's wait) */
const MAX_MERGED = 16_384;
let merged = 0;
let applied = 0;
let ignored = 0;
let scheduled = false;

function answer(): void {
  scheduled = false;
  if (answering.length === 0) return;
  const seqs = answering;
  answering = [];
  reply(seqs, applied, ignored);
  merged = 0;
  applied = 0;
  ignored = 0;
}

port.on('message', (buf: Uint8Array) => {
  const msg = decode<ToShard>(buf);
  if (msg.t === MSG.APPLY) {
    if (answering.length === 0) analytics?.begin(msg.now);
    else analytics?.advance(msg.now);
    const before = store.staleIgnored;
    applied += store.apply(msg.obs, msg.n, out);
    ignored += store.staleIgnored - before;
    answering.push(msg.seq);
    merged += msg.n;
    if (merged >= MAX_MERGED) answer();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(answer);
    }
    return;
  }
  answer(); // in order: what was applied before this message is answered first
  switch (msg.t) {
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
    case MSG.TICK:
      analytics?.begin(msg.now);
      analytics?.tick();
      reply([], 0, 0);
      break;
  }
});

const ready = encode({ t: MSG.READY });
port.postMessage(ready, [ready.buffer as ArrayBuffer]);
