import t from 'tap';
import { startTestApp } from './helpers/app.js';

interface Verdict {
  verdict: string;
  fair_prob: number | null;
  best: { book: string; price: number; ev_pct: number } | null;
  yours: { book: string | null; price: number; ev_pct: number } | null;
  kelly: { fraction: number; stake: number } | null;
  books_compared: number;
  reasons: string[];
}

t.test('verdict', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const g = { id: 'vd_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const g2 = { id: 'vd_2', sport_key: 'basketball_nba', commence_time: now + 7_200_000, home_team: 'Boston Celtics', away_team: 'Chicago Bulls' };
  const g3 = { id: 'vd_3', sport_key: 'basketball_nba', commence_time: now + 9_000_000, home_team: 'Utah Jazz', away_team: 'Orlando Magic' };
  const h2h = (e: typeof g, book: string, a: number, b: number) => [
    { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: a },
    { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: b },
  ];
  await app.ingest({ events: [g, g2, g3], prices: [
    ...h2h(g, 'pinnacle', 1.952, 1.952), ...h2h(g, 'draftkings', 2.10, 1.80), ...h2h(g, 'fanduel', 2.05, 1.83),
    ...h2h(g2, 'pinnacle', 1.5, 2.7), ...h2h(g3, 'draftkings', 1.9, 1.9),
  ] });
  const v = async (q: string) => {
    const res = await app.get(`/v1/verdict?apiKey=${key}&sport=basketball_nba${q}`);
    return { res, body: (await res.json()) as Verdict };
  };

  t.test('the best price graded against the no-vig line', async (t) => {
    const { res, body } = await v('&home=Boston Celtics&away=Miami Heat&side=home&bankroll=1000');
    t.equal(res.status, 200, '200');
    t.equal(res.headers.get('x-requests-last'), '5', 'costs 5');
    // pinnacle 1.952 / 1.952: implied 0.51230 each, multiplicative fair 0.5
    t.ok(Math.abs(body.fair_prob! - 0.5) < 1e-12, 'fair 0.5');
    // best US price for the home side: draftkings 2.10; edge (0.5 * 2.10 - 1) * 100 = 5 %
    t.equal(body.best?.book, 'draftkings', 'best book');
    t.ok(Math.abs(body.best!.ev_pct - 5) < 1e-9, 'edge 5 %');
    t.equal(body.verdict, 'BET', '>= 2 %: BET');
    // half Kelly: (0.5 * 2.1 - 1) / (2.1 - 1) = 0.0454545..., times 0.5 = 0.0227272...; stake 22.73 of 1000
    t.ok(Math.abs(body.kelly!.fraction - 0.05 / 1.1 / 2) < 1e-12, 'half Kelly fraction');
    t.ok(Math.abs(body.kelly!.stake - 1000 * 0.05 / 1.1 / 2) < 1e-9, 'stake');
    t.equal(body.books_compared, 2, 'draftkings and fanduel (pinnacle is not a US book)');
  });

  t.test('the caller\'s own price: American or decimal, every verdict band', async (t) => {
    const cases: [string, string, number][] = [
      ['-110', 'PASS', (0.5 * (1 + 100 / 110) - 1) * 100], // -4.545 %
      ['+102', 'LEAN', 1], // 2.02: 1 %
      ['2.00', 'FAIR', 0],
      ['2.05', 'BET', 2.5],
    ];
    for (const [price, verdict, edge] of cases) {
      const { body } = await v(`&event=Miami Heat @ Boston Celtics&side=Boston Celtics&price=${encodeURIComponent(price)}`);
      t.equal(body.verdict, verdict, `${price}: ${verdict}`);
      t.ok(Math.abs(body.yours!.ev_pct - edge) < 1e-9, `${price}: edge ${edge.toFixed(3)} %`);
    }
    const american = await v(`&event=Miami Heat @ Boston Celtics&side=Boston Celtics&price=${encodeURIComponent('-105')}`);
    t.equal(american.body.yours?.price, 1.95238095238, '-105 served as a decimal to 12 significant digits (1.9523809523809523 in doubles)');
    const { body } = await v('&team=heat&side=away&book=fanduel');
    t.equal(body.yours?.book, 'fanduel', 'book: its price graded');
    t.ok(Math.abs(body.yours!.ev_pct - (0.5 * 1.83 - 1) * 100) < 1e-9, 'fanduel away 1.83: -8.5 %');
    // regression: a book without a price on the side was replaced by the best book's, graded BET with a Kelly stake
    const none = await v('&team=heat&side=away&book=betmgm&bankroll=1000');
    t.same([none.body.verdict, none.body.yours, none.body.kelly], ['NO_DATA', null, null], 'betmgm has no price: NO_DATA, nothing graded, no stake');
    t.ok(none.body.reasons.some((r) => /betmgm has no fresh price/.test(r)), 'saying why');
    t.equal(none.body.best?.book, 'fanduel', 'the best price is still shown');
    // regression: a price typed for an exchange was graded without its commission (the exchange's own quote is net)
    const ex = await v('&team=heat&side=home&book=betfair_ex_uk&price=2.10');
    t.ok(Math.abs(ex.body.yours!.ev_pct - (0.5 * (1 + 1.1 * 0.95) - 1) * 100) < 1e-9, 'betfair_ex_uk at 2.10: effective 2.045, edge 2.25 %');
  });

  t.test('an edge of exactly 2 % is BET, served as 2: the verdict judges the served edge, not its float noise', async (t) => {
    // pinnacle 1.4 / 2.1: implied 0.714286 + 0.476190 = 1.190476, multiplicative fair away 0.476190 / 1.190476 = 0.4;
    // 2.55 gives 0.4 * 2.55 - 1 = 0.02 exactly, which the doubles make 1.9999999999999796 % (LEAN, below 2)
    const g5 = { id: 'vd_5', sport_key: 'basketball_nba', commence_time: now + 11_000_000, home_team: 'Atlanta Hawks', away_team: 'Toronto Raptors' };
    await app.ingest({ events: [g5], prices: h2h(g5, 'pinnacle', 1.4, 2.1) });
    const { body } = await v('&team=raptors&side=away&price=2.55&bankroll=1000');
    t.equal(body.verdict, 'BET', 'BET at 2 %');
    t.equal(body.yours?.ev_pct, 2, 'ev_pct 2');
    t.equal(body.fair_prob, 0.4, 'fair 0.4');
    // half Kelly (the default): 0.02 / 1.55 / 2 = 0.00645161290323 (12 significant digits); stake 6.45161290323
    t.equal(body.kelly?.fraction, 0.00645161290323, 'Kelly fraction to 12 significant digits');
    t.equal(body.kelly?.stake, 6.45161290323, 'stake to 12 significant digits');
  });

  t.test('saved preferences scope the books when books and region are omitted', async (t) => {
    const auth = { 'x-api-key': key };
    t.same(await (await app.get('/v1/verdict/prefs', auth)).json(), { region: null, books: null }, 'nothing saved yet');
    const saved = await app.post('/v1/verdict/prefs', { books: ['fanduel'] }, auth);
    t.equal(saved.status, 200, 'saved');
    t.equal(saved.headers.get('x-requests-last'), '0', 'free');
    t.equal((await v('&team=heat&side=home')).body.best?.book, 'fanduel', 'the saved books decide the best price');
    t.equal((await v('&team=heat&side=home&region=us')).body.best?.book, 'draftkings', 'an explicit region wins');
    const rows = await app.app.services.db.sql<{ books: string[] }[]>`select books from verdict_prefs`;
    t.same(rows.map((r) => r.books), [['fanduel']], 'stored in PostgreSQL');
    const kept = await app.post('/v1/verdict/prefs', { region: 'uk' }, auth);
    t.same(await kept.json(), { region: 'uk', books: ['fanduel'] }, 'a field left out keeps its saved value');
    for (const body of [{ region: 'mars' }, { books: [] }, { books: ['nosuchbook'] }, { books: ['pointsbetus'] }, { books: ['fanduel', 'prizepicks'] }, { bookz: ['fanduel'] }]) {
      t.equal((await app.post('/v1/verdict/prefs', body, auth)).status, 422, `${JSON.stringify(body)}: 422`);
    }
    t.equal((await app.post('/v1/verdict/prefs', 'not json', auth)).status, 400, 'malformed: 400');
    t.same(await (await app.get('/v1/verdict/prefs', auth)).json(), { region: 'uk', books: ['fanduel'] }, 'a refused body (a misspelt field) changes nothing');
    await app.post('/v1/verdict/prefs', { region: null, books: null }, auth);
    t.equal((await v('&team=heat&side=home')).body.best?.book, 'draftkings', 'cleared: us again');
  });

  t.test('DFS pick\'em is never the graded price; the scope is reported', async (t) => {
    const g4 = { id: 'vd_4', sport_key: 'basketball_nba', commence_time: now + 10_000_000, home_team: 'Denver Nuggets', away_team: 'Phoenix Suns' };
    const pts = (book: string, over: number, under: number) => [
      { book, event_id: g4.id, market: 'player_points', player: 'Nikola Jokić', point: 26.5, outcome: 'Over', price: over },
      { book, event_id: g4.id, market: 'player_points', player: 'Nikola Jokic', point: 26.5, outcome: 'Under', price: under },
    ];
    await app.ingest({ events: [g4], prices: [...pts('pinnacle', 1.952, 1.952), ...pts('draftkings', 1.95, 1.87), ...pts('prizepicks', 3.0, 3.0)] });
    const { body } = await v('&team=nuggets&market=player_points&player=jokic&side=over');
    // prizepicks' 3.0 is a per-entry payout, not a single bet: draftkings 1.95 is graded, (0.5 * 1.95 - 1) * 100 = -2.5 %
    t.equal(body.best?.book, 'draftkings', 'prizepicks is not a book to bet at');
    t.ok(Math.abs(body.best!.ev_pct - -2.5) < 1e-9, 'edge -2.5 %');
    t.equal(body.verdict, 'PASS', 'PASS');
    t.equal(body.books_compared, 1, 'only draftkings compared');
    t.same((body as unknown as { scope: { source: string; region: string } }).scope.source, 'default', 'scope: us by default');
    // SPEC leaves the game's identifiers optional: a player quoted in one game names it (it was 422 "event is required")
    const alone = await v('&market=player_points&player=jokic&side=over');
    t.equal(alone.res.status, 200, 'a prop with the player alone: 200');
    t.same([alone.body.best?.book, alone.body.verdict], ['draftkings', 'PASS'], 'the same verdict as with the team');
    t.equal((await v('&market=player_points&player=lebron&side=over')).res.status, 404, 'a player quoted in no game: 404');
    t.equal((await v('&market=h2h&player=jokic&side=home')).res.status, 422, 'a game market still needs its game');
  });

  t.test('NO_DATA without a fresh sharp set; errors', async (t) => {
    const nd = await v('&team=jazz&side=home');
    t.equal(nd.body.verdict, 'NO_DATA', 'no pinnacle line: NO_DATA');
    t.ok(nd.body.reasons.length > 0, 'with a reason');
    const amb = await v('&team=celtics&side=home');
    t.equal(amb.res.status, 422, 'a team in two games is ambiguous: 422');
    t.match(JSON.stringify(await amb.body), /Miami Heat @ Boston Celtics/, 'listing the candidates');
    for (const q of ['&team=heat', '&team=heat&side=nobody', '&team=heat&side=home&price=abc', '&team=heat&side=home&price=-50',
      '&team=heat&side=home&kelly=2', '&side=home', '&team=heat&side=home&market=foo',
      // a DFS board graded (its per-entry payouts as a price), a DFS board or a prediction market as the fair line
      '&team=heat&side=home&book=prizepicks', '&team=heat&side=home&sharpBook=prizepicks', '&team=heat&side=home&sharpBook=kalshi',
      // a line or a player on the moneyline (regression: graded as the moneyline, 200)
      '&team=heat&side=home&line=3.5', '&team=heat&side=home&player=Jimmy%20Butler', '&team=heat&side=home&market=totals&player=Jimmy%20Butler']) {
      const { res } = await v(q);
      t.equal(res.status, 422, `${q}: 422`);
      t.equal(res.headers.get('x-requests-last'), '0', 'charged nothing');
    }
    t.equal((await v('&team=lakers&side=home')).res.status, 404, 'no such game: 404');
  });

  t.test('game identifiers that disagree are 422 naming the one that disagrees (one silently won)', async (t) => {
    const cases: [string, string][] = [
      ['&home=Boston Celtics&away=Miami Heat&team=Jazz&side=home', 'team'],
      ['&event=Miami Heat @ Boston Celtics&home=Utah Jazz&side=home', 'home'],
      ['&event=Miami Heat @ Boston Celtics&away=Chicago Bulls&side=home', 'away'],
      ['&home=Boston Celtics&side=home', 'home'],
    ];
    for (const [q, loc] of cases) {
      const { res, body } = await v(q);
      t.equal(res.status, 422, `${q}: 422`);
      t.same((body as unknown as { detail: { loc: string[] }[] }).detail.map((d) => d.loc[1]), [loc], `naming ${loc}`);
      t.equal(res.headers.get('x-requests-last'), '0', 'charged nothing');
    }
    const alone = await v('&home=Boston Celtics&side=home');
    t.equal((alone.body as unknown as { detail: { input: unknown }[] }).detail[0].input, 'Boston Celtics', 'the input sent, not null');
    t.equal((await v('&home=Boston Celtics&away=Miami Heat&team=heat&side=home')).res.status, 200, 'identifiers that agree: 200');
  });

  t.test('a doubleheader: the names match two games, a 422 lists them; eventId picks one (regression: the first was graded)', async (t) => {
    const dh = (id: string, hours: number) => ({ id, sport_key: 'baseball_mlb', commence_time: now + hours * 3_600_000, home_team: 'Chicago White Sox', away_team: 'Chicago Cubs' });
    const g1 = dh('vd_dh_1', 2);
    const g2b = dh('vd_dh_2', 6);
    const ml = (e: typeof g1, book: string, a: number, b: number) => [
      { book, event_id: e.id, market: 'h2h', outcome: e.home_team, price: a },
      { book, event_id: e.id, market: 'h2h', outcome: e.away_team, price: b },
    ];
    // game 1: pinnacle 1.952 / 1.952 (fair 0.5 each); game 2: pinnacle 2.5 / 1.6 (implied 0.4 + 0.625, fair away 0.625 / 1.025)
    await app.ingest({ events: [g1, g2b], prices: [...ml(g1, 'pinnacle', 1.952, 1.952), ...ml(g1, 'draftkings', 1.9, 1.9),
      ...ml(g2b, 'pinnacle', 2.5, 1.6), ...ml(g2b, 'draftkings', 2.45, 1.65)] });
    const mlb = async (q: string) => {
      const res = await app.get(`/v1/verdict?apiKey=${key}&sport=baseball_mlb&side=away${q}`);
      return { res, body: (await res.json()) as Verdict & { event_id: string; detail?: { loc: string[]; msg: string }[] } };
    };
    for (const [q, loc] of [['&home=Chicago White Sox&away=Chicago Cubs', 'home'], ['&event=Chicago Cubs @ Chicago White Sox', 'event'], ['&team=white sox', 'team']]) {
      const { res, body } = await mlb(q);
      t.equal(res.status, 422, `${q}: 422`);
      t.same(body.detail!.map((d) => d.loc[1]), [loc], `naming ${loc}`);
      t.match(body.detail![0].msg, /matches 2 games: vd_dh_1 .*; vd_dh_2 .*give eventId/, 'listing both games by id, asking for eventId');
      t.equal(res.headers.get('x-requests-last'), '0', 'charged nothing');
    }
    const second = await mlb('&home=Chicago White Sox&away=Chicago Cubs&eventId=vd_dh_2');
    t.equal(second.res.status, 200, 'with eventId: 200');
    t.equal(second.body.event_id, 'vd_dh_2', 'the game asked for');
    t.ok(Math.abs(second.body.fair_prob! - 0.625 / 1.025) < 1e-12, 'graded on its own line (fair 0.609756)');
    t.equal((await mlb('&eventId=vd_dh_1')).body.event_id, 'vd_dh_1', 'eventId alone identifies the game');
    t.equal((await mlb('&eventId=vd_dh_1&team=yankees')).res.status, 404, 'names that are not its own: 404');
    t.equal((await mlb('&eventId=nope')).res.status, 404, 'an unknown id: 404');
  });

  t.test('books: a merged, decommissioned or DFS book is 422 (regression: it left the scope silently, NO_DATA charged)', async (t) => {
    for (const b of ['pointsbetus', 'foxbet', 'prizepicks', 'draftkings,prizepicks']) {
      const { res, body } = await v(`&home=Boston Celtics&away=Miami Heat&side=home&books=${b}`);
      t.equal(res.status, 422, `books=${b}: 422`);
      t.same((body as unknown as { detail: { loc: string[] }[] }).detail.map((d) => d.loc[1]), ['books'], 'naming books');
      t.equal(res.headers.get('x-requests-last'), '0', 'charged nothing');
    }
    t.equal((await v('&home=Boston Celtics&away=Miami Heat&side=home&books=draftkings')).res.status, 200, 'an active book: 200');
    // book= graded a merged or decommissioned book NO_DATA, and charged 5
    for (const b of ['pointsbetus', 'foxbet']) {
      const { res, body } = await v(`&home=Boston Celtics&away=Miami Heat&side=home&book=${b}`);
      t.equal(res.status, 422, `book=${b}: 422`);
      t.same((body as unknown as { detail: { loc: string[] }[] }).detail.map((d) => d.loc[1]), ['book'], 'naming book');
      t.equal(res.headers.get('x-requests-last'), '0', 'charged nothing');
    }
  });

  t.test('an unknown sport is a 422 naming sport, as every query filter (it was the 404 of a path)', async (t) => {
    const res = await app.get('/v1/verdict?sport=curling_world&team=heat&side=home', { 'X-API-Key': key });
    t.equal(res.status, 422, '422');
    const body = (await res.json()) as { error_code: string; detail: { loc: string[] }[] };
    t.same([body.error_code, body.detail[0].loc], ['VALIDATION_ERROR', ['query', 'sport']], 'naming sport');
  });

  t.test('a side naming part of both teams is 422; an unencoded + is American', async (t) => {
    // regression: a part of both names ("i" is in Boston Celtics and in Miami Heat; "Los Angeles" in a Lakers-Clippers
    // game) was graded as the home team without a word
    const both = await v('&team=heat&side=i');
    t.equal(both.res.status, 422, 'side=i matches both teams: 422');
    t.match(JSON.stringify(both.body), /Boston Celtics.*Miami Heat/, 'naming both');
    t.equal((await v('&team=heat&side=boston')).body.fair_prob, 0.5, 'a part of one team still picks it');
    t.equal((await v('&team=heat&side=Boston%20Celtics')).res.status, 200, 'a whole name picks it');
    // price=+102 typed into a URL: the + arrives as a blank. It was read as a decimal price of 102 (an edge of 5,000 %)
    const { body } = await v('&event=Miami Heat @ Boston Celtics&side=Boston Celtics&price=+102');
    t.equal(body.yours?.price, 2.02, 'price=+102 unencoded: +102 American, 2.02');
    t.equal(body.verdict, 'LEAN', 'graded as 1 %');
  });
});
