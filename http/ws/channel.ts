// A stream channel (issue 4): one kind of stream for one sport key and one coalescing window. It numbers its
// deltas (seq), keeps a ring of recent ones for resume and catch-up, and sends to each socket under that
// socket's own backpressure: a socket above the low watermark is marked dirty and skipped, and once drained it
// receives one merged delta (`con: true`) that brings it exactly to the current state, or a snapshot.

import type { WebSocket } from 'uWebSockets.js';
import type { KeyState } from '../accounts.js';
import { encode, itemKey, priced, type DeltaItem, type WireFormat } from './frames.js';

export interface StreamLimits {
  /** below this many buffered bytes a socket gets every delta as it comes */
  lowWatermark: number;
  /** above this many buffered bytes for longer than hardMs a socket is closed with 4008 */
  hardBytes: number;
  hardMs: number;
  /** uWebSockets.js's own bound (maxBackpressure, with closeOnBackpressureLimit): a send that finds more than this
   *  buffered is dropped and the socket closed, a close and not a silent loss. The server sends a socket data only
   *  below lowWatermark, so only one burst (a snapshot: about 1.2 MB at the simulator's NBA) goes past that; this is
   *  the bound for anything else, such as the PONGs uWebSockets.js answers a client's PING frames with */
  maxBytes: number;
  /** resume ring bounds */
  ringBytes: number;
  ringMs: number;
  /** snapshots above this are split into segments */
  segmentBytes: number;
  /** a client silent this long (no frame, no pong) is pinged at half of it and closed (4002) at all of it */
  idleSeconds: number;
  /** streams one account may hold open on this node, for every tier alike (WS_MAX_STREAMS: benchmarks that open a
   *  thousand with one key); 0: its tier's (engine/tiers.ts wsStreams, as GET /v1/pricing shows) */
  maxStreams: number;
}

export const DEFAULT_LIMITS: StreamLimits = {
  lowWatermark: 256 * 1024,
  hardBytes: 8 * 1024 * 1024,
  hardMs: 10_000,
  maxBytes: 32 * 1024 * 1024,
  ringBytes: 16 * 1024 * 1024,
  ringMs: 300_000,
  segmentBytes: 256 * 1024,
  idleSeconds: 60,
  maxStreams: 0,
};

export interface Filters {
  markets: Set<string> | null;
  bookmakers: Set<string> | null;
  eventIds: Set<string> | null;
}

export interface SocketState {
  channel: Channel | null;
  filters: Filters;
  format: WireFormat;
  american: boolean;
  /** last seq this socket holds */
  lastSeq: number;
  dirty: boolean;
  dirtySince: number;
  /** set when the upgrade was refused: close with this after open */
  refuse: { code: number; reason: string } | null;
  key: string;
  /** the key's state: a socket whose key is revoked is closed (4001) within a second */
  keyState: KeyState | null;
  tier: string;
  kind: string;
  sport: string;
  resume: string | null;
  closed: boolean;
  /** waiting for its first snapshot (Streams' queue): not in its channel's sockets yet; the snapshot's reason */
  queued: boolean;
  queuedReason: string | null;
  /** a snapshot asked for (a subscribe) while the socket was above the low watermark: sent, with this reason,
   *  instead of the catch-up once it drains; later subscribes until then only change the filters */
  wantsSnapshot: string | null;
  /** wall-clock ms of the last frame or pong from the client, and of our last ping */
  lastInbound: number;
  lastPing: number;
  /** bytes of PONG frames uWebSockets.js queued for the client's PINGs since the socket was last seen below the low
   *  watermark (Streams.pinged) */
  pongBytes: number;
  /** counted among its account's open streams (Streams.perAccount) */
  counted: boolean;
  /** its subscribes' budget (Streams.message, a GCRA): when its next subscribe that needs a snapshot is due (service
   *  clock, ms), which one may run ahead of by the burst */
  subscribeTat: number;
  /** while a subscribe waits its turn (Streams.hold): when it is answered */
  heldUntil: number;
  /** the buffered amount at Channel.enforce's last look: a socket past the hard bound whose amount went down since
   *  is still reading */
  lastBuffered: number;
}

