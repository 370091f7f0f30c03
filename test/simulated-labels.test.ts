// Everything a node serving the simulator's prices sends says so, beyond the X-Data-Source header of REST answers
// (regressions found by an audit: none of these did): webhook bodies (`simulated: true` in both variants' JSON
// envelopes, [SIMULATED] in a chat message's title: 600 deliveries of simulated +EV and arbitrage prices read as a
// real book's), WebSocket snapshots and heartbeats and the 101, /v1/status. A node without the simulator sends none.

import t from 'tap';
import { renderBody } from '../engine/webhook-format.js';
import { startTestApp } from './helpers/app.js';
import { call, j } from './helpers/api.js';
import { startReceiver } from './helpers/webhook-receiver.js';
import WebSocket from 'ws';
import { connect } from './helpers/ws-client.js';

t.test('webhook bodies - simulated: true beside data, [SIMULATED] in chat titles; nothing when not simulated', async (t) => {
  const env = { id: 'evt_1', type: 'test', at: 1_800_000_000_000, data: { message: 'hi' } };
  t.same(JSON.parse(renderBody('A', 'json', { ...env, simulated: true })), { id: 'evt_1', event_type: 'test', timestamp_ms: 1_800_000_000_000, simulated: true, data: { message: 'hi' } }, 'Variant A');
  t.same(JSON.parse(renderBody('B', 'json', { ...env, simulated: true })).simulated, true, 'Variant B json');
  const slack = JSON.parse(renderBody('B', 'slack', { ...env, simulated: true }));
  t.match(slack.text, /^\*\[SIMULATED\] /, 'slack: the title says it');
  t.match(slack.attachments[0].footer, /simulated data/, 'and the footer');
  t.match(JSON.parse(renderBody('B', 'discord', { ...env, simulated: true })).embeds[0].title, /^\[SIMULATED\] /, 'discord');
  t.notOk('simulated' in JSON.parse(renderBody('A', 'json', env)), 'not simulated: no field');
  t.notMatch(JSON.parse(renderBody('B', 'slack', env)).text, /SIMULATED/, 'nor a mark in the title');
});

t.test('webhook chat messages - prices to three decimals for a person; the JSON keeps them whole', async (t) => {
  // regression from the documentation audit: a Discord message read "1.9090909090909092 (-110)"
  const data = { sport_key: 'basketball_nba', home_team: 'H', away_team: 'A', market: 'h2h', side: 'H', book: 'fanduel',
    price: 1 / 0.52380952380952384 - 0.0000000000000002, price_american: -110, edge_pct: 2.5, fair_price: 1.87, sharp_book: 'pinnacle' };
  const env = { id: 'evt_2', type: 'ev.flagged', at: 1_800_000_000_000, data };
  const embed = JSON.parse(renderBody('B', 'discord', env)).embeds[0] as { description: string; fields: { name: string; value: string }[] };
  t.match(embed.description, /: 1\.909 against fair 1\.870/, 'the description');
  t.equal(embed.fields.find((f) => f.name === 'Price')!.value, '1.909 (-110)', 'the Price field');
  t.equal(JSON.parse(renderBody('B', 'json', env)).data.price, data.price, 'json: the price as computed');
});

