// GET /v1/sports/{sport_key}/events/{event_id}/odds (and /v4): one event's odds in The Odds API v4 event-odds shape,
// the event object itself, with player props among the markets (v4's route to props), over a real socket.

import t from 'tap';
import { startTestApp } from './helpers/app.js';

interface Outcome { name: string; price: number; point?: number; description?: string }
interface OddsEvent {
  id: string; sport_key: string; commence_time: string; home_team: string; away_team: string;
  bookmakers: { key: string; markets: { key: string; outcomes: Outcome[] }[] }[];
}

const app = await startTestApp(t);
const key = await app.key('business');
const now = Date.now();
const a = { id: 'eo_a', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
const b = { id: 'eo_b', sport_key: 'basketball_nba', commence_time: now + 7_200_000, home_team: 'Utah Jazz', away_team: 'Orlando Magic' };
const nhl = { id: 'eo_nhl', sport_key: 'icehockey_nhl', commence_time: now + 3_600_000, home_team: 'Boston Bruins', away_team: 'Buffalo Sabres' };
const h2h = (book: string, ev: typeof a, home: number, away: number) => [
  { book, event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: home },
  { book, event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: away },
];
const prop = (book: string, ev: typeof a, market: string, player: string, point: number, over: number, under: number) => [
  { book, event_id: ev.id, market, player, point, outcome: 'Over', price: over },
  { book, event_id: ev.id, market, player, point, outcome: 'Under', price: under },
];
const loaded = await app.ingest({
  events: [a, b, nhl],
  prices: [
    ...h2h('draftkings', a, 1.5, 2.75), ...h2h('fanduel', a, 1.52, 2.7), ...h2h('draftkings', b, 1.9, 1.95), ...h2h('draftkings', nhl, 1.8, 2.05),
    ...prop('draftkings', a, 'player_points', 'Jayson Tatum', 27.5, 1.87, 1.95),
    ...prop('draftkings', a, 'player_rebounds', 'Jayson Tatum', 8.5, 1.9, 1.9),
  ],
});
t.same(loaded.json.rejected, [], 'fixture accepted');

const get = async (path: string) => {
  const res = await app.get(path, { 'X-API-Key': key });
  return { res, body: (await res.json()) as any };
};

t.test('event odds - the event object with its game markets and the prop markets asked for', async (t) => {
  const { res, body } = await get(`/v1/sports/basketball_nba/events/${a.id}/odds?markets=h2h,player_points&bookmakers=draftkings,fanduel`);
  t.equal(res.status, 200, '200');
  t.equal(res.headers.get('x-requests-last'), '2', 'credits: 2 markets x 1 region (two books)');
  const ev = body as OddsEvent;
  t.notOk(Array.isArray(body), 'an object, not a list (v4 event-odds shape)');
  t.same([ev.id, ev.sport_key, ev.home_team, ev.away_team], [a.id, 'basketball_nba', a.home_team, a.away_team], 'the event');
  const dk = ev.bookmakers.find((x) => x.key === 'draftkings')!;
  t.same(dk.markets.map((m) => m.key), ['h2h', 'player_points'], 'draftkings: h2h and the prop market asked for (not player_rebounds)');
  t.same(dk.markets[1].outcomes, [
    { name: 'Over', price: 1.87, point: 27.5, description: 'Jayson Tatum' },
    { name: 'Under', price: 1.95, point: 27.5, description: 'Jayson Tatum' },
  ], 'props in v4 form: Over/Under, the player in description');
  t.same(ev.bookmakers.find((x) => x.key === 'fanduel')!.markets.map((m) => m.key), ['h2h'], 'fanduel: h2h only');
  const other = await get(`/v1/sports/basketball_nba/events/${b.id}/odds?markets=h2h,player_points&bookmakers=draftkings,fanduel`);
  t.equal((other.body as OddsEvent).id, b.id, 'another event with the same parameters is that event (not a cached body)');
  const v4 = await get(`/v4/sports/basketball_nba/events/${a.id}/odds?markets=h2h,player_points&bookmakers=draftkings,fanduel`);
  t.same(v4.body, body, '/v4 alias: the same body');
  const american = await get(`/v1/sports/basketball_nba/events/${a.id}/odds?markets=h2h&bookmakers=draftkings&oddsFormat=american`);
  t.same((american.body as OddsEvent).bookmakers[0].markets[0].outcomes.map((o) => o.price), [-200, 175], 'oddsFormat=american');
});

t.test('event odds - unknown event, an event of another sport, unknown sport, bad parameters', async (t) => {
  const missing = await get('/v1/sports/basketball_nba/events/nope/odds');
  t.same([missing.res.status, missing.body.error_code], [404, 'EVENT_NOT_FOUND'], 'unknown event id: 404 EVENT_NOT_FOUND');
  t.equal(missing.res.headers.get('x-requests-last'), '0', 'not charged');
  const elsewhere = await get(`/v1/sports/basketball_nba/events/${nhl.id}/odds`);
  t.same([elsewhere.res.status, elsewhere.body.error_code], [404, 'EVENT_NOT_FOUND'], 'an NHL event under basketball_nba: 404');
  const umbrella = await get(`/v1/sports/icehockey_nhl/events/${nhl.id}/odds`);
  t.equal(umbrella.res.status, 200, 'under its own sport: 200');
  const sport = await get(`/v1/sports/curling_xyz/events/${a.id}/odds`);
  t.same([sport.res.status, sport.body.error_code], [404, 'UNKNOWN_SPORT'], 'unknown sport: 404');
  const market = await get(`/v1/sports/basketball_nba/events/${a.id}/odds?markets=h2h,player_nonsense`);
  t.same([market.res.status, market.body.detail?.[0]?.loc], [422, ['query', 'markets']], 'an unknown market: 422 on markets');
  const region = await get(`/v1/sports/basketball_nba/events/${a.id}/odds?regions=mars`);
  t.equal(region.res.status, 422, 'an unknown region: 422');
  const noKey = await app.get(`/v1/sports/basketball_nba/events/${a.id}/odds`);
  t.equal(noKey.status, 401, 'a key is needed');
});

t.test('upcoming - the v4 sport key: games in play and the next 8 to start, across sports', async (t) => {
  const t0 = Date.now();
  const live = { id: 'up_live', sport_key: 'icehockey_nhl', commence_time: t0 - 60_000, home_team: 'Boston Bruins', away_team: 'Toronto Maple Leafs' };
  const later = Array.from({ length: 9 }, (_, i) => ({
    id: `up_${i}`, sport_key: i % 2 === 0 ? 'baseball_mlb' : 'americanfootball_nfl', commence_time: t0 + 600_000 + i * 60_000,
    home_team: `Home ${i}`, away_team: `Away ${i}`,
  }));
  const r = await app.ingest({ events: [live, ...later], prices: [live, ...later].flatMap((e) => h2h('betmgm', e as typeof a, 1.9, 1.95)) });
  t.same(r.json.rejected, [], 'accepted');
  const { res, body } = await get('/v1/sports/upcoming/odds?bookmakers=betmgm');
  t.equal(res.status, 200, '200');
  t.equal(res.headers.get('x-requests-last'), '1', 'credits as /odds: 1 market x 1 region');
  const ids = (body as OddsEvent[]).map((e) => e.id);
  // in play: up_live; then by start: up_0 (10 min) ... and the fixture's games an hour and more away
  t.same(ids, ['up_live', 'up_0', 'up_1', 'up_2', 'up_3', 'up_4', 'up_5', 'up_6', 'up_7'], 'the game in play, then the next 8 to start (the ninth and the fixture\'s later games are left out)');
  t.same((body as OddsEvent[])[0].bookmakers.map((b) => b.key), ['betmgm'], 'the in-play game with its in-play prices');
  const v4 = await get('/v4/sports/upcoming/odds?bookmakers=betmgm');
  t.same(v4.body, body, '/v4 alias');
});

t.test('event odds - props read as /props reads them: one spelling per player, DFS at the midpoint, the 60-minute window', async (t) => {
  const now2 = Date.now();
  const r = await app.ingest({ prices: [
    // an initial for the full name draftkings uses; a DFS pick'em board; a prop last written two hours ago
    ...prop('fanduel', a, 'player_points', 'J. Tatum', 27.5, 1.8, 2.0),
    ...prop('prizepicks', a, 'player_points', 'Jayson Tatum', 26.5, 1.9, 1.9),
    ...prop('betmgm', a, 'player_rebounds', 'Jaylen Brown', 8.5, 1.9, 1.9).map((x) => ({ ...x, ts: now2 - 7_200_000 })),
  ] });
  t.same(r.json.rejected, [], 'accepted');
  const { body } = await get(`/v1/sports/basketball_nba/events/${a.id}/odds?markets=player_points,player_rebounds&bookmakers=fanduel,prizepicks,betmgm,draftkings`);
  const byBook = new Map((body as OddsEvent).bookmakers.map((b) => [b.key, b]));
  const fd = byBook.get('fanduel')!.markets.find((m) => m.key === 'player_points')!;
  t.same(fd.outcomes.map((o) => o.description), ['Jayson Tatum', 'Jayson Tatum'], 'J. Tatum is served as the event\'s Jayson Tatum, as /props does (regression: two spellings)');
  const pp = byBook.get('prizepicks')!.markets[0];
  t.same(pp.outcomes.map((o) => o.price), [2, 2], 'a DFS pick\'em leg at the midpoint 2.0, as /props\' default (regression: the board\'s 1.9 as a single-bet price)');
  t.notOk(byBook.has('betmgm'), 'a prop written two hours ago is past the 60-minute window, as on /props (regression: served)');
  const props = (await get(`/v1/sports/basketball_nba/props?eventId=${a.id}&markets=player_points&bookmakers=fanduel&oddsFormat=decimal`)).body as { player: string; over_price: number }[];
  t.same(props.map((x) => [x.player, x.over_price]), [['Jayson Tatum', 1.8]], '/props agrees');
});

t.test('upcoming - a game started more than 6 hours ago and never made final is no longer in play', async (t) => {
  const old = { id: 'up_old', sport_key: 'icehockey_nhl', commence_time: Date.now() - 48 * 3_600_000, home_team: 'Ottawa Senators', away_team: 'Detroit Red Wings' };
  await app.ingest({ events: [old], prices: h2h('betmgm', old as typeof a, 1.9, 1.95) });
  const ids = ((await get('/v1/sports/upcoming/odds?bookmakers=betmgm')).body as OddsEvent[]).map((e) => e.id);
  t.notOk(ids.includes('up_old'), 'left out (as /live leaves it by default; regression: first in the list forever)');
});

t.test('event odds - regions leave out DFS pick\'em boards; named in bookmakers they are served', async (t) => {
  // regression (v4 compatibility audit): regions=us served PrizePicks' and Underdog's props at 2.0 on both sides, a
  // price no one can take as a single bet, which a best-price bot read as +100 Over and Under
  const a = { id: 'eo_dfs', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  await app.ingest({ events: [a], prices: [
    ...prop('prizepicks', a, 'player_points', 'Jayson Tatum', 26.5, 1.9, 1.9),
    ...prop('fanduel', a, 'player_points', 'Jayson Tatum', 26.5, 1.87, 1.95),
  ] });
  const region = await get(`/v1/sports/basketball_nba/events/${a.id}/odds?markets=player_points&regions=us`);
  t.same(region.body.bookmakers.map((b: { key: string }) => b.key), ['fanduel'], 'regions=us: the sportsbook, no DFS board');
  const named = await get(`/v1/sports/basketball_nba/events/${a.id}/odds?markets=player_points&bookmakers=fanduel,prizepicks`);
  t.same(named.body.bookmakers.map((b: { key: string }) => b.key).sort(), ['fanduel', 'prizepicks'], 'named: served');
});
