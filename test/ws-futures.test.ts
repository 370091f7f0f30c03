import t from 'tap';
import { connect } from './helpers/ws-client.js';
import { startTestApp } from './helpers/app.js';

// The odds streams carry games, like /odds: futures and event markets (teamless events) are served by /props and
// /v1/prediction-markets, and never appear in a snapshot or a delta with empty team names.
t.test('ws odds streams - futures and event markets stay out of snapshots and deltas', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const game = { id: 'wsf_game', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'New York Knicks' };
  const champ = { id: 'wsf_champ', sport_key: 'basketball_nba', commence_time: now + 20 * 86_400_000, kind: 'futures', title: 'NBA Championship 2026-27' };
  const cup = { id: 'wsf_cup', sport_key: 'basketball_nba', commence_time: now + 5 * 86_400_000, kind: 'event_market', title: 'NBA Cup 2026' };
  const r = await app.ingest({ events: [game, champ, cup], prices: [
    { book: 'draftkings', event_id: game.id, market: 'h2h', outcome: game.home_team, price: 1.6 },
    { book: 'draftkings', event_id: game.id, market: 'h2h', outcome: game.away_team, price: 2.45 },
    { book: 'draftkings', event_id: champ.id, market: 'outrights', outcome: 'Boston Celtics', price: 5 },
    { book: 'fanduel', event_id: cup.id, market: 'outrights', outcome: 'Oklahoma City Thunder', price: 4 },
  ] });
  t.equal(r.json.accepted, 4, 'all four prices applied');
  const c = await connect(app, `/v1/ws/odds-fast/basketball_nba?apiKey=${key}`);
  const snap = await c.until((f) => f.type === 'snapshot');
  t.same((snap.events ?? []).map((e) => e.id), [game.id], 'the snapshot holds the game only');
  await app.ingest({ prices: [
    { book: 'draftkings', event_id: champ.id, market: 'outrights', outcome: 'Boston Celtics', price: 5.5 },
    { book: 'fanduel', event_id: cup.id, market: 'outrights', outcome: 'Oklahoma City Thunder', price: 3.8 },
    { book: 'draftkings', event_id: game.id, market: 'h2h', outcome: game.home_team, price: 1.62 },
  ] });
  const delta = await c.until((f) => f.type === 'delta');
  await c.settle();
  const items = c.frames.filter((f) => f.type === 'delta').flatMap((f) => f.changes ?? []);
  t.same([...new Set(items.map((i) => i.event_id))], [game.id], 'deltas carry the game only');
  t.ok(delta.crc !== undefined && Object.keys(delta.crc).every((id) => id === game.id), 'and CRCs for the game only');
  c.ws.close();
  await app.close();
});