/** A snapshot's frames, encoded, and the seq of the state they hold (the channel may have moved on since: the socket
 *  then catches up from it like a socket that lagged) */
export interface Snapshot {
  seq: number;
  frames: (string | Uint8Array)[];
}

export interface RingEntry {
  seq: number;
  pt: number;
  items: DeltaItem[];
  /** the heads of the events the delta announced (new to the channel, or changed since announced) */
  heads: EventHead[];
  bytes: number;
}

/** What a client needs to know of an event beside its quotes: the odds shape without `bookmakers`. */
export interface EventHead {
  id: string;
  sport_key: string;
  sport_title: string;
  commence_time: string;
  home_team: string;
  away_team: string;
}

export function unfiltered(f: Filters): boolean {
  return f.markets === null && f.bookmakers === null && f.eventIds === null;
}

export function passes(f: Filters, i: DeltaItem): boolean {
  return (f.markets === null || f.markets.has(i.market)) && (f.bookmakers === null || f.bookmakers.has(i.book))
    && (f.eventIds === null || f.eventIds.has(i.event_id));
}

export class Channel {
  seq = 0;
  /** the last tick it had a socket (or when it opened): a channel without sockets past its resume window is dropped */
  idleSince = 0;
  /** when the last delta was published, or the channel opened (ms) */
  lastDeltaAt = 0;
  readonly sockets = new Set<WebSocket<SocketState>>();
  private readonly ring: RingEntry[] = [];
  private ringBytes = 0;
  /** coalescing: changes waiting for the next window, last writer wins per quote */
  private readonly pending = new Map<string, DeltaItem>();
  /** the events a delta has announced, by id, with their head as announced (JSON): a delta carries the head of an
   *  event new to the channel, or whose start or teams changed, so a client never holds quotes of an event it
   *  does not know (a snapshot carries every event whole) */
  private readonly announced = new Map<string, string>();
  /** catch-up deltas of unfiltered sockets by (their seq, formats), valid while the channel is at catchUpsAt and no
   *  change waits in its window (offer clears them: the CRCs leave out events with changes waiting) */
  private readonly catchUps = new Map<string, string | Uint8Array>();
  private catchUpsAt = -1;

  constructor(
    readonly name: string,
    readonly kind: 'odds' | 'live' | 'odds-fast',
    readonly sports: readonly string[],
    readonly windowMs: number,
    readonly epoch: string,
    /** the CRC of one event's current quote set (frames.ts crcOf) */
    readonly eventCrc: (eventId: string) => number,
    /** an event's head, null when the event is gone */
    readonly eventHead: (eventId: string) => EventHead | null,
    readonly buildSnapshot: (ws: WebSocket<SocketState>, reason: string | null) => Snapshot,
    readonly sendSnapshot: (ws: WebSocket<SocketState>, snap: Snapshot) => void,
    readonly limits: StreamLimits,
  ) {}

  /** Adds changes: pushed at once without a window, else held until flush(). */
  offer(items: DeltaItem[], now: number): void {
    if (items.length === 0) return;
    if (this.windowMs === 0) {
      this.publish(items, now);
      return;
    }
    for (const i of items) this.pending.set(itemKey(i), i);
    this.catchUps.clear();
  }

  /** Publishes what the window collected. */
  flush(now: number): void {
    if (this.pending.size === 0) return;
    const items = [...this.pending.values()];
    this.pending.clear();
    this.publish(items, now);
  }

  /** Forgets that an event was announced (it left a live channel): a delta that brings it back announces it again. */
  forget(eventId: string): void {
    this.announced.delete(eventId);
  }

