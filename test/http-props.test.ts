import t from 'tap';
import { startTestApp } from './helpers/app.js';

type Row = Record<string, unknown>;

t.test('props', async (t) => {
  const app = await startTestApp(t);
  const key = await app.key('business');
  const now = Date.now();
  const ev = { id: 'pr_nba_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Los Angeles Lakers', away_team: 'Boston Celtics' };
  const ev2 = { id: 'pr_nba_2', sport_key: 'basketball_nba', commence_time: now + 7_200_000, home_team: 'Miami Heat', away_team: 'Chicago Bulls' };
  const prop = (book: string, e: typeof ev, market: string, player: string, point: number, outcome: string, price: number, ts = now) =>
    ({ book, event_id: e.id, market, player, point, outcome, price, ts });
  const r = await app.ingest({ events: [ev, ev2], prices: [
    prop('draftkings', ev, 'player_points', 'LeBron James', 25.5, 'Over', 1.91),
    prop('draftkings', ev, 'player_points', 'LeBron James', 25.5, 'Under', 1.91),
    prop('fanduel', ev, 'player_points', 'LeBron James', 26.5, 'Over', 1.87), // no Under: null, never made up
    prop('prizepicks', ev, 'player_points', 'LeBron James', 25.5, 'Over', 1.74),
    prop('prizepicks', ev, 'player_points', 'LeBron James', 25.5, 'Under', 1.74),
    prop('draftkings', ev, 'player_rebounds', 'José Álvarez', 8.5, 'Over', 2.0, now - 30 * 60_000),
    prop('draftkings', ev, 'player_rebounds', 'José Álvarez', 8.5, 'Under', 1.8, now - 30 * 60_000),
    prop('betmgm', ev2, 'player_assists', 'Old Row', 5.5, 'Over', 1.9, now - 70 * 60_000),
    prop('betmgm', ev2, 'player_assists', 'Old Row', 5.5, 'Under', 1.9, now - 70 * 60_000),
  ] });
  t.equal(r.json.accepted, 9, 'fixture accepted');
  const get = async (q: string) => {
    const res = await app.get(`/v1/sports/basketball_nba/props?apiKey=${key}${q}`);
    return { res, body: (await res.json()) as Row[] };
  };

  t.test('rows, American prices, null for a missing side, the 60-minute window, cost 3', async (t) => {
    const { res, body } = await get('');
    t.equal(res.status, 200, '200');
    t.equal(res.headers.get('x-requests-last'), '3', 'costs 3');
    t.same(body.map((x) => `${x.bookmaker}:${x.player}:${x.line}`), [
      'draftkings:LeBron James:25.5', 'prizepicks:LeBron James:25.5', 'fanduel:LeBron James:26.5', 'draftkings:José Álvarez:8.5',
    ], 'sorted by event, market, player, line, book; the 70-minute-old row is not served');
    const dk = body[0];
    t.same([dk.over_price, dk.under_price], [-110, -110], '1.91 is -110');
    t.equal(dk.market_label, 'Points', 'one human-readable label per market, from the catalogue');
    t.same([body[2].over_price, body[2].under_price], [-115, null], 'fanduel: Over 1.87 is -115, Under null');
    t.same([body[1].over_price, body[1].under_price], [100, 100], 'DFS pick\'em at the midpoint by default: +100 / +100');
    t.ok((body[3].age_seconds as number) >= 1799, 'age of the 30-minute-old row');
  });

  t.test('a side older than the window or maxAgeSec is null, and the row is as old as the older side it serves', async (t) => {
    // regression: the row's age was its newer side's, so a 65-minute-old Under was served beside a fresh Over as
    // 1 s old, through the 60-minute window and any maxAgeSec. One book's sides written 65 and 20 minutes ago, the
    // Overs now; an event of its own, so the other tests' rows stay as they are
    const ev3 = { id: 'pr_nba_3', sport_key: 'basketball_nba', commence_time: now + 9_000_000, home_team: 'Utah Jazz', away_team: 'Denver Nuggets' };
    const split = await app.ingest({ events: [ev3], prices: [
      prop('betrivers', ev3, 'player_points', 'Split Age', 15.5, 'Under', 1.8, now - 65 * 60_000),
      prop('williamhill_us', ev3, 'player_points', 'Split Age', 15.5, 'Under', 1.85, now - 20 * 60_000),
      prop('williamhill_us', ev3, 'player_points', 'Split Age', 15.5, 'Over', 2.0, now - 1000),
      prop('betrivers', ev3, 'player_points', 'Split Age', 15.5, 'Over', 2.0, now - 1000),
    ] });
    t.equal(split.json.accepted, 4, 'accepted');
    t.teardown(() => app.ingest({ events: [{ ...ev3, status: 'final' }] }));
    const rows = async (q: string) => (await get(`&player=Split&oddsFormat=decimal${q}`)).body
      .map((x) => [x.bookmaker, x.over_price, x.under_price, Math.round(x.age_seconds as number)]);
    t.same(await rows(''), [['betrivers', 2, null, 1], ['williamhill_us', 2, 1.85, 1200]],
      'betrivers: the 65-minute-old Under is past the window (null); williamhill_us: both sides, 20 minutes old');
    t.same(await rows('&maxAgeSec=600'), [['betrivers', 2, null, 1], ['williamhill_us', 2, null, 1]], 'maxAgeSec=600: both Unders null, rows 1 s old');
    const g = (await get('&player=Split&oddsFormat=decimal&grouped=true')).body[0] as { books: Row[] };
    t.same(g.books.map((b) => [b.bookmaker, b.under_price, Math.round(b.age_seconds as number)]), [['betrivers', null, 1], ['williamhill_us', 1.85, 1200]], 'grouped: the same');
  });

  t.test('dfsOdds=effective, oddsFormat=decimal', async (t) => {
    const { body } = await get('&dfsOdds=effective&oddsFormat=decimal&bookmakers=prizepicks');
    t.equal(body.length, 1, 'one row');
    t.equal(body[0].over_price, 1.73205080757, "prizepicks' per-leg price from its 2-leg payout of 3.0: sqrt(3), served to 12 significant digits");
  });

  t.test('filters: player (partial, case- and accent-insensitive), markets, bookmakers, eventId, maxAgeSec', async (t) => {
    t.same((await get('&player=JOSE alv')).body.map((x) => x.player), ['José Álvarez'], 'accent- and case-insensitive');
    t.same((await get('&player=J.%20%C3%81lvarez')).body.map((x) => x.player), ['José Álvarez'], 'the initial spelling finds the full name');
    t.same((await get('&markets=player_rebounds')).body.length, 1, 'markets');
    t.same((await get('&bookmakers=fanduel')).body.map((x) => x.bookmaker), ['fanduel'], 'bookmakers');
    t.same((await get('&eventId=pr_nba_2')).body, [], 'eventId (its only row is too old)');
    t.same((await get('&maxAgeSec=600')).body.length, 3, 'maxAgeSec drops the 30-minute-old row');
  });

  t.test('paging headers, and grouped entries straddling a page', async (t) => {
    const { res, body } = await get('&limit=2');
    t.same([res.headers.get('x-result-page-size'), res.headers.get('x-result-row-count'), res.headers.get('x-result-has-more'), res.headers.get('x-next-offset')],
      ['2', '2', 'true', '2'], 'first page');
    t.equal(body.length, 2, 'two rows');
    const g1 = await get('&grouped=true&limit=2');
    t.same([g1.res.headers.get('x-result-page-size'), g1.res.headers.get('x-result-row-count')], ['1', '2'],
      'grouped: one entry (25.5 with two books) for two rows');
    const a = await get('&grouped=true&limit=1');
    const b = await get('&grouped=true&limit=1&offset=1');
    const books = (x: Row[]) => (x[0] as { books: Row[] }).books.map((y) => y.bookmaker);
    t.same([books(a.body), books(b.body)], [['draftkings'], ['prizepicks']], 'the 25.5 prop straddles two pages, partial on each');
    t.same([a.body[0].line, b.body[0].line], [25.5, 25.5], 'same prop on both pages');
    const last = await get('&grouped=true&limit=10&offset=2');
    t.equal(last.res.headers.get('x-result-has-more'), 'false', 'last page');
  });

  t.test('a served row follows its prices, its event and the price format; its age is the request\'s (rows are kept serialised)', async (t) => {
    const ev4 = { id: 'pr_nba_4', sport_key: 'basketball_nba', commence_time: now + 10_000_000, home_team: 'Orlando Magic', away_team: 'Atlanta Hawks' };
    const t0 = Date.now() - 5000;
    await app.ingest({ events: [ev4], prices: [
      prop('betmgm', ev4, 'player_points', 'Kept Row', 20.5, 'Over', 1.8, t0), prop('betmgm', ev4, 'player_points', 'Kept Row', 20.5, 'Under', 2.0, t0),
    ] });
    t.teardown(() => app.ingest({ events: [{ ...ev4, status: 'final' }] }));
    const row = async (q = '') => (await get(`&player=Kept&${q}`)).body[0];
    let x = await row();
    t.same([x.over_price, x.under_price, x.line, x.home_team], [-125, 100, 20.5, 'Orlando Magic'], 'as first served: 1.80 is -125, 2.00 is +100');
    const age1 = x.age_seconds as number;
    t.ok(age1 >= 5, 'five seconds old');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    x = await row();
    t.ok((x.age_seconds as number) >= age1 + 1, 'a second later its age is a second more (the row unchanged)');
    x = await row('oddsFormat=decimal');
    t.same([x.over_price, x.under_price], [1.8, 2], 'decimal: the same row in the other format');
    await app.ingest({ prices: [prop('betmgm', ev4, 'player_points', 'Kept Row', 20.5, 'Over', 1.9, Date.now())] });
    t.equal((await row()).over_price, -111, 'the Over moved to 1.90: -111');
    // the same prices at another line
    await app.ingest({ prices: [prop('betmgm', ev4, 'player_points', 'Kept Row', 21.5, 'Over', 1.9, Date.now()), prop('betmgm', ev4, 'player_points', 'Kept Row', 21.5, 'Under', 2.0, Date.now())] });
    x = await row();
    t.same([x.line, x.over_price, x.under_price], [21.5, -111, 100], 'the line moved to 21.5, prices unchanged');
    await app.ingest({ events: [{ ...ev4, home_team: 'ORL Magic' }] });
    t.equal((await row()).home_team, 'ORL Magic', 'the event renamed');
    x = await row('maxAgeSec=1');
    t.ok(x === undefined || (x.age_seconds as number) <= 1, 'maxAgeSec still applies to a kept row');
  });

  t.test('the order follows a new book, a line that moves and a full name that joins initials (each event\'s order is kept between requests)', async (t) => {
    const ev5 = { id: 'pr_nba_5', sport_key: 'basketball_nba', commence_time: now + 11_000_000, home_team: 'Phoenix Suns', away_team: 'Dallas Mavericks' };
    const ts = () => Date.now();
    await app.ingest({ events: [ev5], prices: [
      prop('fanduel', ev5, 'player_points', 'Order Row', 24.5, 'Over', 1.9, ts()),
      prop('betmgm', ev5, 'player_points', 'Order Row', 25.5, 'Over', 1.9, ts()),
      prop('draftkings', ev5, 'player_points', 'K. Kept', 10.5, 'Over', 1.9, ts()),
    ] });
    t.teardown(() => app.ingest({ events: [{ ...ev5, status: 'final' }] }));
    const order = async () => (await get('&eventId=pr_nba_5')).body.map((x) => `${x.player}:${x.line}:${x.bookmaker}`);
    t.same(await order(), ['K. Kept:10.5:draftkings', 'Order Row:24.5:fanduel', 'Order Row:25.5:betmgm'], 'player, then line');
    await app.ingest({ prices: [prop('betrivers', ev5, 'player_points', 'Order Row', 24.5, 'Over', 1.95, ts())] });
    t.same(await order(), ['K. Kept:10.5:draftkings', 'Order Row:24.5:betrivers', 'Order Row:24.5:fanduel', 'Order Row:25.5:betmgm'],
      'a new book takes its place in the order (before fanduel on the same line)');
    await app.ingest({ prices: [prop('fanduel', ev5, 'player_points', 'Order Row', 26.5, 'Over', 1.9, ts())] });
    t.same(await order(), ['K. Kept:10.5:draftkings', 'Order Row:24.5:betrivers', 'Order Row:25.5:betmgm', 'Order Row:26.5:fanduel'],
      'fanduel moved to 26.5: now after betmgm\'s 25.5');
    await app.ingest({ prices: [prop('betmgm', ev5, 'player_points', 'Kevin Kept', 9.5, 'Over', 1.9, ts())] });
    t.same(await order(), ['Kevin Kept:9.5:betmgm', 'Kevin Kept:10.5:draftkings', 'Order Row:24.5:betrivers', 'Order Row:25.5:betmgm', 'Order Row:26.5:fanduel'],
      'the full name arrived: the initial spelling is served as Kevin Kept, sorted with it');
    const paged = await get('&eventId=pr_nba_5&limit=2&offset=2');
    t.same([paged.body.map((x) => x.line), paged.res.headers.get('x-result-has-more'), paged.res.headers.get('x-next-offset')], [[24.5, 25.5], 'true', '4'],
      'a page from the middle, with more after it');
  });

  t.test('bounds and errors', async (t) => {
    for (const q of ['&limit=0', '&limit=10001', '&offset=-1', '&offset=10001', '&maxAgeSec=0', '&maxAgeSec=3601', '&dfsOdds=x', '&markets=h2h', '&grouped=maybe']) {
      const { res } = await get(q);
      t.equal(res.status, 422, `${q}: 422`);
      t.equal(res.headers.get('x-requests-last'), '0', 'charged nothing');
    }
    t.equal((await app.get(`/v1/sports/nope/props?apiKey=${key}`)).status, 404, 'unknown sport 404');
  });
});
