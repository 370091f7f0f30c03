import t from 'tap';
import type { WebSocket } from 'uWebSockets.js';
import { Channel, DEFAULT_LIMITS, type EventHead, type SocketState } from '../http/ws/channel.js';
import { crcOf, type DeltaItem } from '../http/ws/frames.js';

// The channel's send decisions, driven through a stand-in socket whose buffered amount the test sets: the
// states below (a socket past the watermark, a merge larger than the state) are hard to reach through the
// kernel's buffers in a bounded test; the real sockets are covered in ws.test.ts and ws-limits.test.ts.

class FakeSocket {
  buffered = 0;
  readonly sent: string[] = [];
  ended: [number, string] | null = null;
  /** closed at once, with no close frame (WebSocket.close) */
  dropped = false;
  constructor(readonly state: SocketState) {}
  getUserData() { return this.state; }
  getBufferedAmount() { return this.buffered; }
  send(m: string) { this.sent.push(m); return 1; }
  end(code: number, reason: string) { this.ended = [code, reason]; }
  close() { this.dropped = true; }
}

function state(): SocketState {
  return {
    channel: null, filters: { markets: null, bookmakers: null, eventIds: null }, format: 'json', american: false, lastSeq: 0,
    dirty: false, dirtySince: 0, refuse: null, key: '', keyState: null, tier: 'scale', kind: 'odds-fast', sport: 'basketball_nba', resume: null, closed: false, queued: false, queuedReason: null, wantsSnapshot: null, lastInbound: 0, lastPing: 0,
    pongBytes: 0, counted: false, lastBuffered: 0, subscribeTat: 0, heldUntil: 0,
  };
}

const item = (n: number, removed = false): DeltaItem => ({
  event_id: `e${n % 50}`, market: 'h2h', point: null, player: null, outcome: `o${n}`, book: 'fanduel', price: removed ? 0 : 1.9,
  last_update: 1000 + n, ...(removed ? { removed: true as const } : {}),
});

function setup(limits = DEFAULT_LIMITS, opts: { window?: number; heads?: Map<string, EventHead>; state?: (id: string) => DeltaItem[] } = {}) {
  const snaps: string[] = [];
  const ch: Channel = new Channel('odds-fast:basketball_nba', 'odds-fast', ['basketball_nba'], opts.window ?? 0, 'ep', (id) => crcOf(opts.state?.(id) ?? []),
    (id) => opts.heads?.get(id) ?? null,
    (_ws, reason) => ({ seq: ch.seq, frames: [JSON.stringify({ type: 'snapshot', reason })] }),
    (ws, snap) => {
      for (const f of snap.frames) snaps.push(f as string);
      (ws.getUserData()).lastSeq = snap.seq;
      (ws.getUserData()).dirty = false;
    }, limits);
  const fake = new FakeSocket(state());
  fake.state.channel = ch;
  ch.sockets.add(fake as unknown as WebSocket<SocketState>);
  return { ch, fake, ws: fake as unknown as WebSocket<SocketState>, snaps };
}

t.test('channel - a socket past the low watermark is skipped, then caught up by one merged delta', async (t) => {
  const { ch, fake, ws } = setup();
  ch.offer([item(1)], 1);
  t.equal(fake.sent.length, 1, 'first delta sent');
  fake.buffered = DEFAULT_LIMITS.lowWatermark + 1;
  ch.offer([item(2)], 2);
  ch.offer([item(2), item(3)], 3);
  t.equal(fake.sent.length, 1, 'nothing sent while above the watermark');
  t.ok(fake.state.dirty, 'marked dirty');
  fake.buffered = 0;
  ch.catchUp(ws, 4);
  const merged = JSON.parse(fake.sent[1]) as { con: boolean; seq: number; prev_seq: number; changes: DeltaItem[]; crc?: Record<string, number> };
  t.equal(merged.con, true, 'con: true');
  // it brings an unfiltered socket to the current state: the CRCs of now (of an empty quote set here: 0)
  t.same(merged.crc, { e2: 0, e3: 0 }, 'the merged delta carries the CRC of each event it touches');
  t.same([merged.prev_seq, merged.seq], [1, 3], 'from the last seq held to the current one');
  t.same(merged.changes.map((c) => c.outcome).sort(), ['o2', 'o3'], 'each changed quote once');
  t.notOk(fake.state.dirty, 'clean again');
});

t.test('channel - a merge larger than the state is replaced by a snapshot', async (t) => {
  const { ch, fake, ws, snaps } = setup({ ...DEFAULT_LIMITS, segmentBytes: 1024 });
  ch.offer([item(0)], 1);
  fake.buffered = DEFAULT_LIMITS.lowWatermark + 1;
  const many = Array.from({ length: 200 }, (_, n) => item(n + 10));
  ch.offer(many, 2);
  ch.offer(many.map((i) => ({ ...i, price: 0, removed: true as const })), 3);
  fake.buffered = 0;
  ch.catchUp(ws, 4);
  t.equal(snaps.length, 1, 'a snapshot instead');
  t.match(snaps[0], /caught_up/, 'with reason caught_up');
  t.equal(fake.state.lastSeq, 3, 'at the current seq');
});