  /** The heads of the events of `items`, each once, as they are now: with `announce`, only those the channel has not
   *  announced so (which it then marks announced); without, all of them (a catch-up merges deltas whose own heads
   *  it does not send). */
  private headsFor(items: readonly DeltaItem[], announce: boolean): EventHead[] {
    const heads: EventHead[] = [];
    const seen = new Set<string>();
    for (const i of items) {
      if (seen.has(i.event_id)) continue;
      seen.add(i.event_id);
      const head = this.eventHead(i.event_id);
      if (head === null) {
        if (announce) this.announced.delete(i.event_id);
        continue;
      }
      if (announce) {
        const sig = JSON.stringify(head);
        if (this.announced.get(i.event_id) === sig) continue;
        this.announced.set(i.event_id, sig);
      }
      heads.push(head);
    }
    return heads;
  }

  private publish(items: DeltaItem[], now: number): void {
    const prev = this.seq;
    const seq = ++this.seq;
    this.lastDeltaAt = now;
    const heads = this.headsFor(items, true);
    const bytes = 64 + items.length * 120 + heads.length * 200;
    this.ring.push({ seq, pt: now, items, heads, bytes });
    this.ringBytes += bytes;
    while (this.ring.length > 1 && (this.ringBytes > this.limits.ringBytes || now - this.ring[0].pt > this.limits.ringMs)) {
      this.ringBytes -= this.ring.shift()!.bytes;
    }
    if (this.sockets.size === 0) return;
    // the same bytes for every socket without filters, per wire and odds format; CRCs only there, since a
    // filtered socket's book is a subset
    const shared = new Map<string, string | Uint8Array>();
    let crc: Record<string, number> | null = null;
    for (const ws of this.sockets) {
      const s = ws.getUserData();
      if (s.closed) continue;
      if (s.dirty || !this.room(ws, now)) continue;
      if (s.lastSeq !== prev) {
        this.catchUp(ws, now);
        continue;
      }
      if (unfiltered(s.filters)) {
        const k = `${s.format}:${s.american}`;
        let bytes = shared.get(k);
        if (bytes === undefined) {
          crc ??= this.crcs(items);
          bytes = encode(this.delta(items, heads, seq, prev, now, s.american, crc, false), s.format);
          shared.set(k, bytes);
        }
        ws.send(bytes, s.format === 'msgpack');
      } else {
        const mine = items.filter((i) => passes(s.filters, i));
        ws.send(encode(this.delta(mine, headsFor(s.filters, heads), seq, prev, now, s.american, null, false), s.format), s.format === 'msgpack');
      }
      s.lastSeq = seq;
    }
  }

  /** The CRC of each event's current quote set, for the events of `items`, as the state after the deltas published so
   *  far: an event with changes waiting in the window has moved on from that state, so it gets none (the delta
   *  that publishes its changes carries it). */
  crcs(items: readonly DeltaItem[]): Record<string, number> {
    const out: Record<string, number> = {};
    let waiting: Set<string> | null = null;
    if (this.pending.size > 0) {
      waiting = new Set();
      for (const i of this.pending.values()) waiting.add(i.event_id);
    }
    for (const i of items) {
      if (i.event_id in out || (waiting !== null && waiting.has(i.event_id))) continue;
      out[i.event_id] = this.eventCrc(i.event_id);
    }
    return out;
  }

  delta(items: DeltaItem[], heads: readonly EventHead[], seq: number, prev: number, now: number, american: boolean,
    crc: Record<string, number> | null, con: boolean): object {
    const f: Record<string, unknown> = { type: 'delta', channel: this.name, epoch: this.epoch, seq, prev_seq: prev, pt: now };
    if (heads.length > 0) f.events = heads;
    f.changes = priced(items, american);
    if (crc !== null) f.crc = crc;
    if (con) f.con = true;
    return f;
  }

