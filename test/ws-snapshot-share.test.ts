import t from 'tap';
import { crcOf } from '../http/ws/frames.js';
import { connect, type Frame } from './helpers/ws-client.js';
import { TestClock, startTestApp } from './helpers/app.js';

// Snapshots shared between sockets (http/ws/server.ts snapshotCache) and the catch-up of a socket sent one built a
// moment before: with the clock held, the reuse window is the test's to open and close.

const now = Date.now();
const EV = { id: 'share_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Home S', away_team: 'Away S' };
const h2h = (book: string, a: number, b: number) => [
  { book, event_id: EV.id, market: 'h2h', outcome: EV.home_team, price: a },
  { book, event_id: EV.id, market: 'h2h', outcome: EV.away_team, price: b },
];

async function snapshots(get: (p: string) => Promise<Response>): Promise<{ built: number; reused: number }> {
  const text = await (await get('/metrics')).text();
  const read = (source: string) => Number(new RegExp(`linewire_ws_snapshots_total\\{source="${source}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { built: read('built'), reused: read('reused') };
}

t.test('ws snapshots - shared by sockets connecting together; one built a moment before is caught up from its seq', async (t) => {
  const clock = new TestClock();
  const app = await startTestApp(t, { now: clock.now });
  const apiKey = await app.key('business');
  await app.ingest({ events: [EV], prices: [...h2h('fanduel', 1.9, 1.95), ...h2h('draftkings', 1.87, 1.98)] });
  clock.freeze();
  const path = `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}`;

  const first = await connect(app, path);
  const snap = await first.until((f) => f.type === 'snapshot');
  const before = await snapshots(app.get);
  const crowd = await Promise.all(Array.from({ length: 12 }, () => connect(app, path)));
  const snaps = await Promise.all(crowd.map((c) => c.until((f) => f.type === 'snapshot')));
  const after = await snapshots(app.get);
  t.equal(after.built - before.built, 0, 'twelve sockets connecting together: no snapshot built for them');
  t.equal(after.reused - before.reused, 12, 'the first one reused for each');
  t.ok(snaps.every((s) => s.seq === snap.seq && JSON.stringify(s.events) === JSON.stringify(snap.events)), 'each the same state at the same seq');

  // the channel moves on; a socket connecting inside the window gets the earlier snapshot, then one merged delta
  await app.ingest({ prices: h2h('fanduel', 1.8, 2.05) });
  const moved = await first.until((f) => f.type === 'delta');
  const late = await connect(app, path);
  const lateSnap = await late.until((f) => f.type === 'snapshot');
  t.equal(lateSnap.seq, snap.seq, 'the late socket: the snapshot built before the change, at its seq');
  t.equal(lateSnap.events!.flatMap((e) => e.bookmakers).find((b) => b.key === 'fanduel')?.markets[0].outcomes[0].price, 1.9, 'holding the price before it');
  const caught = await late.until((f) => f.type === 'delta');
  t.same([caught.con, caught.prev_seq, caught.seq], [true, snap.seq, moved.seq], 'then a catch-up from that seq to the current one');
  t.equal(late.book.get(`${EV.id}|h2h|||${EV.home_team}|fanduel`)?.price, 1.8, 'which brings the moved price');
  t.equal(crcOf(late.eventItems(EV.id)), caught.crc?.[EV.id], 'and the CRC of the current state matches the book');

  // past the window a new snapshot is built, at the current seq
  clock.freeze(clock.now() + 1000);
  const fresh = await connect(app, path);
  const freshSnap = await fresh.until((f): f is Frame => f.type === 'snapshot');
  t.equal(freshSnap.seq, moved.seq, 'after the window: a snapshot of now');
  t.equal((await snapshots(app.get)).built, after.built + 1, 'built for it');

  // a subscribe changes the filters: a snapshot of its own, not the unfiltered one
  fresh.ws.send(JSON.stringify({ op: 'subscribe', bookmakers: 'draftkings' }));
  const sub = await fresh.until((f) => f.type === 'snapshot' && f.reason === 'subscribed');
  t.same(sub.events!.flatMap((e) => e.bookmakers.map((b) => b.key)), ['draftkings'], 'the subscribed filters');
  for (const c of [first, ...crowd, late, fresh]) c.ws.close();
  clock.release();
});

t.test('ws snapshots - a client sending subscribes faster than it reads gets one snapshot once drained, not one each', async (t) => {
  const app = await startTestApp(t);
  const apiKey = await app.key('scale');
  const many = Array.from({ length: 300 }, (_, i) => ({ id: `spam_${i}`, sport_key: 'baseball_mlb', commence_time: now + 7_200_000, home_team: `Home ${i}`, away_team: `Away ${i}` }));
  await app.ingest({ events: many, prices: many.flatMap((e) => ['draftkings', 'fanduel', 'betmgm', 'pinnacle'].flatMap((book) => [
    { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: 1.9 },
    { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: 1.95 },
  ])) });
  const c = await connect(app, `/v1/ws/odds-fast/baseball_mlb?apiKey=${apiKey}`);
  const first = await c.until((f) => f.type === 'snapshot');
  const size = JSON.stringify(first).length;
  const socket = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  socket.pause();
  const SENT = 300;
  for (let i = 0; i < SENT; i++) c.ws.send(JSON.stringify({ op: 'subscribe', markets: i === SENT - 1 ? 'h2h' : 'h2h,totals' }));
  await new Promise((r) => setTimeout(r, 1500));
  socket.resume();
  await c.until((f) => f.type === 'snapshot' && f.reason === 'subscribed' && c.frames.indexOf(f) === c.frames.length - 1 && f.seq >= first.seq, 10_000);
  await c.settle(500);
  const answers = c.frames.filter((f) => f.type === 'snapshot' && f.reason === 'subscribed' && (f.seg === undefined || f.seg === 'start'));
  t.ok(answers.length < SENT / 2, `${answers.length} snapshots of about ${Math.round(size / 1024)} KB answered ${SENT} subscribes (the kernel's buffers took the first ones)`);
  t.ok(answers.length >= 1, 'and the subscribe was answered');
  t.equal(c.book.size, 300 * 4 * 2, 'the book holds the market after the last answer');
  c.ws.close();
});

t.test('ws snapshots - subscribes past a burst wait their turn, one snapshot per interval; those meanwhile only change its filters', async (t) => {
  // regression from the WebSocket audit: a client that read each answer and sent a new bookmakers subset every 5 ms
  // got a full snapshot built for each (170 of 1.2 MB in 6 s), the main thread's REST answers waiting behind them
  const clock = new TestClock();
  const app = await startTestApp(t, { now: clock.now });
  const apiKey = await app.key('business');
  await app.ingest({ events: [EV], prices: [...h2h('fanduel', 1.9, 1.95), ...h2h('draftkings', 1.87, 1.98)] });
  const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${apiKey}`);
  await c.until((f) => f.type === 'snapshot');
  const answers = () => c.frames.filter((f) => f.type === 'snapshot' && f.reason === 'subscribed');
  const books = (f: Frame) => f.events!.flatMap((e) => e.bookmakers.map((b) => b.key));
  const t0 = clock.freeze();
  for (let i = 1; i <= 4; i++) {
    c.ws.send(JSON.stringify({ op: 'subscribe', bookmakers: i % 2 === 0 ? 'fanduel' : 'draftkings' }));
    await c.until(() => answers().length === i);
  }
  t.pass('a burst of four, each answered at once');
  c.ws.send(JSON.stringify({ op: 'subscribe', bookmakers: 'draftkings' }));
  c.ws.send(JSON.stringify({ op: 'subscribe', bookmakers: 'fanduel' }));
  // the clock stands still: the fifth's turn does not come
  await c.settle(600);
  t.equal(answers().length, 4, 'the fifth waits its turn while the clock stands');
  t.equal(c.closed, null, 'the connection kept');
  clock.freeze(t0 + 500);
  await c.until(() => answers().length === 5);
  await c.settle(300);
  t.equal(answers().length, 5, 'its turn: one snapshot for the fifth and sixth subscribes');
  t.same(books(answers()[4]), ['fanduel'], 'built with the last subscribe\'s filters');
  c.ws.close();
  clock.release();
});