t.test('channel - past the resume ring a dirty socket gets a snapshot; past the hard bound it is closed with 4008', async (t) => {
  const { ch, fake, ws, snaps } = setup({ ...DEFAULT_LIMITS, ringMs: 10 });
  ch.offer([item(1)], 1);
  fake.buffered = DEFAULT_LIMITS.lowWatermark + 1;
  ch.offer([item(2)], 2);
  ch.offer([item(3)], 100); // the ring keeps at least the newest entry and drops what is older than 10 ms
  fake.buffered = 0;
  ch.catchUp(ws, 101);
  t.match(snaps[0], /resume_window_exceeded/, 'snapshot with reason');
  fake.buffered = DEFAULT_LIMITS.hardBytes + 2;
  ch.offer([item(4)], 200);
  ch.enforce(200 + DEFAULT_LIMITS.hardMs - 1);
  t.equal(fake.ended, null, 'not before the time bound');
  fake.buffered--; // it reads, slowly
  ch.enforce(200 + DEFAULT_LIMITS.hardMs + 1);
  t.equal(fake.ended?.[0], 4008, 'closed with 4008, a close frame behind what it is reading');
  t.notOk(fake.dropped, 'not dropped');
});

t.test('channel - a socket past the hard bound that reads nothing is dropped at once, its backlog with it (no 4008 it would never read)', async (t) => {
  // regression from the WebSocket audit: 4008 was always a graceful end, and uWebSockets.js held the backlog behind
  // its close frame while the peer stayed (530 MiB held after the close)
  const { ch, fake } = setup();
  fake.buffered = DEFAULT_LIMITS.hardBytes + 1;
  ch.enforce(1000);
  ch.enforce(1000 + DEFAULT_LIMITS.hardMs + 1);
  t.same([fake.dropped, fake.ended], [true, null], 'closed at once, with no close frame queued behind the backlog');
  t.ok(fake.state.closed, 'and marked closed');
});

const head = (id: string, commence = '2026-11-27T00:00:00Z'): EventHead => ({
  id, sport_key: 'basketball_nba', sport_title: 'NBA', commence_time: commence, home_team: `H ${id}`, away_team: `A ${id}`,
});

t.test('channel - a delta announces an event new to the channel with its head, again when its head changes', async (t) => {
  const heads = new Map([['e1', head('e1')], ['e2', head('e2')]]);
  const { ch, fake } = setup(DEFAULT_LIMITS, { heads });
  type F = { events?: EventHead[]; changes: DeltaItem[] };
  const last = () => JSON.parse(fake.sent[fake.sent.length - 1]) as F;
  ch.offer([item(1), item(51)], 1);
  t.same(last().events, [head('e1')], 'first quotes of e1: its head comes with them, once');
  ch.offer([item(101), item(2)], 2);
  t.same(last().events, [head('e2')], 'e1 known already; e2 new');
  ch.offer([item(1)], 3);
  t.equal(last().events, undefined, 'nothing new: no events field');
  heads.set('e1', head('e1', '2026-11-27T01:00:00Z'));
  ch.offer([item(1)], 4);
  t.same(last().events, [head('e1', '2026-11-27T01:00:00Z')], 'a moved start is announced again');
  ch.forget('e1');
  ch.offer([item(1)], 5);
  t.same(last().events?.map((h) => h.id), ['e1'], 'forgotten (left a live channel): announced again when it comes back');
  heads.delete('e2');
  ch.offer([item(2, true)], 6);
  t.equal(last().events, undefined, 'a gone event is not announced');
});

t.test('channel - a coalescing channel gives no CRC for an event with changes waiting in its window', async (t) => {
  // the store (eventState) already holds the waiting change: a CRC of it would match no state the client is sent
  const { ch, fake, ws } = setup(DEFAULT_LIMITS, { window: 1000, state: (id) => (id === 'e1' ? [item(1)] : [item(2)]) });
  ch.offer([item(1), item(2)], 1);
  ch.flush(1);
  const first = JSON.parse(fake.sent[0]) as { crc: Record<string, number> };
  t.same(Object.keys(first.crc).sort(), ['e1', 'e2'], 'a flushed window: CRCs for both events');
  ch.offer([item(1)], 2);
  t.same(Object.keys(ch.crcs([item(1), item(2)])), ['e2'], 'e1 has a change waiting: only e2');
  fake.state.lastSeq = 0;
  ch.catchUp(ws, 3);
  const merged = JSON.parse(fake.sent[1]) as { con: boolean; crc: Record<string, number>; events?: EventHead[] };
  t.same([merged.con, Object.keys(merged.crc)], [true, ['e2']], 'a catch-up in the window leaves e1 to the next delta');
  ch.flush(4);
  t.same(Object.keys((JSON.parse(fake.sent[2]) as { crc: Record<string, number> }).crc), ['e1'], 'which carries it');
});

