// The thread protocol between the main thread and the shard workers. Every message is one buffer that is
// transferred, not cloned. The two on the hot path, APPLY and CHANGES, are one Float64Array each: a header of
// numbers (APPLY_HEAD, CHANGES_HEAD) followed by the record arrays back to back, read on arrival as views
// without a copy. The others are msgpackr-encoded Uint8Arrays. (Packing the record arrays into msgpack cost
// two copies and the codec's own work per batch: about a fifth of a busy shard's time on the simulator's market,
// bench/analytics.ts and bench/ingest.ts.)

import { Packr } from 'msgpackr';
import type { AnalyticsBatch } from '../engine/analytics.js';
import { ARB, CHG, CONSO, EVQ, FAIR, MID, OBS } from '../engine/records.js';

export const MSG = {
  /** shard -> main: started and empty */
  READY: 1,
  /** main -> shard: observations laid out as OBS */
  APPLY: 2,
  /** main -> shard: full quote state laid out as RESTORE */
  RESTORE: 3,
  /** main -> shard: drop these events */
  REMOVE: 4,
  /** shard -> main: change records laid out as CHG for one APPLY or REMOVE */
  CHANGES: 5,
  /** main -> shard: the clock moved (quotes may have gone stale) */
  TICK: 6,
  /** either way: a buffer the sender has no use for, handed back for the other side's next message */
  SPARE: 7,
  /** main -> shard: these games started: their quotes last observed before the start go */
  KICKOFF: 8,
} as const;

export interface ReadyMsg { t: typeof MSG.READY }
/** `now` is the wall clock (ms) the analytics judge freshness against. `early`: the main thread has no other batch
 *  of this shard's in flight (besides this batch's own chunks), so it would wait idle for this one's answer: the
 *  shard sends the batch's quote records as soon as they are applied, in a CHANGES of their own that answers no
 *  seq, and the main thread applies them to the read model while the shard brings the analytics up to date; the
 *  CHANGES that answers the seq follows with the analytics. (With batches queued, the extra message only costs both
 *  threads: bench/analytics.ts.) */
export interface ApplyMsg {
  t: typeof MSG.APPLY; seq: number; n: number; obs: Float64Array; now: number; early: boolean;
  /** more chunks of the same batch follow (a large ingest is sent in chunks as it is parsed, so the shard applies
   *  the first while the main thread parses the next): the shard applies it and waits for the last chunk before it
   *  brings the analytics up to date and answers every chunk's seq in one CHANGES. The chunks of one batch are
   *  posted in one synchronous pass, so no other message comes between them. */
  more: boolean;
}
export interface RestoreMsg { t: typeof MSG.RESTORE; n: number; rec: Float64Array; now: number }
export interface RemoveMsg { t: typeof MSG.REMOVE; seq: number; events: number[]; now: number }
export interface TickMsg { t: typeof MSG.TICK; now: number }
/** `at[i]`: the start time of `events[i]` (ms) */
export interface KickoffMsg { t: typeof MSG.KICKOFF; seq: number; events: number[]; at: number[]; now: number }
export interface SpareMsg { t: typeof MSG.SPARE; buffer: ArrayBuffer }
export interface ChangesMsg extends AnalyticsBatch {
  t: typeof MSG.CHANGES;
  /** seq of the APPLY, REMOVE or KICKOFF this answers (none for the analytics of a tick or a restore) */
  seqs: number[];
  n: number;
  rec: Float64Array;
  /** observations that changed or verified a quote */
  applied: number;
  /** observations ignored as older than the quote */
  stale: number;
  /** quotes held by the shard after this batch */
  quotes: number;
  /** an early batch's quote records, sent ahead of its analytics: the shard's next CHANGES carries them */
  quotesFirst: boolean;
  // and the analytics records (engine/records.ts CONSO, ARB, FAIR, EVQ, MID) with their counts
}
export type ToShard = ApplyMsg | RestoreMsg | RemoveMsg | TickMsg | SpareMsg | KickoffMsg;
export type FromShard = ReadyMsg | ChangesMsg | SpareMsg;

const packr = new Packr({ useRecords: false, moreTypes: true });

/** APPLY: header, then the observations (OBS layout). */
const APPLY_HEAD = { T: 0, SEQ: 1, N: 2, NOW: 3, EARLY: 4, MORE: 5, SIZE: 6 } as const;
/** CHANGES: header, then the answered seqs, then the CHG, CONSO, ARB, FAIR, EVQ and MID records in that order. */
const CHANGES_HEAD = {
  T: 0, SEQS: 1, N: 2, APPLIED: 3, STALE: 4, QUOTES: 5, CONS: 6, ARB: 7, FAIR: 8, EV: 9, MID: 10, QFIRST: 11, SIZE: 12,
} as const;

/** A message in its own buffer, ready to transfer. */
export type Encoded = Uint8Array | Float64Array;

/** A Float64Array of `size` numbers in `spare` when it is large enough, else in a new buffer with a quarter more
 *  room (so the next, slightly larger message still fits when this buffer comes back). The hot messages travel
 *  in recycled buffers: APPLY's buffer carries the shard's CHANGES answer back, and the main thread writes a
 *  later APPLY into it (allocating and zeroing a few hundred kilobytes per batch, and the garbage collection the
 *  transferred buffers caused, cost both threads about a tenth of their time: bench/analytics.ts). */