  /** false (and the socket marked dirty, from now unless it was already) when it is above the low watermark; asked
   *  before any frame goes: a delta, a replayed one, a reply (Streams.message) */
  room(ws: WebSocket<SocketState>, now: number): boolean {
    if (ws.getBufferedAmount() <= this.limits.lowWatermark) return true;
    const s = ws.getUserData();
    if (!s.dirty) {
      s.dirty = true;
      s.dirtySince = now;
    }
    return false;
  }

  /** A drained (or lagging) socket: one merged delta from its last seq to now, or a snapshot when the ring no
   *  longer reaches back that far or the merge would be larger. */
  catchUp(ws: WebSocket<SocketState>, now: number): void {
    const s = ws.getUserData();
    if (ws.getBufferedAmount() > this.limits.lowWatermark) return;
    s.dirty = false;
    if (s.wantsSnapshot !== null) {
      const reason = s.wantsSnapshot;
      s.wantsSnapshot = null;
      this.sendSnapshot(ws, this.buildSnapshot(ws, reason));
      return;
    }
    if (s.lastSeq === this.seq) return;
    const merged = this.since(s.lastSeq);
    if (merged === null) {
      this.sendSnapshot(ws, this.buildSnapshot(ws, 'resume_window_exceeded'));
      return;
    }
    const delta = this.mergedDelta(s, merged, now);
    // a merge of many deltas can outgrow the state itself: then the snapshot is the cheaper way to catch up
    if (delta.length > this.limits.segmentBytes) {
      const snap = this.buildSnapshot(ws, 'caught_up');
      if (snap.frames.reduce((n, f) => n + f.length, 0) < delta.length) {
        this.sendSnapshot(ws, snap);
        return;
      }
    }
    ws.send(delta, s.format === 'msgpack');
    s.lastSeq = this.seq;
  }

  /** whether a socket at `seq` can be brought to now from the ring */
  reaches(seq: number): boolean {
    return seq === this.seq || (seq < this.seq && this.ring.length > 0 && this.ring[0].seq <= seq + 1);
  }

  /** The catch-up delta of a socket from its seq to now. Unfiltered sockets at the same seq and formats get the same
   *  bytes, encoded once until the channel moves (a thousand sockets sent one snapshot catch up together). */
  private mergedDelta(s: SocketState, merged: DeltaItem[], now: number): string | Uint8Array {
    const shared = unfiltered(s.filters);
    const key = `${s.lastSeq}|${s.format}|${s.american ? 'a' : 'd'}`;
    if (shared) {
      if (this.catchUpsAt !== this.seq) {
        this.catchUps.clear();
        this.catchUpsAt = this.seq;
      }
      const hit = this.catchUps.get(key);
      if (hit !== undefined) return hit;
    }
    const mine = shared ? merged : merged.filter((i) => passes(s.filters, i));
    // it brings the socket to the current state, so the CRCs of now are the ones after it
    const crc = shared ? this.crcs(mine) : null;
    // a filtered socket holds every event of its snapshot, as an unfiltered one does: the heads of every event the
    // merged deltas touched (an event announced meanwhile with none of its quotes passing the filter included)
    const touched = shared || s.filters.eventIds === null ? merged : merged.filter((i) => s.filters.eventIds!.has(i.event_id));
    const delta = encode(this.delta(mine, this.headsFor(touched, false), this.seq, s.lastSeq, now, s.american, crc, true), s.format);
    if (shared) this.catchUps.set(key, delta);
    return delta;
  }

  /** every change after `seq` merged (last writer wins), or null when the ring does not hold them all */
  since(seq: number): DeltaItem[] | null {
    if (seq > this.seq) return null;
    if (seq === this.seq) return [];
    const first = this.ring.findIndex((e) => e.seq === seq + 1);
    if (first < 0) return null;
    const merged = new Map<string, DeltaItem>();
    for (let k = first; k < this.ring.length; k++) for (const i of this.ring[k].items) merged.set(itemKey(i), i);
    return [...merged.values()];
  }

