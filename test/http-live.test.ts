import t from 'tap';
import { startTestApp } from './helpers/app.js';

type Ev = { id: string; probable_pitchers?: unknown; bookmakers: { key: string; markets: { key: string; outcomes: { name: string; price: number; point?: number; description?: string }[] }[] }[] };

t.test('live and probable pitchers', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const started = { id: 'lv_1', sport_key: 'basketball_nba', commence_time: now - 3_600_000, home_team: 'Denver Nuggets', away_team: 'Utah Jazz' };
  const old = { id: 'lv_old', sport_key: 'basketball_nba', commence_time: now - 8 * 3_600_000, home_team: 'Phoenix Suns', away_team: 'Dallas Mavericks' };
  const later = { id: 'lv_2', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Orlando Magic', away_team: 'Detroit Pistons' };
  const mlb = {
    id: 'pp_1', sport_key: 'baseball_mlb', commence_time: now + 7_200_000, home_team: 'New York Yankees', away_team: 'Boston Red Sox',
    probable_pitchers: { home: { name: 'Gerrit Cole', person_id: 'p-cole' }, away: null, venue: 'Yankee Stadium', game_status: 'Scheduled' },
  };
  const h2h = (e: { id: string; home_team: string; away_team: string }, book: string, a: number, b: number) => [
    { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: a },
    { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: b },
  ];
  const r = await app.ingest({ events: [started, old, later, mlb], prices: [
    ...h2h(started, 'draftkings', 1.5, 2.6), ...h2h(old, 'draftkings', 1.5, 2.6), ...h2h(later, 'draftkings', 1.9, 1.9),
    { book: 'draftkings', event_id: started.id, market: 'player_points', player: 'Nikola Jokic', point: 27.5, outcome: 'Over', price: 1.91 },
  ] });
  t.equal(r.json.accepted, 7, 'fixture accepted');

  t.test('/live: in-play events within max_age_hours, American by default, props merged, cost 3', async (t) => {
    const res = await app.get(`/v1/sports/basketball_nba/live?apiKey=${key}`);
    t.equal(res.status, 200, '200');
    t.equal(res.headers.get('x-requests-last'), '3', 'costs 3');
    const body = (await res.json()) as Ev[];
    t.same(body.map((e) => e.id), ['lv_1'], 'only the event started within 6 hours (not the 8-hour-old one, not the pregame one)');
    const markets = body[0].bookmakers[0].markets;
    t.same(markets.find((m) => m.key === 'h2h')!.outcomes.map((o) => o.price), [-200, 160], 'American prices: 1.5 is -200, 2.6 is +160');
    t.same(markets.find((m) => m.key === 'player_points')!.outcomes, [{ name: 'Over', price: -110, point: 27.5, description: 'Nikola Jokic' }],
      'the live prop merged in, with its player as description and no made-up Under');
    const wide = (await (await app.get(`/v1/sports/basketball_nba/live?apiKey=${key}&max_age_hours=9`)).json()) as Ev[];
    t.same(wide.map((e) => e.id), ['lv_old', 'lv_1'], 'max_age_hours=9 reaches the older game');
    for (const q of ['max_age_hours=0.4', 'max_age_hours=25', 'oddsFormat=x', 'regions=zz']) {
      const bad = await app.get(`/v1/sports/basketball_nba/live?apiKey=${key}&${q}`);
      t.equal(bad.status, 422, `${q}: 422`);
    }
  });

  t.test('/probable-pitchers and probable_pitchers on baseball odds', async (t) => {
    const res = await app.get(`/v1/sports/baseball_mlb/probable-pitchers?apiKey=${key}`);
    t.equal(res.status, 200, '200');
    const rows = (await res.json()) as { event_id: string; probable_pitchers: unknown }[];
    t.same(rows, [{
      event_id: 'pp_1', sport_key: 'baseball_mlb', commence_time: new Date(mlb.commence_time).toISOString().slice(0, 19) + 'Z',
      home_team: 'New York Yankees', away_team: 'Boston Red Sox', probable_pitchers: mlb.probable_pitchers,
    }], 'the announced pitchers');
    t.equal((await app.get(`/v1/sports/basketball_nba/probable-pitchers?apiKey=${key}`)).status, 404, 'not a baseball sport: 404');
    await app.ingest({ prices: h2h(mlb, 'fanduel', 1.8, 2.05) });
    const odds = (await (await app.get(`/v1/sports/baseball_mlb/odds?apiKey=${key}`)).json()) as Ev[];
    t.same(odds[0].probable_pitchers, mlb.probable_pitchers, 'on the odds endpoint too');
    const bad = await app.ingest({ events: [{ ...later, probable_pitchers: mlb.probable_pitchers }] });
    t.equal(bad.json.rejected_events[0]?.error_code, 'INVALID_EVENT', 'pitchers on a basketball event are refused');
  });
});

t.test('prediction markets', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const ev = { id: 'pm_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'New York Knicks' };
  await app.ingest({ events: [ev], prices: [
    // 72 and 29 cents: 1.01, a consistent pair (an inconsistent one is held back, as from /odds)
    { book: 'kalshi', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1 / 0.72 },
    // a 29-cent contract as a feed may send it: its inverse is 0.29000000000000004 in doubles
    { book: 'kalshi', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 3.4482758620689653 },
    { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.8 },
  ] });
  const res = await app.get(`/v1/prediction-markets/basketball_nba?apiKey=${key}`);
  t.equal(res.status, 200, '200');
  t.equal(res.headers.get('x-requests-last'), '3', 'costs 3');
  const rows = (await res.json()) as { book: string; outcome: string; implied_prob: number; price_american: number }[];
  t.same(rows.map((r) => r.book), ['kalshi', 'kalshi'], 'prediction-market books only');
  const home = rows.find((r) => r.outcome === 'Boston Celtics')!;
  t.ok(Math.abs(home.implied_prob - 0.72) < 1e-12, 'a 72-cent contract implies 0.72');
  t.equal(rows.find((r) => r.outcome === 'New York Knicks')!.implied_prob, 0.29, 'served tidied: 0.29, not 0.29000000000000004');
  t.equal(home.price_american, -257, '1/0.72 = 1.3889 is -257 (100 / 0.3889 = 257.1)');
});