const filtered = (f: Partial<SocketState['filters']>) => ({ markets: null, bookmakers: null, eventIds: null, ...f });
const totals = (n: number): DeltaItem => ({ ...item(n), market: 'totals', point: 220.5, outcome: 'Over' });

t.test('channel - a filtered socket hears of every new event and head change, as its snapshot holds every event', async (t) => {
  // regression from the WebSocket audit: an event announced with a totals quote was never announced to an h2h socket,
  // which then got the event's h2h quotes without its head; a start moved with only totals quotes never reached it
  const heads = new Map([['e1', head('e1')]]);
  const { ch, fake, ws } = setup(DEFAULT_LIMITS, { heads });
  fake.state.filters = filtered({ markets: new Set(['h2h']) });
  type F = { events?: EventHead[]; changes: DeltaItem[] };
  const frame = (i: number) => JSON.parse(fake.sent[i]) as F;
  ch.offer([totals(1)], 1);
  t.same([frame(0).events, frame(0).changes], [[head('e1')], []], 'the head of a new event comes though none of its quotes passes');
  heads.set('e1', head('e1', '2026-11-27T02:00:00Z'));
  ch.offer([totals(1)], 2);
  t.same(frame(1).events, [head('e1', '2026-11-27T02:00:00Z')], 'and a moved start');
  ch.offer([item(1)], 3);
  t.same([frame(2).events, frame(2).changes.length], [undefined, 1], 'its h2h quote then: the head known already');
  // a socket filtered to other events does not hear of e1
  const { ch: ch2, fake: other } = setup(DEFAULT_LIMITS, { heads });
  other.state.filters = filtered({ eventIds: new Set(['e7']) });
  ch2.offer([totals(1)], 1);
  t.equal((JSON.parse(other.sent[0]) as F).events, undefined, 'eventIds still filter the heads');
  // a filtered socket that lagged: its merged delta holds the heads of every event touched meanwhile
  heads.set('e2', head('e2'));
  fake.buffered = DEFAULT_LIMITS.lowWatermark + 1;
  ch.offer([totals(2)], 4);
  fake.buffered = 0;
  ch.catchUp(ws, 5);
  const merged = frame(3);
  t.same([merged.events?.map((h) => h.id), merged.changes], [['e2'], []], 'a catch-up announces e2, new meanwhile');
});

t.test('channel - a resume replays deltas one by one, and stops at the low watermark for one merged delta', async (t) => {
  const { ch } = setup();
  for (let n = 1; n <= 5; n++) ch.offer([item(n)], n);
  ch.sockets.clear();
  const late = new FakeSocket(state());
  late.state.channel = ch;
  const lws = late as unknown as WebSocket<SocketState>;
  ch.sockets.add(lws);
  ch.replayTo(lws, 1, ch.replay(1)!, 6);
  t.same(late.sent.map((f) => (JSON.parse(f) as { seq: number }).seq), [2, 3, 4, 5], 'every delta after the token, in order');
  t.equal(late.state.lastSeq, 5, 'at the current seq');
  // regression from the WebSocket audit: a resume sent the whole ring whatever the socket's buffer held
  const slow = new FakeSocket(state());
  slow.state.channel = ch;
  const sws = slow as unknown as WebSocket<SocketState>;
  const send = slow.send.bind(slow);
  slow.send = (m: string) => {
    slow.buffered += DEFAULT_LIMITS.lowWatermark; // the second send passes the watermark
    return send(m);
  };
  ch.replayTo(sws, 1, ch.replay(1)!, 6);
  t.same(slow.sent.map((f) => (JSON.parse(f) as { seq: number }).seq), [2, 3], 'stops once past the low watermark');
  t.same([slow.state.lastSeq, slow.state.dirty], [3, true], 'holds seq 3, marked behind');
  slow.buffered = 0;
  ch.catchUp(sws, 7);
  const merged = JSON.parse(slow.sent[2]) as { con: boolean; prev_seq: number; seq: number };
  t.same([merged.con, merged.prev_seq, merged.seq], [true, 3, 5], 'the rest as one merged delta once drained');
});

t.test('channel - a socket past the hard bound with nothing to skip (replies on a quiet channel) is closed too', async (t) => {
  // regression from the WebSocket audit: only a socket marked behind by a skipped delta was ever closed with 4008
  const { ch, fake } = setup();
  fake.buffered = DEFAULT_LIMITS.hardBytes + 1;
  ch.enforce(1000);
  t.same([fake.state.dirty, fake.ended], [true, null], 'marked behind at the first look');
  ch.enforce(1000 + DEFAULT_LIMITS.hardMs + 1);
  t.ok(fake.dropped, 'closed past the time bound (dropped: it reads nothing)');
});
