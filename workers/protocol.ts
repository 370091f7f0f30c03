// The thread protocol between the main thread and the shard workers. Every message is one msgpackr-encoded
// buffer (typed arrays included, via msgpackr's `moreTypes`) that is transferred, not cloned.

import { Packr } from 'msgpackr';
import type { AnalyticsBatch } from '../engine/analytics.js';

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
} as const;

export interface ReadyMsg { t: typeof MSG.READY }
/** `now` is the wall clock (ms) the analytics judge freshness against */
export interface ApplyMsg { t: typeof MSG.APPLY; seq: number; n: number; obs: Float64Array; now: number }
export interface RestoreMsg { t: typeof MSG.RESTORE; n: number; rec: Float64Array; now: number }
export interface RemoveMsg { t: typeof MSG.REMOVE; seq: number; events: number[]; now: number }
export interface TickMsg { t: typeof MSG.TICK; now: number }
export interface ChangesMsg extends AnalyticsBatch {
  t: typeof MSG.CHANGES;
  /** seq of the APPLY or REMOVE this answers (none for the analytics of a tick or a restore) */
  seqs: number[];
  n: number;
  rec: Float64Array;
  /** observations that changed or verified a quote */
  applied: number;
  /** observations ignored as older than the quote */
  stale: number;
  /** quotes held by the shard after this batch */
  quotes: number;
  // and the analytics records (engine/records.ts CONS, ARB, FAIR, EVQ, MID) with their counts
}
export type ToShard = ApplyMsg | RestoreMsg | RemoveMsg | TickMsg;
export type FromShard = ReadyMsg | ChangesMsg;

const packr = new Packr({ useRecords: false, moreTypes: true });

/** Encodes a message into its own ArrayBuffer, ready to transfer. */
export function encode(msg: ToShard | FromShard): Uint8Array {
  // msgpackr reuses its output buffer between calls: copy out into an exact-size buffer of our own before
  // transferring it (Buffer#slice would be a view of msgpackr's buffer, and transferring that detaches it).
  return new Uint8Array(packr.pack(msg));
}

export function decode<T extends ToShard | FromShard>(buf: Uint8Array): T {
  return packr.unpack(buf) as T;
}
