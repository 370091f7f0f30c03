// Stream channels live while sockets hold them: one no socket held for the resume window is dropped (it was fed every
// batch and kept its ring for good: the WebSocket audit counted one per stream kind, sport and window ever opened),
// a token of it is answered with a snapshot (its window is past), and the channel opened again counts afresh.

import t from 'tap';
import { startTestApp } from './helpers/app.js';
import { connect } from './helpers/ws-client.js';

t.test('ws - a channel without sockets past the resume window is dropped, and made again on demand', async (t) => {
  const app = await startTestApp(t, { streams: { ringMs: 1500 } });
  const key = await app.key('scale');
  const channels = async (): Promise<number> => {
    const text = await (await app.get('/metrics')).text();
    return Number(/^linewire_ws_channels (\d+)/m.exec(text)?.[1] ?? Number.NaN);
  };
  const now = Date.now();
  const ev = { id: 'life_1', sport_key: 'icehockey_nhl', commence_time: now + 3_600_000, home_team: 'Home', away_team: 'Away' };
  const quote = (price: number) => ({ prices: [{ book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price }] });
  await app.ingest({ events: [ev], ...quote(1.9) });
  t.equal(await channels(), 0, 'none before a client');
  const a = await connect(app, `/v1/ws/odds-fast/icehockey_nhl?apiKey=${key}`);
  const snap = await a.until((f) => f.type === 'snapshot');
  await app.ingest(quote(1.95));
  const delta = await a.until((f) => f.type === 'delta');
  t.equal(await channels(), 1, 'one while the client holds it');
  a.ws.close();
  await a.closedWith();
  const closedAt = Date.now();
  t.equal(await channels(), 1, 'kept inside the resume window');
  while ((await channels()) === 1 && Date.now() - closedAt < 10_000) await new Promise((r) => setTimeout(r, 50));
  t.equal(await channels(), 0, 'dropped past it');
  // (the window counts from the server's last tick with the socket, up to a tick of 100 ms before the client saw
  // its close: the margin allows for that and for a loaded host's delays)
  t.ok(Date.now() - closedAt >= 1000, `not well before the window ended (${Date.now() - closedAt} ms)`);
  const b = await connect(app, `/v1/ws/odds-fast/icehockey_nhl?apiKey=${key}&resume=${delta.epoch}:${delta.seq}`);
  const again = await b.until((f) => f.type === 'snapshot');
  t.equal(again.reason, 'resume_window_exceeded', 'a token of the dropped channel: a snapshot, its window past');
  t.not(again.epoch, snap.epoch, 'the channel made again names its sequence anew');
  t.same(b.eventItems(ev.id).map((i) => i.price), [1.95], 'with the current state');
  await app.ingest(quote(2.0));
  const next = await b.until((f) => f.type === 'delta');
  t.same([next.prev_seq, next.changes?.map((i) => i.price)], [again.seq, [2]], 'and its deltas follow on');
  b.ws.close();
});