function sized(size: number, spare: ArrayBuffer | null): Float64Array {
  if (spare !== null && spare.byteLength >= size * 8) return new Float64Array(spare, 0, size);
  return new Float64Array(new ArrayBuffer(Math.ceil(size * 1.25) * 8), 0, size);
}

/** Encodes a message into its own buffer; APPLY and CHANGES use `spare` (which is then the message's) when it is
 *  large enough. */
export function encode(msg: ToShard | FromShard, spare: ArrayBuffer | null = null): Encoded {
  if (msg.t === MSG.APPLY) {
    const buf = sized(APPLY_HEAD.SIZE + msg.n * OBS.STRIDE, spare);
    buf[APPLY_HEAD.T] = MSG.APPLY;
    buf[APPLY_HEAD.SEQ] = msg.seq;
    buf[APPLY_HEAD.N] = msg.n;
    buf[APPLY_HEAD.NOW] = msg.now;
    buf[APPLY_HEAD.EARLY] = msg.early ? 1 : 0;
    buf[APPLY_HEAD.MORE] = msg.more ? 1 : 0;
    buf.set(msg.obs.subarray(0, msg.n * OBS.STRIDE), APPLY_HEAD.SIZE);
    return buf;
  }
  if (msg.t === MSG.CHANGES) return encodeChanges(msg, spare);
  if (msg.t === MSG.SPARE) {
    const buf = new Float64Array(msg.buffer, 0, 1);
    buf[0] = MSG.SPARE;
    return buf;
  }
  // msgpackr reuses its output buffer between calls: copy out into an exact-size buffer of our own before
  // transferring it (Buffer#slice would be a view of msgpackr's buffer, and transferring that detaches it).
  return new Uint8Array(packr.pack(msg));
}

function encodeChanges(msg: ChangesMsg, spare: ArrayBuffer | null): Float64Array {
  const parts = [
    msg.rec.subarray(0, msg.n * CHG.STRIDE), msg.cons.subarray(0, msg.nCons * CONSO.STRIDE),
    msg.arb.subarray(0, msg.nArb * ARB.STRIDE), msg.fair.subarray(0, msg.nFair * FAIR.STRIDE),
    msg.ev.subarray(0, msg.nEv * EVQ.STRIDE), msg.mid.subarray(0, msg.nMid * MID.STRIDE),
  ];
  let size = CHANGES_HEAD.SIZE + msg.seqs.length;
  for (const p of parts) size += p.length;
  const buf = sized(size, spare);
  const h = CHANGES_HEAD;
  buf[h.T] = MSG.CHANGES;
  buf[h.SEQS] = msg.seqs.length;
  buf[h.N] = msg.n;
  buf[h.APPLIED] = msg.applied;
  buf[h.STALE] = msg.stale;
  buf[h.QUOTES] = msg.quotes;
  buf[h.CONS] = msg.nCons;
  buf[h.ARB] = msg.nArb;
  buf[h.FAIR] = msg.nFair;
  buf[h.EV] = msg.nEv;
  buf[h.MID] = msg.nMid;
  buf[h.QFIRST] = msg.quotesFirst ? 1 : 0;
  let at = h.SIZE;
  for (const seq of msg.seqs) buf[at++] = seq;
  for (const p of parts) {
    buf.set(p, at);
    at += p.length;
  }
  return buf;
}

export function decode<T extends ToShard | FromShard>(buf: Encoded): T {
  if (!(buf instanceof Float64Array)) return packr.unpack(buf) as T;
  if (buf[0] === MSG.APPLY) {
    const n = buf[APPLY_HEAD.N];
    const msg: ApplyMsg = {
      t: MSG.APPLY, seq: buf[APPLY_HEAD.SEQ], n, now: buf[APPLY_HEAD.NOW],
      early: buf[APPLY_HEAD.EARLY] === 1, more: buf[APPLY_HEAD.MORE] === 1,
      obs: buf.subarray(APPLY_HEAD.SIZE, APPLY_HEAD.SIZE + n * OBS.STRIDE),
    };
    return msg as T;
  }
  if (buf[0] === MSG.SPARE) return { t: MSG.SPARE, buffer: buf.buffer as ArrayBuffer } as T;
  const h = CHANGES_HEAD;
  const seqs: number[] = [];
  let at = h.SIZE;
  for (let i = 0; i < buf[h.SEQS]; i++) seqs.push(buf[at++]);
  const take = (records: number, stride: number): Float64Array => {
    const view = buf.subarray(at, at + records * stride);
    at += records * stride;
    return view;
  };
  const n = buf[h.N];
  const nCons = buf[h.CONS];
  const nArb = buf[h.ARB];
  const nFair = buf[h.FAIR];
  const nEv = buf[h.EV];
  const nMid = buf[h.MID];
  const msg: ChangesMsg = {
    t: MSG.CHANGES, seqs, n, applied: buf[h.APPLIED], stale: buf[h.STALE], quotes: buf[h.QUOTES], quotesFirst: buf[h.QFIRST] === 1,
    rec: take(n, CHG.STRIDE), cons: take(nCons, CONSO.STRIDE), nCons, arb: take(nArb, ARB.STRIDE), nArb,
    fair: take(nFair, FAIR.STRIDE), nFair, ev: take(nEv, EVQ.STRIDE), nEv, mid: take(nMid, MID.STRIDE), nMid,
  };
  return msg as T;
}
