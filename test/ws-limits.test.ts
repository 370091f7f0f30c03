import t from 'tap';
import { TestClock, startTestApp, type TestApp } from './helpers/app.js';
import { connect } from './helpers/ws-client.js';

const now = Date.now();

/** the server's count of streams it closed for `cause`, from /metrics */
async function closesOf(app: TestApp, cause: string): Promise<number> {
  const text = await (await app.get('/metrics')).text();
  return Number(new RegExp(`^linewire_ws_server_closes_total\\{cause="${cause}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
}

t.test('ws limits', async (t) => {
  const clock = new TestClock();
  // tiny bounds so a test can cross them: 4 KiB low watermark, 2 KiB segments, and a hard bound (for 300 ms) equal to
  // the low watermark. A socket above the low watermark is sent nothing more, so a client that stopped reading
  // stays where its last send left it: with a higher hard bound, a last delta the kernel took all but a few KiB of
  // left the socket between the two bounds for good, and the 4008 test failed now and then (CI, 2026-11-23)
  const app = await startTestApp(t, { now: clock.now, streams: { lowWatermark: 4096, hardBytes: 4096, hardMs: 300, segmentBytes: 2048, idleSeconds: 8 } });
  const key = await app.key('scale');
  const events = Array.from({ length: 12 }, (_, i) => ({ id: `lim_${i}`, sport_key: 'icehockey_nhl', commence_time: now + 3_600_000 + i * 60_000, home_team: `H${i}`, away_team: `A${i}` }));
  const prices = (p: number) => events.flatMap((e) => ['draftkings', 'fanduel', 'pinnacle'].flatMap((book) => [
    { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: p },
    { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: 3.9 - p },
  ]));
  await app.ingest({ events, prices: prices(1.9) });
  const closes = (cause: string) => closesOf(app, cause);

  t.test('a snapshot above the segment bound arrives in start, mid and end segments of one seq', async (t) => {
    const c = await connect(app, `/v1/ws/odds-fast/icehockey_nhl?apiKey=${key}`);
    const end = await c.until((f) => f.type === 'snapshot' && f.seg === 'end');
    const segs = c.frames.filter((f) => f.type === 'snapshot');
    t.equal(segs[0].seg, 'start', 'first segment');
    t.ok(segs.length >= 3 && segs.slice(1, -1).every((f) => f.seg === 'mid'), 'middle segments');
    t.ok(segs.every((f) => f.seq === end.seq), 'one seq');
    t.equal(segs.reduce((n, f) => n + f.events!.length, 0), events.length, 'every event once');
    c.ws.close();
  });

  t.test('a socket above the hard bound for longer than the time bound is closed; one that reads nothing is dropped at once (1006)', async (t) => {
    // a sport of its own with 200 events, so each delta is about 200 KB
    const many = Array.from({ length: 200 }, (_, i) => ({ id: `big_${i}`, sport_key: 'baseball_mlb', commence_time: now + 7_200_000, home_team: `H${i}`, away_team: `A${i}` }));
    const big = (p: number) => many.flatMap((e) => ['draftkings', 'fanduel', 'pinnacle'].flatMap((book) => [
      { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: p },
      { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: 3.9 - p },
    ]));
    await app.ingest({ events: many, prices: big(1.9) });
    const c = await connect(app, `/v1/ws/odds-fast/baseball_mlb?apiKey=${key}`);
    await c.until((f) => f.type === 'snapshot' && f.seg === 'end');
    const socket = (c.ws as unknown as { _socket: { pause(): void } })._socket;
    t.equal(await closes('backpressure'), 0, 'no stream closed for backpressure yet');
    socket.pause();
    // the heartbeat carries nothing here: deltas fill the kernel buffers, then the server's. The client reads
    // again as soon as the server has closed the stream (its counter says so): a client that stayed paused for
    // seconds after that saw the connection dropped (1006) before the close frame reached it (CI, 2026-11-25, on
    // a slow host where the 150 ingests took longer than the server waits for a closing socket to drain)
    for (let i = 0; i < 150 && (await closes('backpressure')) === 0; i++) {
      await app.ingest({ prices: big(1.8 + (i % 20) / 100) });
      if (i % 30 === 29) await new Promise((r) => setTimeout(r, 400));
    }
    (socket as unknown as { resume(): void }).resume();
    // regression from the WebSocket audit: the close was a 4008 frame queued behind the backlog, which uWebSockets.js
    // held for a peer that read nothing (530 MiB held after the close); a client still reading gets 4008 (the
    // channel's tests)
    const closed = await c.closedWith(10_000);
    t.equal(closed.code, 1006, 'dropped with no close frame: the backlog was not kept for one');
    t.equal(await closes('backpressure'), 1, 'counted once in linewire_ws_server_closes_total{cause="backpressure"}');
  });

  t.test('a client that sends but does not read gets no replies piled up: closed on a quiet channel too', async (t) => {
    // regression from the WebSocket audit: pings (or bad messages) from a client that stopped reading, on a channel with
    // no delta to skip, were answered without limit (the server grew 14 MB a second) and the socket never closed
    const c = await connect(app, `/v1/ws/odds-fast/basketball_wnba?apiKey=${key}`);
    await c.until((f) => f.type === 'snapshot');
    const before = await closes('backpressure');
    const socket = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    // past the kernel's buffers on both sides (a few MB of pong frames), then the server's own
    for (let i = 0; i < 40 && (await closes('backpressure')) === before; i++) {
      for (let k = 0; k < 5000; k++) c.ws.send(k % 2 === 0 ? '{"op":"ping"}' : 'x');
      await new Promise((r) => setTimeout(r, 100));
    }
    socket.resume();
    const closed = await c.closedWith(10_000);
    t.equal(closed.code, 1006, 'closed (dropped: it read nothing)');
    t.equal(await closes('backpressure'), before + 1, 'counted as a backpressure close');
  });

  t.test('an idle client is pinged; a client that stops answering is closed', async (t) => {
    const c = await connect(app, `/v1/ws/odds-fast/icehockey_nhl?apiKey=${key}`);
    await c.until((f) => f.type === 'snapshot' && f.seg === 'end');
    const pinged = await new Promise<boolean>((resolve) => {
      c.ws.once('ping', () => resolve(true));
      setTimeout(() => resolve(false), 15_000);
    });
    t.ok(pinged, 'the server pinged the idle client');
    // stop reading for a while: no pong reaches the server, which closes the silent socket with 4002
    const sock = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    sock.pause();
    await new Promise((r) => setTimeout(r, 10_000));
    sock.resume();
    const closed = await c.closedWith(10_000);
    t.equal(closed.code, 4002, 'closed with 4002 after inbound silence');
    t.equal(await closes('silence'), 1, 'counted in linewire_ws_server_closes_total{cause="silence"}');
  });

  t.test('/ws/live carries in-play events only, with in-play prices: an event joins at its start without its pregame quotes', async (t) => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const t0 = clock.freeze(now + 3_600_000 + 30_000); // lim_0 has started, the others not
    // the start reaches the store at the hub's next tick (once a second): lim_0's pregame quotes go
    await sleep(1300);
    const c = await connect(app, `/ws/live/icehockey_nhl?apiKey=${key}`);
    const snap = await c.until((f) => f.type === 'snapshot');
    t.same(snap.events!.map((e) => e.id), ['lim_0'], 'only the started event');
    t.same(c.eventItems('lim_0'), [], 'without the quotes observed before its start');
    await app.ingest({ prices: prices(1.85) });
    const d = await c.until((f) => f.type === 'delta');
    t.ok(d.changes!.every((i) => i.event_id === 'lim_0'), 'deltas only for in-play events');
    t.equal(c.eventItems('lim_0').length, 6, 'lim_0 priced in play');
    clock.freeze(t0 + 60_000); // lim_1 starts: its quotes were observed at t0, before its start
    await sleep(1300);
    await app.ingest({ prices: prices(1.86) });
    const joined = await c.until((f) => f.type === 'delta' && f.changes!.some((i) => i.event_id === 'lim_1'));
    t.ok(joined.changes!.filter((i) => i.event_id === 'lim_1').every((i) => i.removed !== true && (i.price === 1.86 || i.price === 3.9 - 1.86)),
      'lim_1 joins with its in-play prices only');
    t.equal(c.eventItems('lim_1').length, 6, 'lim_1 holds its six in-play quotes');
    // regression: an event whose start moves later is no longer in play; its quotes stayed in the clients' books
    const later = { ...events[1], commence_time: t0 + 3_600_000 };
    await app.ingest({ events: [later] });
    const left = await c.until((f) => f.type === 'delta' && f.changes!.some((i) => i.event_id === 'lim_1' && i.removed === true));
    t.equal(left.changes!.filter((i) => i.event_id === 'lim_1' && i.removed === true).length, 6, 'lim_1 leaves with its six quotes removed');
    t.equal(left.crc?.lim_1, 0, 'its CRC on the live channel is that of no quotes');
    t.same(c.eventItems('lim_1'), [], 'the live book no longer holds it');
    await app.ingest({ events: [events[1]] });
    clock.release();
    c.ws.close();
  });
});

t.test('ws limits - a client sending PING frames without reading is dropped once their PONGs pile up (they grew the server without bound)', async (t) => {
  // regression from the WebSocket audit: uWebSockets.js answers every PING with a PONG on its own, past the reply guard
  // of {"op":"ping"}, and buffered them up to 1 GiB a socket (737 MiB in 4 s, held until the client left). The hard
  // bound here is the default one (8 MiB for 10 s), which the flood passed long before its time was up
  const app = await startTestApp(t, { streams: { lowWatermark: 64 * 1024 } });
  const key = await app.key('business');
  const c = await connect(app, `/v1/ws/odds-fast/basketball_ncaab?apiKey=${key}`);
  c.ws.on('error', () => {}); // the server resets the connection while the client is still sending
  await c.until((f) => f.type === 'snapshot');
  let pongs = 0;
  c.ws.on('pong', () => pongs++);
  for (let k = 0; k < 100; k++) c.ws.ping(Buffer.alloc(125));
  for (let i = 0; i < 250 && pongs < 100; i++) await new Promise((r) => setTimeout(r, 20));
  t.same([pongs, c.closed], [100, null], 'a client that reads its PONGs gets every one and is left alone');
  const socket = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  socket.pause();
  const payload = Buffer.alloc(125);
  // past the kernel's buffers on both sides (a few MB of PONGs), then the server's own: 1 MB of PONGs a round
  for (let i = 0; i < 60 && c.closed === null && (await closesOf(app, 'backpressure')) === 0; i++) {
    for (let k = 0; k < 8000; k++) c.ws.ping(payload);
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(await closesOf(app, 'backpressure'), 1, 'closed by the server, counted as a backpressure close');
  socket.resume();
  const closed = await c.closedWith(10_000);
  t.equal(closed.code, 1006, 'dropped at once, with no close frame behind the PONGs');
});

t.test('ws limits - an account holds at most its tier\'s open streams; one more is closed with 4029 and a reason', async (t) => {
  // regression from the WebSocket audit: nothing was counted, and 300 sockets of one business key were all accepted,
  // each a snapshot built and sent and a socket's worth of the server's memory
  const app = await startTestApp(t);
  const key = await app.key('business');
  const path = (k: string) => `/v1/ws/odds-fast/basketball_wnba?apiKey=${k}`;
  const open = [];
  for (let i = 0; i < 50; i++) {
    const c = await connect(app, path(key));
    await c.until((f) => f.type === 'snapshot');
    open.push(c);
  }
  const extra = await connect(app, path(key));
  const refused = await extra.closedWith();
  t.equal(refused.code, 4029, 'the 51st stream of a business account: 4029');
  t.match(refused.reason, /too many open streams: this account holds 50, the most for business/, 'the reason says why and how many');
  const made = await app.post('/v1/keys', {}, { 'X-API-Key': key });
  const sibling = ((await made.json()) as { api_key: string }).api_key;
  t.equal((await (await connect(app, path(sibling))).closedWith()).code, 4029, 'another key of the same account: 4029 too (the limit is the account\'s)');
  const other = await connect(app, path(await app.key('business')));
  t.equal((await other.until((f) => f.type === 'snapshot')).type, 'snapshot', 'another account streams');
  open[0].ws.close();
  await open[0].closedWith();
  const again = await connect(app, path(sibling));
  t.equal((await again.until((f) => f.type === 'snapshot')).type, 'snapshot', 'once one is closed, a new one is taken');
  t.equal((await (await connect(app, path(key))).closedWith()).code, 4029, 'and the account is at its bound again');
  for (const c of [...open.slice(1), other, again]) c.ws.close();
});
