import t from 'tap';
import { parlayFairProb, parlayPrice, weakestLeg } from '../engine/verdict-parlay.js';
import { startTestApp } from './helpers/app.js';

type Json = Record<string, any>;

t.test('parlay math - products, the weakest leg', async (t) => {
  t.equal(parlayFairProb([0.5, 0.5, 0.4]), 0.1, '0.5 * 0.5 * 0.4 = 0.1');
  t.equal(parlayPrice([2, 1.5]), 3, '2.0 * 1.5 = 3.0');
  t.equal(weakestLeg([3, Number.NaN, 1, 1]), 2, 'lowest edge, first on a tie, ungraded legs skipped');
  t.equal(weakestLeg([Number.NaN]), -1, 'none graded');
});

t.test('parlay verdict', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const auth = { 'x-api-key': key };
  const now = Date.now();
  const g1 = { id: 'pl_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const g2 = { id: 'pl_2', sport_key: 'basketball_nba', commence_time: now + 7_200_000, home_team: 'Denver Nuggets', away_team: 'Utah Jazz' };
  const g3 = { id: 'pl_3', sport_key: 'icehockey_nhl', commence_time: now + 7_200_000, home_team: 'Boston Bruins', away_team: 'Toronto Maple Leafs' };
  const h2h = (e: typeof g1, book: string, home: number, away: number) => [
    { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: home },
    { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: away },
  ];
  const total = (e: typeof g1, book: string, point: number, over: number, under: number) => [
    { book, event_id: e.id, market: 'totals', outcome: 'Over', point, price: over },
    { book, event_id: e.id, market: 'totals', outcome: 'Under', point, price: under },
  ];
  const r = await app.ingest({ events: [g1, g2, g3], prices: [
    // game 1: pinnacle 1.952 / 1.952, fair 0.5 each; betmgm quotes game 1 only
    ...h2h(g1, 'pinnacle', 1.952, 1.952), ...h2h(g1, 'draftkings', 2.10, 1.80), ...h2h(g1, 'fanduel', 2.05, 1.83),
    ...h2h(g1, 'betmgm', 2.30, 1.65),
    ...total(g1, 'pinnacle', 220.5, 1.952, 1.952), ...total(g1, 'draftkings', 220.5, 1.91, 1.91), ...total(g1, 'fanduel', 220.5, 1.95, 1.87),
    // game 2: pinnacle 1.8 / 2.1: implied 5/9 and 10/21 sum to 65/63; the home side's fair is (5/9) / (65/63) = 7/13
    ...h2h(g2, 'pinnacle', 1.8, 2.1), ...h2h(g2, 'draftkings', 1.94, 2.0), ...h2h(g2, 'fanduel', 2.0, 1.9),
    // game 3: no sharp line
    ...h2h(g3, 'draftkings', 1.9, 1.9), ...h2h(g3, 'fanduel', 1.9, 1.9),
  ] });
  t.equal(r.json.accepted, 24, 'fixture accepted');
  const post = async (body: unknown, headers: Record<string, string> = auth) => {
    const res = await app.post('/v1/parlay/verdict', body, headers);
    return { res, body: (await res.json()) as Json };
  };
  const close = (a: number, b: number, what: string) => t.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} ~ ${b}`);
  const leg1 = { sport: 'basketball_nba', market: 'h2h', side: 'home', home: 'Boston Celtics', away: 'Miami Heat' };
  const leg2 = { sport: 'basketball_nba', side: 'Denver Nuggets', team: 'nuggets' };

  t.test('two legs: fair price, the best single book for the whole parlay, EV, weakest leg, payout', async (t) => {
    const { res, body } = await post({ legs: [leg1, leg2], stake: 10 });
    t.equal(res.status, 200, '200');
    t.equal(res.headers.get('x-requests-last'), '10', 'costs 10');
    // P = 0.5 * 7/13 = 7/26 = 0.26923; fair price 26/7 = 3.714 = +271
    close(body.fair_prob, 7 / 26, 'fair probability is the product of the legs\' fair probabilities');
    t.equal(body.fair_price, 3.71428571429, 'fair price 26 / 7 to 12 significant digits');
    t.equal(body.fair_price_american, 271, '3.714 is +271');
    // per leg, the best price among the US books: betmgm 2.30 on leg 0 (edge (0.5 * 2.3 - 1) * 100 = 15 %),
    // fanduel 2.00 on leg 1 (edge (7/13 * 2 - 1) * 100 = 7.69 %)
    t.same(body.legs.map((l: Json) => l.best.book), ['betmgm', 'fanduel'], 'per-leg best book');
    close(body.legs[0].best.ev_pct, 15, 'leg 0 best edge');
    close(body.legs[1].fair_prob, 7 / 13, 'leg 1 fair');
    // whole parlay, books quoting both legs: draftkings 2.10 * 1.94 = 4.074, fanduel 2.05 * 2.00 = 4.1;
    // betmgm does not quote leg 1 so it cannot take the parlay
    t.equal(body.best_book.book, 'fanduel', 'the best whole-parlay book');
    close(body.best_book.price, 4.1, 'its parlay price');
    t.equal(body.best_book.books_quoting_every_leg, 2, 'draftkings and fanduel');
    // EV = (7/26 * 4.1 - 1) * 100 = 10.3846 %
    close(body.ev_pct, (7 / 26 * 4.1 - 1) * 100, 'parlay EV');
    t.equal(body.verdict, 'BET', 'BET');
    // leg edges at fanduel's prices: leg 0 (0.5 * 2.05 - 1) = 2.5 %, leg 1 7.69 %: leg 0 is the weakest
    t.equal(body.weakest_leg.index, 0, 'weakest leg');
    // served to 12 significant digits: (0.5 * 2.05 - 1) * 100 is 2.499999999999991 in doubles
    t.equal(body.weakest_leg.edge_pct, 2.5, 'its edge, 2.5');
    // stake 10 at 4.1: returns 41, profit 31, expected profit 10 * (7/26 * 4.1 - 1) = 1.0385
    t.equal(body.payout.book, 'fanduel', 'payout at the graded book');
    close(body.payout.returns, 41, 'returns');
    t.equal(body.payout.profit, 31, 'profit 31 (10 * 3.1 is 30.999999999999996 in doubles)');
    close(body.payout.expected_profit, 10 * (7 / 26 * 4.1 - 1), 'expected profit');
    t.same(body.correlation_warnings, [], 'different games: no warning');
    t.equal(body.scope.source, 'default', 'us by default');
  });

  t.test('a leg may name its game by eventId (a doubleheader\'s game)', async (t) => {
    const byId = await post({ legs: [{ sport: 'basketball_nba', side: 'home', eventId: 'pl_1' }, leg2] });
    t.equal(byId.res.status, 200, '200');
    close(byId.body.fair_prob, 7 / 26, 'the same parlay as by the names');
    const unknown = await post({ legs: [{ sport: 'basketball_nba', side: 'home', eventId: 'pl_nope' }, leg2] });
    t.equal(unknown.res.status, 404, 'an unknown id: 404');
  });

  t.test('book: that book\'s parlay graded, its own weakest leg', async (t) => {
    const { body } = await post({ legs: [leg1, leg2], book: 'draftkings' });
    // draftkings: 2.10 * 1.94 = 4.074; EV (7/26 * 4.074 - 1) * 100 = 9.6846 %
    close(body.yours.price, 2.1 * 1.94, 'draftkings parlay price');
    close(body.ev_pct, (7 / 26 * 2.1 * 1.94 - 1) * 100, 'EV at draftkings');
    // leg edges at draftkings: leg 0 (0.5 * 2.1 - 1) = 5 %, leg 1 (7/13 * 1.94 - 1) = 4.46 %: leg 1
    t.equal(body.weakest_leg.index, 1, 'weakest leg at draftkings prices');
    close(body.weakest_leg.edge_pct, (7 / 13 * 1.94 - 1) * 100, 'its edge');
    t.equal(body.best_book.book, 'fanduel', 'the best book is still reported');
    const missing = await post({ legs: [leg1, leg2], book: 'betmgm' });
    t.equal(missing.body.verdict, 'NO_DATA', 'a book missing a leg cannot take the parlay');
    t.match(missing.body.reasons.join(' '), /betmgm does not quote every leg/, 'said why');
  });

  t.test('books scoped like /v1/verdict, saved preferences included', async (t) => {
    const saved = await app.post('/v1/verdict/prefs', { books: ['betmgm', 'draftkings'] }, auth);
    t.equal(saved.status, 200, 'preferences saved');
    const s = await post({ legs: [leg1, leg2] });
    t.equal(s.body.scope.source, 'saved_books', 'the saved books apply');
    t.equal(s.body.best_book.book, 'draftkings', 'only draftkings of the saved books quotes both legs');
    t.equal(s.body.best_book.books_quoting_every_leg, 1, 'one book');
    t.equal(s.body.legs[0].best.book, 'betmgm', 'leg 0 best among the saved books');
    const explicit = await post({ legs: [leg1, leg2], region: 'us' });
    t.equal(explicit.body.best_book.book, 'fanduel', 'an explicit region wins');
    const books = await post({ legs: [leg1, leg2], books: 'fanduel' });
    t.same([books.body.scope.source, books.body.best_book.book], ['books', 'fanduel'], 'books as CSV');
    await app.post('/v1/verdict/prefs', { region: null, books: null }, auth);
  });

  t.test('same-game legs: a correlation warning', async (t) => {
    const over = { sport: 'basketball_nba', market: 'totals', side: 'over', event: 'Miami Heat @ Boston Celtics', line: 220.5 };
    const { body } = await post({ legs: [leg1, over, leg2] });
    t.equal(body.correlation_warnings.length, 1, 'one warning');
    t.same(body.correlation_warnings[0].legs, [0, 1], 'legs 0 and 1');
    t.equal(body.correlation_warnings[0].event_id, 'pl_1', 'the shared game');
    t.match(body.correlation_warnings[0].message, /correlated/, 'says why');
    // 0.5 * 0.5 * 7/13; fanduel 2.05 * 1.95 * 2.00 = 7.995 beats draftkings 2.10 * 1.91 * 1.94 = 7.781
    close(body.fair_prob, 0.25 * 7 / 13, 'three-leg fair probability');
    close(body.best_book.price, 2.05 * 1.95 * 2.0, 'fanduel parlay price');
    t.equal(body.legs[1].line, 220.5, 'the total\'s line');
  });

  t.test('a leg without a fresh sharp set: NO_DATA, saying which', async (t) => {
    const { res, body } = await post({ legs: [leg1, { sport: 'icehockey_nhl', team: 'bruins', side: 'home' }] });
    t.equal(res.status, 200, '200');
    t.equal(body.verdict, 'NO_DATA', 'NO_DATA');
    t.equal(body.fair_prob, null, 'no parlay fair price');
    t.equal(body.legs[1].fair_prob, null, 'leg 1 has none');
    close(body.legs[0].fair_prob, 0.5, 'leg 0 still graded');
    t.match(body.reasons.join(' '), /leg 1: pinnacle has no quote/, 'the reason names the leg');
  });

  t.test('malformed bodies: 400 and 422 naming the leg, nothing charged', async (t) => {
    const cases: [unknown, number, (string | number)[][]][] = [
      ['not json', 400, []],
      [[leg1, leg2], 400, []],
      [{}, 422, [['body', 'legs']]],
      [{ legs: [leg1] }, 422, [['body', 'legs']]],
      [{ legs: Array.from({ length: 13 }, () => leg1) }, 422, [['body', 'legs']]],
      [{ legs: [leg1, 'x'] }, 422, [['body', 'legs', 1]]],
      [{ legs: [leg1, { sport: 'basketball_nba', team: 'nuggets', line: 'x' }] }, 422, [['body', 'legs', 1, 'side'], ['body', 'legs', 1, 'line']]],
      [{ legs: [{ ...leg1, sport: 'curling' }, leg2] }, 422, [['body', 'legs', 0, 'sport']]],
      [{ legs: [leg1, { ...leg2, market: 'moneyline' }] }, 422, [['body', 'legs', 1, 'market']]],
      [{ legs: [leg1, { ...leg2, sid: 'home' }] }, 422, [['body', 'legs', 1, 'sid']]],
      [{ legs: [leg1, { ...leg2, side: 'Lakers' }] }, 422, [['body', 'legs', 1, 'side']]],
      [{ legs: [leg1, { ...leg1, side: 'away' }] }, 422, [['body', 'legs', 1, 'market']]],
      [{ legs: [leg1, { sport: 'basketball_nba', team: 'a', side: 'home' }] }, 422, [['body', 'legs', 1, 'team']]],
      [{ legs: [leg1, leg2], stake: -5 }, 422, [['body', 'stake']]],
      // every leg's problems in one 422: no game identified, and a prop without its player
      [{ legs: [{ sport: 'basketball_nba', side: 'home', home: 'Boston Celtics' }, { sport: 'basketball_nba', side: 'over', market: 'player_points' }] }, 422,
        [['body', 'legs', 0, 'home'], ['body', 'legs', 1, 'event'], ['body', 'legs', 1, 'player']]],
      [{ legs: [leg1, leg2], region: 'mars', book: 'pointsbetus' }, 422, [['body', 'region'], ['body', 'book']]],
      [{ legs: [leg1, leg2], extra: 1 }, 422, [['body', 'extra']]],
      [{ legs: [leg1, leg2], book: 'prizepicks', sharpBook: 'kalshi' }, 422, [['body', 'book'], ['body', 'sharpBook']]],
      // a DFS board in books is 422, as on /v1/verdict (it left the scope silently: NO_DATA)
      [{ legs: [leg1, leg2], books: ['fanduel', 'prizepicks'] }, 422, [['body', 'books']]],
      [{ legs: [leg1, leg2], books: 'prizepicks' }, 422, [['body', 'books']]],
      [{ legs: [leg1, { sport: 'basketball_nba', team: 'lakers', side: 'home' }] }, 404, [['body', 'legs', 1]]],
    ];
    for (const [body, status, locs] of cases) {
      const r = await post(body);
      const what = JSON.stringify(body).slice(0, 90);
      t.equal(r.res.status, status, `${what}: ${status}`);
      t.equal(r.res.headers.get('x-requests-last'), '0', `${what}: charged nothing`);
      if (locs.length > 0) t.same((r.body.detail as Json[]).map((d) => d.loc), locs, `${what}: detail[].loc`);
    }
    t.equal((await post({ legs: [leg1, leg2] }, {})).res.status, 401, 'no key: 401');
  });

  t.test('described in /openapi.json with its body', async (t) => {
    const doc = (await (await app.get('/openapi.json')).json()) as Json;
    const op = doc.paths['/v1/parlay/verdict'].post;
    const body = op.requestBody.content['application/json'].schema;
    t.same([body.properties.legs.minItems, body.properties.legs.maxItems], [2, 12], '2 to 12 legs');
    t.same(body.properties.legs.items.required, ['sport', 'side'], 'required leg fields');
    t.ok(op.responses['200'].content['application/json'].schema.properties.best_book, 'response schema');
  });
});

t.test('parlay verdict - a leg with a line but no market is 422 naming its line (it was graded as the moneyline)', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const e = { id: 'pl_line', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  await app.ingest({ events: [e], prices: [
    { book: 'pinnacle', event_id: e.id, market: 'h2h', outcome: e.home_team, price: 1.9 }, { book: 'pinnacle', event_id: e.id, market: 'h2h', outcome: e.away_team, price: 1.95 },
  ] });
  const res = await app.post('/v1/parlay/verdict', { legs: [{ sport: 'basketball_nba', side: 'home', team: 'celtics', line: -3.5 }, { sport: 'basketball_nba', side: 'away', team: 'celtics' }] }, { 'x-api-key': key });
  t.equal(res.status, 422, '422');
  t.same(((await res.json()) as Json).detail[0].loc, ['body', 'legs', 0, 'line'], 'naming legs.0.line');
});

t.test('parlay verdict - a parlay at its fair price: EV 0 and an expected profit of 0 (float noise served as 0)', async (t) => {
  // 1.91 and 1.8 at both books, their lines without margin (other sides 1 / (1 - 1/d)): fair 1/1.91 and 1/1.8, a
  // parlay at exactly its fair price whose P * D - 1 is -1.1e-16 in doubles. Regression: expected_profit
  // -1.11022302463e-14 beside ev_pct 0
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const g = (id: string, home: string, away: string, h: number) => ({ id, sport_key: 'basketball_nba', commence_time: now + h * 3_600_000, home_team: home, away_team: away });
  const a = g('pe_1', 'Boston Celtics', 'Miami Heat', 1);
  const b = g('pe_2', 'Denver Nuggets', 'Utah Jazz', 2);
  const fairLine = (e: typeof a, book: string, home: number) => [
    { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: home },
    { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: 1 / (1 - 1 / home) },
  ];
  const r = await app.ingest({ events: [a, b], prices: [
    ...fairLine(a, 'pinnacle', 1.91), ...fairLine(a, 'draftkings', 1.91), ...fairLine(b, 'pinnacle', 1.8), ...fairLine(b, 'draftkings', 1.8),
  ] });
  t.same(r.json.rejected, [], 'accepted');
  const res = await app.post('/v1/parlay/verdict', {
    legs: [{ sport: 'basketball_nba', side: 'home', team: 'celtics' }, { sport: 'basketball_nba', side: 'home', team: 'nuggets' }],
    books: ['draftkings'], stake: 100,
  }, { 'x-api-key': key });
  const body = (await res.json()) as Json;
  t.equal(res.status, 200, '200');
  t.same([body.ev_pct, body.payout.expected_profit], [0, 0], 'EV 0 and an expected profit of 0');
});
