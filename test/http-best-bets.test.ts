import t from 'tap';
import { bestBetsBody, type BestBetsQuery } from '../engine/best-bets-body.js';
import { BOOKMAKERS } from '../engine/catalogue.js';
import { ReadModel } from '../engine/read-model.js';
import { median, medianWithout } from '../engine/verdict-best-bets.js';
import { startTestApp } from './helpers/app.js';

type Json = Record<string, any>;

/** multiplicative no-vig probability of side i of a set of decimal prices */
const noVig = (prices: number[], i: number) => (1 / prices[i]) / prices.reduce((s, d) => s + 1 / d, 0);

t.test('best bets', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const auth = { 'x-api-key': key };
  const now = Date.now();
  const b1 = { id: 'bb_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const b2 = { id: 'bb_2', sport_key: 'basketball_nba', commence_time: now + 7_200_000, home_team: 'Denver Nuggets', away_team: 'Utah Jazz' };
  const b3 = { id: 'bb_3', sport_key: 'basketball_nba', commence_time: now - 600_000, home_team: 'Phoenix Suns', away_team: 'Dallas Mavericks' };
  const h2h = (e: typeof b1, book: string, home: number, away: number) => [
    { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: home },
    { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: away },
  ];
  const ou = (e: typeof b1, book: string, market: string, point: number, over: number, under: number, extra: Json = {}) => [
    { book, event_id: e.id, market, outcome: 'Over', point, price: over, ...extra },
    { book, event_id: e.id, market, outcome: 'Under', point, price: under, ...extra },
  ];
  const tatum = (book: string, name: string, over: number, under: number) => ou(b1, book, 'player_points', 27.5, over, under, { player: name });
  const r = await app.ingest({ events: [b1, b2, b3], prices: [
    // b1 moneyline: pinnacle fair 0.5 / 0.5; home best at the US books draftkings 2.10
    ...h2h(b1, 'pinnacle', 1.952, 1.952), ...h2h(b1, 'draftkings', 2.10, 1.80), ...h2h(b1, 'fanduel', 2.05, 1.83),
    ...h2h(b1, 'betmgm', 1.95, 1.90), ...h2h(b1, 'williamhill_us', 1.91, 1.91),
    // b1 total 220.5: espnbet left its line behind 100 s ago at Over 2.60 / Under 1.50
    ...ou(b1, 'espnbet', 'totals', 220.5, 2.60, 1.50, { ts: now - 100_000 }),
    ...ou(b1, 'pinnacle', 'totals', 220.5, 1.952, 1.952), ...ou(b1, 'draftkings', 'totals', 220.5, 1.91, 1.91),
    ...ou(b1, 'fanduel', 'totals', 220.5, 1.95, 1.87), ...ou(b1, 'betmgm', 'totals', 220.5, 2.00, 1.80),
    // b1 Tatum points: fanduel writes "J. Tatum"; prizepicks (DFS pick'em) is never a bet
    ...tatum('pinnacle', 'Jayson Tatum', 1.952, 1.952), ...tatum('draftkings', 'Jayson Tatum', 1.91, 1.91),
    ...tatum('fanduel', 'J. Tatum', 2.08, 1.80), ...tatum('betmgm', 'Jayson Tatum', 1.90, 1.90), ...tatum('prizepicks', 'Jayson Tatum', 3.0, 3.0),
    // b2 moneyline: pinnacle 1.8 / 2.1, home fair 7/13; four books
    ...h2h(b2, 'pinnacle', 1.8, 2.1), ...h2h(b2, 'draftkings', 1.94, 2.0), ...h2h(b2, 'fanduel', 2.0, 1.9), ...h2h(b2, 'betmgm', 1.85, 2.05),
    // b3 started 10 minutes ago
    ...h2h(b3, 'pinnacle', 1.952, 1.952), ...h2h(b3, 'draftkings', 2.16, 1.7), ...h2h(b3, 'fanduel', 2.0, 1.8), ...h2h(b3, 'betmgm', 1.9, 1.9),
  ] });
  t.equal(r.json.accepted, 46, 'fixture accepted');
  const get = async (q: string) => {
    const res = await app.get(`/v1/sports/basketball_nba/best-bets?${q}`, auth);
    return { res, body: (await res.json()) as Json };
  };
  const close = (a: number, b: number, what: string) => t.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} ~ ${b}`);
  const ids = (body: Json) => body.bets.map((b: Json) => `${b.event_id}:${b.market}:${b.side}:${b.book}`);

  t.test('every line graded, +EV at the caller\'s books kept, ranked by edge', async (t) => {
    const { res, body } = await get('min_books=4');
    t.equal(res.status, 200, '200');
    t.equal(res.headers.get('x-requests-last'), '10', 'costs 10');
    t.same(ids(body), [
      'bb_1:totals:Over:espnbet', // (0.5 * 2.60 - 1) * 100 = 30 %
      'bb_2:h2h:Denver Nuggets:fanduel', // (7/13 * 2.00 - 1) * 100 = 7.69 %
      'bb_1:h2h:Boston Celtics:draftkings', // (0.5 * 2.10 - 1) * 100 = 5 %
      'bb_1:player_points:Over:fanduel', // (0.5 * 2.08 - 1) * 100 = 4 %
    ], 'ranked by edge; sides below min_edge 2 % (e.g. every Under) left out; b3 has started');
    t.equal(body.bets[0].edge_pct, 30, 'edge of the stale Over: 30 (30.000000000000004 in doubles, served to 12 significant digits)');
    close(body.bets[1].edge_pct, (7 / 13 * 2 - 1) * 100, 'edge at 7/13');
    close(body.bets[1].fair_prob, 7 / 13, 'fair probability from pinnacle');
    t.equal(body.bets[1].kelly_fraction, 0.0384615384615, 'half Kelly (1/13) / 2 to 12 significant digits');
    t.same(body.bets.map((b: Json) => b.rank), [1, 2, 3, 4], 'ranks');
    t.same(body.bets.map((b: Json) => b.verdict), ['BET', 'BET', 'BET', 'BET'], 'verdicts');
    t.same(body.bets.map((b: Json) => b.books_compared), [5, 4, 5, 4], 'books with a fresh price on the side (pinnacle included, prizepicks not)');
    t.equal(body.bets[3].player, 'Jayson Tatum', '"J. Tatum" at fanduel is Jayson Tatum: one line');
    t.equal(body.bets[0].line, 220.5, 'line');
    t.same(body.bets.map((b: Json) => b.edge_alert), [true, false, false, false], 'the stale Over is also an edge alert');
    t.equal(body.scope.source, 'default', 'us books by default');
  });

  t.test('edge alerts: which book, how far from the consensus, and why', async (t) => {
    const { body } = await get('min_books=4');
    t.same(body.edge_alerts.map((a: Json) => `${a.book}:${a.market}:${a.side}:${a.direction}:${a.kind}`),
      ['espnbet:totals:Over:above:stale_line', 'espnbet:totals:Under:below:stale_line'], 'espnbet, both sides; nobody else');
    // consensus of the Over for espnbet: the median of the other books' no-vig Over probabilities:
    // pinnacle 0.5, draftkings 0.5, fanduel 0.48953 (1.95 / 1.87), betmgm 0.47368 (2.00 / 1.80): (0.5 + 0.48953) / 2
    const overCons = median([0.5, 0.5, noVig([1.95, 1.87], 0), noVig([2.0, 1.8], 0)]);
    close(overCons, (0.5 + noVig([1.95, 1.87], 0)) / 2, 'hand-worked median');
    close(body.edge_alerts[0].consensus_prob, overCons, 'Over consensus');
    close(body.edge_alerts[0].distance_pct, (overCons * 2.6 - 1) * 100, 'Over distance: 28.6 %');
    const underCons = (0.5 + noVig([1.95, 1.87], 1)) / 2;
    close(body.edge_alerts[1].distance_pct, (underCons * 1.5 - 1) * 100, 'Under distance: -24.2 %');
    t.equal(body.edge_alerts[0].books_in_consensus, 4, 'four other books');
    t.match(body.edge_alerts[0].reason, /espnbet pays 2\.600, 28\.6 % more .* stale line/, 'says which and why');
    const strict = await get('min_books=4&alert_pct=25');
    t.same(strict.body.edge_alerts.map((a: Json) => a.side), ['Over'], 'alert_pct raises the bar');
  });

  t.test('filters: min_books, min_edge, limit, markets, books, include_live', async (t) => {
    t.same(ids((await get('min_books=5')).body), ['bb_1:totals:Over:espnbet', 'bb_1:h2h:Boston Celtics:draftkings'], 'min_books=5 drops the four-book lines');
    t.same(ids((await get('min_books=4&min_edge=6')).body), ['bb_1:totals:Over:espnbet', 'bb_2:h2h:Denver Nuggets:fanduel'], 'min_edge=6');
    t.same(ids((await get('min_books=4&limit=1')).body), ['bb_1:totals:Over:espnbet'], 'limit=1');
    t.equal((await get('min_books=4&limit=1')).body.count, 1, 'count');
    t.same(ids((await get('min_books=4&markets=h2h')).body), ['bb_2:h2h:Denver Nuggets:fanduel', 'bb_1:h2h:Boston Celtics:draftkings'], 'markets=h2h');
    // fanduel's own prices: b2 home 2.00 (7.69 %), b1 Tatum Over 2.08 (4 %), b1 home 2.05 (2.5 %)
    t.same(ids((await get('min_books=4&books=fanduel')).body),
      ['bb_2:h2h:Denver Nuggets:fanduel', 'bb_1:player_points:Over:fanduel', 'bb_1:h2h:Boston Celtics:fanduel'], 'books=fanduel');
    const live = await get('min_books=4&include_live=true&markets=h2h');
    // b3: (0.5 * 2.16 - 1) * 100 = 8 %
    t.same(ids(live.body)[0], 'bb_3:h2h:Phoenix Suns:draftkings', 'include_live adds started games');
    t.equal(live.body.bets[0].edge_pct, 8, 'its edge, 8');
    t.same(ids((await get('min_books=4&region=eu')).body), [], 'eu books (pinnacle itself) hold no +EV price');
  });

  t.test('saved preferences apply when region and books are omitted', async (t) => {
    t.equal((await app.post('/v1/verdict/prefs', { books: ['fanduel'] }, auth)).status, 200, 'saved');
    const saved = await get('min_books=4');
    t.equal(saved.body.scope.source, 'saved_books', 'saved books');
    t.same(saved.body.bets.map((b: Json) => b.book), ['fanduel', 'fanduel', 'fanduel'], 'only fanduel prices');
    t.equal((await get('min_books=4&region=us')).body.bets[0].book, 'espnbet', 'an explicit region wins');
    await app.post('/v1/verdict/prefs', { region: 'uk', books: null }, auth);
    t.same([(await get('min_books=4')).body.scope.source, (await get('min_books=4')).body.bets.length], ['saved_region', 0], 'a saved region');
    await app.post('/v1/verdict/prefs', { region: null, books: null }, auth);
  });

  t.test('bounds and errors: 422, nothing charged', async (t) => {
    // a DFS pick'em board is never graded as a bet: naming one is 422, as on /v1/verdict (it left the scope silently)
    for (const q of ['limit=0', 'limit=51', 'min_edge=-1', 'min_edge=31', 'min_books=1', 'min_books=21', 'region=mars', 'books=nosuch',
      'books=pointsbetus', 'books=prizepicks', 'books=fanduel,prizepicks', 'markets=foo', 'sharpBook=nosuch', 'sharpBook=draftkings', 'sharpBook=prizepicks', 'alert_pct=0', 'include_live=maybe', 'limit=2.5']) {
      const { res, body } = await get(q);
      t.equal(res.status, 422, `${q}: 422`);
      t.equal(res.headers.get('x-requests-last'), '0', `${q}: charged nothing`);
      t.equal(body.detail[0].loc[1], q.split('=')[0], `${q}: names the parameter`);
    }
    t.equal((await get('limit=50&min_edge=0&min_books=20')).res.status, 200, 'upper and lower bounds are inclusive');
    t.equal((await app.get('/v1/sports/nope/best-bets', auth)).status, 404, 'unknown sport: 404');
    t.equal((await app.get('/v1/sports/basketball_nba/best-bets')).status, 401, 'no key: 401');
  });

  t.test('described in /openapi.json', async (t) => {
    const doc = (await (await app.get('/openapi.json')).json()) as Json;
    const params = doc.paths['/v1/sports/{sport_key}/best-bets'].get.parameters as Json[];
    const bound = (n: string) => { const s = params.find((p) => p.name === n)!.schema; return [s.minimum, s.maximum, s.default]; };
    t.same(bound('limit'), [1, 50, 20], 'limit 1 to 50, default 20');
    t.same(bound('min_edge'), [0, 30, 2], 'min_edge 0 to 30, default 2');
    t.same(bound('min_books'), [2, 20, 4], 'min_books 2 to 20, default 4');
  });

  t.test('futures and event markets are not graded (no teams to find the bet by)', async (t) => {
    const fut = { id: 'bb_fut', sport_key: 'basketball_nba', commence_time: now + 20 * 86_400_000, kind: 'futures', title: 'NBA Championship 2026-27' };
    const out = (book: string, outcome: string, price: number) => ({ book, event_id: fut.id, market: 'outrights', player: 'Boston Celtics', outcome, price });
    // pinnacle Yes 3.00 / No 1.45 (fair Yes about 0.326); draftkings Yes 3.60 would be +17 % if it were graded
    const r = await app.ingest({ events: [fut], prices: [out('pinnacle', 'Yes', 3.0), out('pinnacle', 'No', 1.45), out('draftkings', 'Yes', 3.6), out('fanduel', 'Yes', 3.1)] });
    t.equal(r.json.accepted, 4, 'outright prices applied');
    const res = await app.get('/v1/sports/basketball_nba/best-bets?min_books=2&min_edge=0&limit=50', auth);
    const body = (await res.json()) as Json;
    const rows = body.bets as Json[];
    t.notOk(rows.some((b) => b.event_id === fut.id), 'no best bet on the future');
  });

  t.test('swept in the piscina pool over a snapshot: the same body as the sweep over the read model itself', async (t) => {
    const pool = app.app.services.exports!.pool;
    const ran = pool.completed;
    const res = await app.get('/v1/sports/basketball_nba/best-bets?min_books=2&min_edge=0&limit=50&alert_pct=1&include_live=true&books=draftkings,fanduel,betmgm', auth);
    t.equal(res.status, 200, '200');
    const served = (await res.json()) as Json;
    t.equal(pool.completed, ran + 1, 'one task of the pool');
    t.ok(served.bets.some((b: Json) => b.player === 'Jayson Tatum') && served.edge_alerts.length > 0, 'bets with a player prop, and alerts: the snapshot carries players and every book');
    // the same query over the main thread's read model, at the same moment: the bets' ages aside, byte for byte
    const s = app.app.services;
    const events = [...s.hub.readModel.sportEvents('basketball_nba')].filter((e) => e.status !== 'final');
    const query: BestBetsQuery = {
      sport: 'basketball_nba', sharpBook: 'pinnacle', sharp: BOOKMAKERS.findIndex((b) => b.key === 'pinnacle'), minEdge: 0,
      minBooks: 2, alertPct: 1, includeLive: true, limit: 50, markets: null,
      scope: ['draftkings', 'fanduel', 'betmgm'].map((k) => BOOKMAKERS.findIndex((b) => b.key === k)), scopeJson: served.scope, now: Date.now(),
    };
    const direct = JSON.parse(bestBetsBody(s.hub.readModel, s.hub.players, events, query)) as Json;
    // (a stale line's reason counts its seconds: a second boundary between the two sweeps, on a loaded host, moved it)
    const ageless = (b: Json) => ({
      ...b, bets: b.bets.map((x: Json) => ({ ...x, age_seconds: 0 })),
      edge_alerts: b.edge_alerts.map((x: Json) => ({ ...x, reason: String(x.reason).replace(/not moved for \d+ s/, 'not moved for N s') })),
    });
    t.same(ageless(served), ageless(direct), 'the pool\'s body is the direct sweep\'s');
    const snap = s.hub.readModel.snapshot(events, s.hub.players);
    const { rm, players } = ReadModel.fromSnapshot(snap);
    t.same([snap.playerNames[0], snap.playerKeys.length], ['Jayson Tatum', snap.playerNames.length], 'players travel by name and key, renumbered from 0');
    t.equal(rm.eventCount, events.length, 'every event of the sport in the snapshot\'s read model');
    t.same(JSON.parse(bestBetsBody(rm, players, events.map((e) => rm.event(e.idx)!), query)), direct, 'a read model rebuilt from the snapshot sweeps to the same body');
  });
});

t.test('best bets - a leave-one-out median read off the sorted list equals the median of the list without it', async (t) => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  let checked = 0;
  for (let round = 0; round < 500; round++) {
    const n = 1 + Math.floor(rand() * 12);
    // ties on purpose: probabilities on a coarse grid
    const xs = Array.from({ length: n }, () => Math.round(rand() * 20) / 20).sort((a, b) => a - b);
    for (let skip = -1; skip < n; skip++) {
      const rest = skip < 0 ? xs.slice() : xs.filter((_, i) => i !== skip);
      if (rest.length === 0) continue;
      if (medianWithout(xs, skip) !== median(rest)) t.fail(`${JSON.stringify(xs)} without ${skip}`);
      checked++;
    }
  }
  t.ok(checked > 3000, `${checked} lists, each equal to the median of the list without the element`);
});