t.test('webhook deliveries of a node running the simulator are labelled simulated', async (t) => {
  const app = await startTestApp(t, { feeds: ['sim'], simRate: 50, shards: 1, webhooks: { allowPrivate: true, pollMs: 25 } });
  const rx = await startReceiver(t);
  const key = await app.key('enterprise');
  const made = async (body: unknown) => {
    const res = await call(app, 'POST', '/v1/webhooks', key, body);
    t.equal(res.status, 201, 'created');
    return j(res);
  };
  const a = await made({ url: rx.url + '?A', events: ['new_event'] });
  const slack = await made({ destination_url: rx.url + '?slack', events: ['arbitrage.opened'], format: 'slack' });
  for (const [w, q] of [[a, 'A'], [slack, 'slack']] as const) {
    const res = await call(app, 'POST', `/v1/webhooks/${w.id}/test`, key);
    t.equal(res.status, 200, `${q}: test sent`);
    await res.arrayBuffer();
  }
  const [gotA] = await rx.waitFor((r) => r.path.endsWith('?A'));
  t.equal(gotA.body.simulated, true, 'Variant A: simulated: true');
  const [gotSlack] = await rx.waitFor((r) => r.path.endsWith('?slack'));
  t.match(gotSlack.body.text, /\[SIMULATED\]/, 'slack: [SIMULATED] in the message');

  const business = await app.key('business');
  const ws = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${business}`);
  const snap = await ws.until((f) => f.type === 'snapshot');
  t.equal(snap.simulated, true, 'a WebSocket snapshot: simulated: true');
  ws.ws.close();
  const raw = new WebSocket(`${app.base.replace('http', 'ws')}/v1/ws/odds-fast/basketball_nba?apiKey=${business}`);
  const headers = await new Promise<Record<string, unknown>>((resolve, reject) => { raw.once('upgrade', (r) => resolve(r.headers)); raw.once('error', reject); });
  raw.terminate();
  t.equal(headers['x-data-source'], 'simulated', 'the 101: X-Data-Source: simulated');
  const st = (await (await app.get('/v1/status')).json()) as { simulated: boolean };
  t.equal(st.simulated, true, '/v1/status: simulated: true');
  await app.app.services.status!.sample();
  const hist = (await (await app.get('/v1/status/history?window_s=3600')).json()) as { sources: { segments: { simulated: boolean }[] }[] };
  const segs = hist.sources.flatMap((x) => x.segments);
  t.ok(segs.length > 0 && segs.every((x) => x.simulated === true), '/v1/status/history: its samples say simulated (kept in status_samples)');
});

t.test('a node without the simulator labels nothing simulated', async (t) => {
  const app = await startTestApp(t, { shards: 1 });
  const st = (await (await app.get('/v1/status')).json()) as { simulated: boolean };
  t.equal(st.simulated, false, '/v1/status: simulated: false');
  const ws = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${await app.key('business')}`);
  const snap = await ws.until((f) => f.type === 'snapshot');
  t.notOk('simulated' in snap, 'no simulated field in a snapshot');
  ws.ws.close();
});

t.test('analytics rows - each says whether its event is the simulator\'s (a node may run it beside a real feed)', async (t) => {
  // the ingest audit: with FEED=sim,theoddsapi the rows of /arbitrage, /ev, /consensus and /middles carried nothing to
  // tell a simulated arbitrage from a real one (the response header names both feeds)
  const app = await startTestApp(t, { feeds: ['sim'], simRate: 50, shards: 1 });
  const key = await app.key('business', 1_000_000);
  const ev = { id: 'lbl_posted', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Posted Home', away_team: 'Posted Away' };
  const r = await app.ingest({ events: [ev], prices: [
    { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 2.2 }, { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 1.6 },
    { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.6 }, { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.2 },
  ] });
  t.equal(r.json.accepted, 4, 'an event posted to /v1/ingest beside the simulator\'s');
  const rows = async (view: string) => (await (await app.get(`/v1/sports/basketball_nba/${view}${view.includes('?') ? '&' : '?'}apiKey=${key}`)).json()) as { event_id: string; simulated: boolean }[];
  const arbs = await rows('arbitrage');
  const mine = arbs.filter((x) => x.event_id === ev.id);
  t.ok(mine.length === 1 && mine[0].simulated === false, 'arbitrage: the posted event\'s row is not simulated');
  t.ok(arbs.every((x) => x.simulated === (x.event_id !== ev.id)), `arbitrage: ${arbs.length} rows, each labelled by its event`);
  for (const view of ['consensus']) {
    const got = await rows(view);
    const posted = got.filter((x) => x.event_id === ev.id);
    const sim = got.filter((x) => x.event_id !== ev.id);
    t.ok(posted.length > 0 && posted.every((x) => x.simulated === false), `${view}: the posted event's rows are not simulated`);
    t.ok(sim.length > 0 && sim.every((x) => x.simulated === true), `${view}: the simulator's ${sim.length} rows say simulated`);
  }
  for (const view of ['ev?minEdge=0', 'middles']) {
    const got = await rows(view);
    t.ok(got.every((x) => x.simulated === (x.event_id !== ev.id)), `${view.replace(/\?.*/, '')}: ${got.length} rows, each labelled by its event`);
  }
});