  /** the ring's deltas after `seq`, one by one, or null when they are not all held */
  replay(seq: number): RingEntry[] | null {
    if (seq > this.seq) return null;
    if (seq === this.seq) return [];
    const first = this.ring.findIndex((e) => e.seq === seq + 1);
    return first < 0 ? null : this.ring.slice(first);
  }

  /** Sends a resuming socket at `seq` the ring's deltas after it (`entries`, from replay()), one by one as they went
   *  out, under its backpressure like any delta: past the low watermark it stops, marked dirty, and the rest comes
   *  as one merged delta once it drains (the WebSocket audit: ten resumes that never read held 17 MB each). The
   *  state after the last delta is the current one: that delta carries the CRC of every event the replay touched
   *  (an unfiltered socket's), the earlier ones none, since their states are gone. */
  replayTo(ws: WebSocket<SocketState>, seq: number, entries: readonly RingEntry[], now: number): void {
    const s = ws.getUserData();
    const all = unfiltered(s.filters);
    const touched: DeltaItem[] = [];
    let prev = seq;
    for (let k = 0; k < entries.length; k++) {
      if (!this.room(ws, now)) break;
      const e = entries[k];
      const mine = all ? e.items : e.items.filter((i) => passes(s.filters, i));
      if (all) touched.push(...e.items);
      const crc = all && k === entries.length - 1 ? this.crcs(touched) : null;
      ws.send(encode(this.delta(mine, headsFor(s.filters, e.heads), e.seq, prev, e.pt, s.american, crc, false), s.format), s.format === 'msgpack');
      prev = e.seq;
    }
    s.lastSeq = prev;
  }

  /** Closes sockets that stayed above the hard bound for too long; returns how many it closed. One that is still
   *  reading (its buffered amount went down since the last look) gets 4008, a close frame behind what it has yet to
   *  read; one that reads nothing is dropped at once (no close frame: it would never read one), which frees its
   *  backlog at once. uWebSockets.js holds the backlog of an ended socket until the peer reads it or for about 15 s
   *  (the WebSocket audit: 100 MB held 13 s after a 4008; 530 MiB held while the peer stayed). */
  enforce(now: number): number {
    let closed = 0;
    if (this.sockets.size > 0) this.idleSince = now;
    for (const ws of this.sockets) {
      const s = ws.getUserData();
      if (s.closed) continue;
      const buffered = ws.getBufferedAmount();
      const reading = buffered < s.lastBuffered;
      s.lastBuffered = buffered;
      if (!s.dirty) {
        // a socket that fell behind without a delta to skip (a snapshot, replies on a quiet channel) is dirty from now
        if (buffered <= this.limits.lowWatermark) continue;
        s.dirty = true;
        s.dirtySince = now;
      }
      if (buffered > this.limits.hardBytes && now - s.dirtySince > this.limits.hardMs) {
        s.closed = true;
        closed++;
        if (reading) ws.end(4008, 'backpressure: too far behind; reconnect with resume=<epoch>:<seq>');
        else ws.close();
      } else if (buffered <= this.limits.lowWatermark) {
        this.catchUp(ws, now);
      }
    }
    return closed;
  }
}

/** The heads of a delta that a filtered socket gets: every one its eventIds admit, whether or not a quote of the
 *  event passes its other filters. Its snapshot holds every event of the channel (those eventIds admit), so it must
 *  hear of each new event and each change of start or teams, as an unfiltered socket does: with only the heads of
 *  events whose quotes it got, an event announced with a totals quote was never announced to an h2h socket, which
 *  then got the event's h2h quotes without it (the WebSocket audit). */
export function headsFor(f: Filters, heads: readonly EventHead[]): EventHead[] {
  if (heads.length === 0 || f.eventIds === null) return heads as EventHead[];
  return heads.filter((h) => f.eventIds!.has(h.id));
}
