import t from 'tap';
import { startTestApp } from './helpers/app.js';

type Row = Record<string, unknown>;

t.test('futures and event markets through POST /v1/ingest', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const champ = { id: 'fut_nba_2027', sport_key: 'basketball_nba', commence_time: now + 20 * 86_400_000, kind: 'futures', title: 'NBA Championship 2026-27' };
  // a season already under way: a future keeps trading
  const mvp = { id: 'fut_nba_mvp', sport_key: 'basketball_nba', commence_time: now - 10 * 86_400_000, kind: 'futures', title: 'NBA MVP 2025-26' };
  const cup = { id: 'em_nba_cup', sport_key: 'basketball_nba', commence_time: now + 5 * 86_400_000, kind: 'event_market', title: 'NBA Cup 2026' };
  const game = { id: 'fut_game_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'New York Knicks' };
  const out = (book: string, e: { id: string }, outcome: string, price: number, player?: string) =>
    ({ book, event_id: e.id, market: 'outrights', outcome, price, ...(player === undefined ? {} : { player }) });
  const r = await app.ingest({ events: [champ, mvp, cup, game], prices: [
    out('draftkings', champ, 'Boston Celtics', 5.0),
    out('fanduel', champ, 'Boston Celtics', 4.2),
    out('draftkings', champ, 'Oklahoma City Thunder', 3.6),
    // Kalshi's two contracts on the Celtics: Yes at 23 cents, No at 78 cents
    out('kalshi', champ, 'Yes', 1 / 0.23, 'Boston Celtics'),
    out('kalshi', champ, 'No', 1 / 0.78, 'Boston Celtics'),
    out('fanduel', mvp, 'Nikola Jokic', 2.5),
    out('betmgm', cup, 'Oklahoma City Thunder', 4.0),
    { book: 'draftkings', event_id: game.id, market: 'h2h', outcome: 'Boston Celtics', price: 1.6 },
    { book: 'draftkings', event_id: game.id, market: 'h2h', outcome: 'New York Knicks', price: 2.45 },
    { book: 'draftkings', event_id: game.id, market: 'player_points', player: 'Jalen Brunson', point: 27.5, outcome: 'Over', price: 1.9 },
    { book: 'draftkings', event_id: game.id, market: 'player_points', player: 'Jalen Brunson', point: 27.5, outcome: 'Under', price: 1.9 },
    // refused one by one
    { book: 'draftkings', event_id: champ.id, market: 'h2h', outcome: 'Boston Celtics', price: 1.9 },
    out('draftkings', game, 'Boston Celtics', 1.6),
    out('kalshi', champ, 'Yes', 1.5),
    { ...out('draftkings', champ, 'Boston Celtics', 4.5), point: 1 },
  ] });
  t.equal(r.status, 202, '202');
  t.same([r.json.events, r.json.accepted], [4, 11], 'four events and eleven prices applied');
  t.same(r.json.rejected.map((x: Row) => `${x.index}:${x.error_code}`),
    ['11:MARKET_NOT_OFFERED', '12:MARKET_NOT_OFFERED', '13:INVALID_OUTCOME', '14:INVALID_POINT'], 'bad items refused one by one');
  const bad = await app.ingest({ events: [
    { id: 'fut_bad_1', sport_key: 'basketball_nba', commence_time: now, kind: 'futures' },
    { id: 'fut_bad_2', sport_key: 'basketball_nba', commence_time: now, kind: 'futures', title: 'x', home_team: 'A' },
    { id: 'fut_bad_3', sport_key: 'basketball_nba', commence_time: now, kind: 'season', title: 'x' },
    { ...champ, kind: undefined, home_team: 'A', away_team: 'B', title: undefined },
  ] });
  t.same(bad.json.rejected_events.map((x: Row) => `${x.index}:${x.error_code}`),
    ['0:INVALID_EVENT', '1:INVALID_EVENT', '2:INVALID_EVENT', '3:INVALID_EVENT'], 'no title, teams on a future, unknown kind, a future turned game');

  const props = async (q: string) => {
    const res = await app.get(`/v1/sports/basketball_nba/props?apiKey=${key}${q}`);
    return { res, body: (await res.json()) as Row[] };
  };
  const ids = (rows: Row[]) => [...new Set(rows.map((x) => x.event_id))];

  t.test('/props: futures and event markets only when asked', async (t) => {
    t.same(ids((await props('')).body), [game.id], 'by default: games only');
    t.same(ids((await props('&include_futures=true')).body), [mvp.id, game.id, champ.id],
      'include_futures: the season-long futures too, not the event market');
    const all = await props('&include_event_markets=true');
    t.same(ids(all.body).sort(), [champ.id, cup.id, game.id, mvp.id].sort(), 'include_event_markets: futures and event markets');
    t.same(ids((await props('&include_event_markets=true&include_futures=false')).body).sort(), [champ.id, cup.id, game.id, mvp.id].sort(),
      'event markets include futures (SPEC)');
    t.same(ids((await props('&bookmakers=kalshi')).body), [champ.id], 'auto-enabled when bookmakers names a prediction-market book');
    t.same((await props('&bookmakers=kalshi&include_event_markets=false')).body, [], 'an explicit false still wins');
    t.same(ids((await props('&bookmakers=kalshi&include_event_markets=false&include_futures=true')).body), [champ.id], 'futures alone');
    t.same(ids((await props('&bookmakers=draftkings,betmgm')).body), [game.id], 'no prediction book: not auto-enabled');
    t.same(ids((await props('&markets=outrights')).body), [], 'markets=outrights alone does not enable futures');
    for (const q of ['&include_futures=maybe', '&include_event_markets=2', '&markets=outright']) {
      const { res } = await props(q);
      t.equal(res.status, 422, `${q}: 422`);
      const err = (await (await app.get(`/v1/sports/basketball_nba/props?apiKey=${key}${q}`)).json()) as { error_code: string; detail: { loc: string[] }[] };
      t.equal(err.error_code, 'VALIDATION_ERROR', `${q}: validation error body`);
      t.equal(err.detail[0].loc[1], q.slice(1, q.indexOf('=')), `${q}: names the parameter`);
    }
  });

  t.test('/props: outright rows have no teams, a title, the selection as player, no line, Yes and No', async (t) => {
    const { body } = await props('&include_futures=true&markets=outrights&eventId=fut_nba_2027&oddsFormat=decimal');
    t.same(body.map((x) => `${x.player}:${x.bookmaker}`), [
      'Boston Celtics:draftkings', 'Boston Celtics:fanduel', 'Boston Celtics:kalshi', 'Oklahoma City Thunder:draftkings',
    ], 'one row per book and selection');
    for (const row of body) {
      t.notOk('home_team' in row || 'away_team' in row, `${row.player}@${row.bookmaker}: home_team and away_team absent`);
      t.equal(row.event_title, 'NBA Championship 2026-27', 'the title instead');
      t.equal(row.line, null, 'no line');
      t.same([row.market_key, row.market_label], ['outrights', 'Outright Winner'], 'market');
    }
    t.same([body[0].over_price, body[0].under_price], [5, null], 'a sportsbook: Yes only, No null (never made up)');
    t.same([body[2].over_price, body[2].under_price], [1 / 0.23, 1 / 0.78], 'kalshi: Yes and No contracts');
    const american = await props('&include_futures=true&markets=outrights&eventId=fut_nba_2027&bookmakers=draftkings');
    t.same(american.body.map((x) => x.over_price), [400, 260], 'American by default');
    const grouped = await props('&include_futures=true&markets=outrights&eventId=fut_nba_2027&grouped=true');
    t.same(grouped.body.map((g) => `${g.player}:${(g.books as Row[]).length}`), ['Boston Celtics:3', 'Oklahoma City Thunder:1'], 'grouped per selection');
    t.equal(grouped.body[0].line, null, 'grouped: no line');
    t.notOk('home_team' in grouped.body[0], 'grouped: no teams');
    const g = (await props('')).body[0];
    t.same([g.home_team, g.away_team, 'event_title' in g], ['Boston Celtics', 'New York Knicks', false], 'game rows unchanged');
  });

  t.test('game-line endpoints leave futures and event markets out; /events lists them, and their event odds are served', async (t) => {
    const odds = (await (await app.get(`/v1/sports/basketball_nba/odds?apiKey=${key}&include_live=true`)).json()) as Row[];
    t.same(odds.map((e) => e.id), [game.id], '/odds');
    // every event /odds?markets=outrights serves is listed (regression: they were not, and their event odds were 404,
    // so a v4 client listing a futures sport's events found none to ask for)
    const events = (await (await app.get('/v1/sports/basketball_nba/events')).json()) as Row[];
    t.same(events.map((e) => e.id), [mvp.id, game.id, cup.id, champ.id], '/events: games, futures and event markets, in start order');
    const c = events.find((e) => e.id === champ.id)!;
    t.same([c.home_team, c.away_team, c.event_title], [null, null, champ.title], 'a future: teams null, its title');
    const gm = events.find((e) => e.id === game.id)!;
    t.same([gm.home_team, gm.away_team, 'event_title' in gm], [game.home_team, game.away_team, false], 'a game as before');
    const one = await app.get(`/v4/sports/basketball_nba/events/${champ.id}/odds?apiKey=${key}&regions=us&markets=outrights&oddsFormat=decimal`);
    t.equal(one.status, 200, 'event odds of a future: 200');
    const doc = (await one.json()) as Row;
    t.same([doc.id, doc.home_team, doc.event_title], [champ.id, null, champ.title], 'the future');
    t.ok((doc.bookmakers as Row[]).some((b) => b.key === 'draftkings'), 'with its books\' outrights');
    const none = await app.get(`/v4/sports/basketball_nba/events/${champ.id}/odds?apiKey=${key}&regions=us&markets=h2h`);
    t.same([none.status, ((await none.json()) as Row).bookmakers], [200, []], 'a market it has not: the event, no books');
    const gameOutrights = await app.get(`/v4/sports/basketball_nba/events/${game.id}/odds?apiKey=${key}&regions=us&markets=outrights`);
    t.same([gameOutrights.status, ((await gameOutrights.json()) as Row).id], [200, game.id], 'a game asked for outrights: the game, not an empty body');
    const live = (await (await app.get(`/v1/sports/basketball_nba/live?apiKey=${key}`)).json()) as Row[];
    t.same(live.map((e) => e.id), [], '/live: the started season is not an in-play game');
  });

  t.test('/v1/prediction-markets lists contracts on futures', async (t) => {
    const rows = (await (await app.get(`/v1/prediction-markets/basketball_nba?apiKey=${key}`)).json()) as Row[];
    t.same(rows.map((x) => `${x.event_id}:${x.selection}:${x.outcome}`), [
      'fut_nba_2027:Boston Celtics:No', 'fut_nba_2027:Boston Celtics:Yes',
    ], 'the Yes and No contracts on the Celtics');
    for (const row of rows) {
      t.notOk('home_team' in row || 'away_team' in row, 'no teams');
      t.same([row.event_title, row.market, row.player, row.point], ['NBA Championship 2026-27', 'outrights', null, null], 'title, market, no player, no point');
    }
    t.equal(rows[1].implied_prob, 0.23, 'a 23-cent Yes implies 0.23');
  });

  t.test('analytics: the Yes/No pair of one selection is a two-way line; nothing mixes with game lines', async (t) => {
    // DraftKings' Celtics at 5.0 (20 %) against Kalshi's No at 78 cents, which costs 0.78 + 0.07 * 0.78 * 0.22 =
    // 0.792012 with Kalshi's fee: 99.2 %, a real arbitrage (0.805 %; 2.04 % at the raw 78 cents)
    const arbs = (await (await app.get(`/v1/sports/basketball_nba/arbitrage?apiKey=${key}&include_live=true`)).json()) as Row[];
    t.equal(arbs.length, 1, 'one arbitrage');
    t.same([arbs[0].event_id, arbs[0].market, arbs[0].player, arbs[0].point], [champ.id, 'outrights', 'Boston Celtics', null], 'on the Celtics selection');
    const legs = arbs[0].legs as Row[];
    t.same(legs.map((l) => l.book), ['draftkings', 'kalshi'], 'DraftKings Yes, Kalshi No');
    t.ok(Math.abs((arbs[0].profit_pct as number) - (1 / (1 / 5 + 0.78 * (1 + 0.07 * 0.22)) - 1) * 100) < 1e-9, 'profit from the two prices, Kalshi\'s after its fee');
    const mids = (await (await app.get(`/v1/sports/basketball_nba/middles?apiKey=${key}&include_live=true&min_gap=0`)).json()) as Row[];
    t.same(mids, [], 'a selection has no line: no middles');
  });

  t.test('/arbitrage: an outright arbitrage names the event by its title and the sides Yes and No', async (t) => {
    // draftkings pays 5.00 on the Celtics (Yes, implied 0.20) and Kalshi's No costs 78 cents (implied 0.78):
    // 0.20 + 0.78 = 0.98 < 1
    const res = await app.get(`/v1/sports/basketball_nba/arbitrage?apiKey=${key}`);
    const rows = ((await res.json()) as Row[]).filter((x) => x.event_id === champ.id);
    t.equal(rows.length, 1, 'one arbitrage on the championship');
    const row = rows[0];
    t.equal(row.event_title, champ.title, 'event_title');
    t.notOk('home_team' in row || 'away_team' in row, 'no home_team or away_team on a future (SPEC)');
    t.equal(row.player, 'Boston Celtics', 'the selection');
    const legs = row.legs as Row[];
    t.same(legs.map((l) => `${l.book}:${l.outcome}`).sort(), ['draftkings:Yes', 'kalshi:No'], 'legs are Yes and No');
  });

  t.test('/odds?markets=outrights: the futures and event markets, each book\'s price on every selection, teams null (v4)', async (t) => {
    const odds = async (q: string) => {
      const res = await app.get(`/v1/sports/basketball_nba/odds?apiKey=${key}&regions=us&oddsFormat=decimal${q}`);
      return { res, body: (await res.json()) as Row[] };
    };
    const { res, body } = await odds('&markets=outrights');
    t.equal(res.status, 200, '200');
    t.equal(res.headers.get('x-requests-last'), '1', 'one market, one region: 1 credit');
    t.same(body.map((e) => e.id), [mvp.id, cup.id, champ.id], 'the futures and the event market, in start order; no game');
    const c = body.find((e) => e.id === champ.id)!;
    t.same([c.home_team, c.away_team, c.event_title, c.sport_key], [null, null, champ.title, 'basketball_nba'], 'no teams, the title');
    const books = c.bookmakers as { key: string; markets: { key: string; outcomes: Row[] }[] }[];
    const by = (k: string) => books.find((b) => b.key === k)?.markets[0];
    t.same(by('draftkings')?.outcomes, [{ name: 'Oklahoma City Thunder', price: 3.6 }, { name: 'Boston Celtics', price: 5 }], 'draftkings: every selection to win, favourite first');
    t.same(by('fanduel')?.outcomes, [{ name: 'Boston Celtics', price: 4.2 }], 'fanduel: its one selection');
    t.same(by('kalshi')?.outcomes, [{ name: 'Boston Celtics', price: 1 / 0.23 }], 'kalshi: the Yes contract is the price on the selection (its No is not)');
    t.equal(by('draftkings')?.key, 'outrights', 'market key outrights');
    const both = await odds('&markets=h2h,outrights');
    t.same(both.body.map((e) => e.id).sort(), [champ.id, cup.id, game.id, mvp.id].sort(), 'with h2h: the game too');
    t.equal(both.res.headers.get('x-requests-last'), '2', 'two markets: 2 credits');
    t.same((await odds('')).body.map((e) => e.id), [game.id], 'the default (h2h) lists games only, as before');
    t.same((await odds('&markets=outrights&live=true')).body.map((e) => e.id), [], 'live=true: a season-long future is not a game in play (the MVP future started ten days ago)');
    // a moved price is served at once (the kept documents follow outright quotes too)
    await app.ingest({ prices: [out('draftkings', champ, 'Boston Celtics', 5.5)] });
    const moved = (await odds('&markets=outrights&bookmakers=draftkings')).body.find((e) => e.id === champ.id)!;
    t.same(((moved.bookmakers as { markets: { outcomes: Row[] }[] }[])[0].markets[0].outcomes), [{ name: 'Oklahoma City Thunder', price: 3.6 }, { name: 'Boston Celtics', price: 5.5 }], 'draftkings moved the Celtics to 5.5');
    await app.ingest({ prices: [out('draftkings', champ, 'Boston Celtics', 5.0)] });
    // v4's futures sport of the league: its odds without markets are its outrights
    const title = { id: 'fut_nba_title', sport_key: 'basketball_nba_championship_winner', commence_time: now + 30 * 86_400_000, kind: 'futures', title: 'NBA Championship Winner' };
    const r2 = await app.ingest({ events: [title], prices: [out('fanduel', title, 'Denver Nuggets', 7.5)] });
    t.equal(r2.json.accepted, 1, 'a futures event of the futures sport');
    for (const path of ['/v1/sports/basketball_nba_championship_winner/odds', '/v4/sports/basketball_nba_championship_winner/odds']) {
      const f = await app.get(`${path}?apiKey=${key}&regions=us&oddsFormat=decimal`);
      const rows = (await f.json()) as Row[];
      t.same([f.status, rows.map((e) => e.id), ((rows[0]?.bookmakers as { markets: { key: string; outcomes: Row[] }[] }[])?.[0]?.markets[0])],
        [200, ['fut_nba_title'], { key: 'outrights', last_update: ((rows[0]?.bookmakers as { markets: { last_update: string }[] }[])?.[0]?.markets[0]?.last_update), outcomes: [{ name: 'Denver Nuggets', price: 7.5 }] }],
        `${path} without markets: its outrights`);
    }
  });

  t.test('/consensus: a selection quoted Yes alone has a row of its Yes side and no hold', async (t) => {
    const rows = async (q = '') => ((await (await app.get(`/v1/sports/basketball_nba/consensus?apiKey=${key}&markets=outrights${q}`)).json()) as Row[])
      .filter((x) => x.event_id === champ.id);
    const close = (a: unknown, b: number) => typeof a === 'number' && Math.abs(a - b) < 1e-9;
    const sportsbooks = await rows();
    t.same(sportsbooks.map((x) => x.player), ['Boston Celtics', 'Oklahoma City Thunder'], 'a row per selection (prediction markets left out by default)');
    const celtics = sportsbooks[0];
    const yes = (celtics.outcomes as Row[]);
    t.same(yes.map((o) => [o.name, o.best_book, o.best_price, o.worst_book, o.worst_price, o.books]), [['Yes', 'draftkings', 5, 'fanduel', 4.2, 2]],
      'Celtics: the Yes side alone, best draftkings 5.0, worst fanduel 4.2');
    // mean of 1/5 and 1/4.2: (0.2 + 0.2380952381) / 2 = 0.2190476190; its inverse 4.5652173913
    t.ok(close(yes[0].consensus_prob, 0.219047619048) && close(yes[0].consensus_odds, 4.56521739130), 'consensus 0.2190476 (4.5652)');
    t.same([celtics.hold_pct, celtics.books], [null, 2], 'no hold on a lone side; two books');
    t.same((sportsbooks[1].outcomes as Row[]).map((o) => [o.name, o.consensus_odds]), [['Yes', 3.6]], 'Thunder: draftkings 3.6 alone');
    // with Kalshi: Yes (0.2 + 0.2380952 + 0.23) / 3 = 0.2226984, No 0.78; hold (0.2226984 + 0.78 - 1) * 100 = 0.26984 %
    const both = (await rows('&include_prediction_markets=true'))[0];
    t.same((both.outcomes as Row[]).map((o) => o.name), ['Yes', 'No'], 'with the prediction markets: both sides');
    t.ok(close(both.hold_pct, (0.2 / 3 + 0.238095238095 / 3 + 0.23 / 3 + 0.78 - 1) * 100), 'and a hold of 0.27 %');
  });

  t.test('a venue\'s own Yes and No summing below 0.98 is held back everywhere, as an inconsistent moneyline is', async (t) => {
    // Kalshi's Thunder: Yes at 12 cents, No at 80 cents (0.92): an arbitrage against itself, a feed error
    const thunder = (yes: number, no: number) => [out('kalshi', champ, 'Yes', 1 / yes, 'Oklahoma City Thunder'), out('kalshi', champ, 'No', 1 / no, 'Oklahoma City Thunder')];
    await app.ingest({ prices: thunder(0.12, 0.8) });
    const arbs = (await (await app.get(`/v1/sports/basketball_nba/arbitrage?apiKey=${key}&include_live=true`)).json()) as Row[];
    t.notOk(arbs.some((a) => a.player === 'Oklahoma City Thunder'), 'no arbitrage of one venue against itself');
    const pm = (await (await app.get(`/v1/prediction-markets/basketball_nba?apiKey=${key}`)).json()) as Row[];
    t.notOk(pm.some((x) => x.selection === 'Oklahoma City Thunder'), '/v1/prediction-markets holds the pair back');
    const ev = (await (await app.get(`/v1/sports/basketball_nba/ev?apiKey=${key}&include_live=true&sharpBook=pinnacle&minEdge=0`)).json()) as Row[];
    t.notOk(ev.some((x) => x.player === 'Oklahoma City Thunder' && x.book === 'kalshi'), 'nor an EV row');
    const kalshiThunder = async () => ((await props('&include_futures=true&bookmakers=kalshi&oddsFormat=decimal')).body).filter((x) => x.player === 'Oklahoma City Thunder');
    t.same(await kalshiThunder(), [], '/props holds it back too (regression: it served the crossed pair)');
    // a consistent pair again: served
    await app.ingest({ prices: thunder(0.25, 0.77) });
    const back = (await (await app.get(`/v1/prediction-markets/basketball_nba?apiKey=${key}`)).json()) as Row[];
    t.same(back.filter((x) => x.selection === 'Oklahoma City Thunder').map((x) => x.outcome).sort(), ['No', 'Yes'], 'a consistent pair is served');
    t.same((await kalshiThunder()).map((x) => [x.over_price, x.under_price]), [[4, 1 / 0.77]], 'and its /props row');
  });

  t.test('a started future is never in play; /live serves no event market (regression: /inplay/arbs listed the future\'s arbitrage, /live?markets=outrights answered 500)', async (t) => {
    const future = { id: 'fut_started', sport_key: 'basketball_nba', commence_time: now - 2 * 3_600_000, kind: 'futures', title: 'NBA Rookie of the Year 2025-26' };
    const market = { id: 'em_started', sport_key: 'basketball_nba', commence_time: now - 30 * 60_000, kind: 'event_market', title: 'NBA Cup final MVP' };
    // DraftKings' Yes at 3.0 (0.333) and Kalshi's No at 60 cents: 0.933 with Kalshi's fee of 0.07 * 0.6 * 0.4, an arbitrage
    const r = await app.ingest({ events: [future, market], prices: [
      out('draftkings', future, 'Cooper Flagg', 3.0), out('kalshi', future, 'No', 1 / 0.6, 'Cooper Flagg'),
      out('draftkings', market, 'Jayson Tatum', 2.5), out('kalshi', market, 'Yes', 1 / 0.38, 'Jayson Tatum'), out('kalshi', market, 'No', 1 / 0.64, 'Jayson Tatum'),
    ] });
    t.same(r.json.rejected, [], 'accepted');
    for (const q of ['markets=outrights', 'markets=h2h,outrights', 'markets=outrights&bookmakers=draftkings']) {
      const live = await app.get(`/v1/sports/basketball_nba/live?apiKey=${key}&${q}`);
      t.equal(live.status, 200, `/live?${q}: 200`);
      t.notOk(((await live.json()) as Row[]).some((e) => e.id === market.id || e.id === future.id), 'no event market or future');
    }
    const inplay = (await (await app.get(`/v1/inplay/arbs?apiKey=${key}`)).json()) as Row[];
    t.notOk(inplay.some((a) => a.event_id === future.id), '/v1/inplay/arbs: the future is not in play');
    const arbs = (await (await app.get(`/v1/sports/basketball_nba/arbitrage?apiKey=${key}`)).json()) as Row[];
    const f = arbs.find((a) => a.event_id === future.id);
    t.ok(f, '/arbitrage without include_live: the future\'s arbitrage, as /odds and /props serve the future pregame');
    t.equal(f?.is_live, false, 'is_live false');
    await app.ingest({ events: [{ ...future, status: 'final' }, { ...market, status: 'final' }] });
  });
});
