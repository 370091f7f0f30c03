// The Odds API v4, pure side: its documented JSON (fixtures) mapped into ingest observations, its usage headers,
// error bodies and Retry-After, the quota cadence formula and period, and FEED / THE_ODDS_API_* checking.

import t from 'tap';
import { eventRefs, mapEventOdds, mapSportOdds, newMapStats, parseJson, parseSports, readError, readUsage, retryAfterMs,
  UpstreamShapeError, type MappedBatch } from '../engine/theoddsapi.js';
import { cadence, nextPeriodStart, Quota } from '../engine/upstream-quota.js';
import { dataSourceHeader, feedBanner, parseFeeds, theOddsApiConfigFromEnv } from '../http/feeds.js';
import { fixture } from './helpers/theoddsapi-server.js';

const T = Date.parse('2026-11-23T18:00:00Z');

t.test('theoddsapi map - sport odds become events and one price per outcome', async (t) => {
  const out: MappedBatch = { events: [], prices: [] };
  const stats = newMapStats();
  const ids = mapSportOdds(parseJson(fixture('odds-basketball_nba.json')), out, stats, new Set());
  t.same(ids, ['e912304de2b2ce35b473ce2ecd3d1502', '0a6b3d5e7f9c1b2d4e6f8a0c2e4b6d8f'], 'event ids in order');
  t.same(out.events[0], {
    id: 'e912304de2b2ce35b473ce2ecd3d1502', sport_key: 'basketball_nba', commence_time: '2026-11-24T00:10:00Z',
    home_team: 'Boston Celtics', away_team: 'Miami Heat',
  }, 'a game keeps its teams');
  const dk = out.prices.filter((p) => p.book === 'draftkings');
  t.equal(dk.length, 6, 'draftkings: two outcomes in each of three markets');
  t.same(dk.find((p) => p.market === 'spreads' && p.outcome === 'Miami Heat'), {
    book: 'draftkings', event_id: 'e912304de2b2ce35b473ce2ecd3d1502', market: 'spreads', outcome: 'Miami Heat',
    point: 6.5, player: null, price: 1.91, ts: Date.parse('2026-11-23T17:58:12Z'),
  }, 'a spread outcome keeps its own point (ingest turns it to the home side) and ts comes from last_update');
  t.equal(dk.find((p) => p.market === 'totals')!.ts, Date.parse('2026-11-23T17:57:40Z'), "the market's last_update, not the book's");
  t.same(out.prices.find((p) => p.book === 'fanduel' && p.outcome === 'Under'), {
    book: 'fanduel', event_id: 'e912304de2b2ce35b473ce2ecd3d1502', market: 'totals', outcome: 'Under', point: null, player: null,
    price: 1.92, ts: Date.parse('2026-11-23T17:59:01Z'),
  }, 'an outcome missing its point is passed on as is: ingest rejects it and counts it');
  t.equal(out.prices.filter((p) => p.book === 'betfair_ex_uk').length, 2, 'the exchange: its back prices only');
  t.equal(stats.layMarkets, 1, 'h2h_lay left out and counted');
  t.same([...stats.unknownBooks], ['examplebook_zz'], 'a book the catalogue does not list is left out and named');
  t.notOk(out.prices.some((p) => p.book === 'examplebook_zz'), 'no price of it');
  t.same([...stats.books].sort(), ['betfair_ex_uk', 'betmgm', 'draftkings', 'fanduel'], 'books heard from');
  t.equal(stats.malformed, 0, 'nothing malformed');
});

t.test('theoddsapi map - player props from the event endpoint carry the player', async (t) => {
  const out: MappedBatch = { events: [], prices: [] };
  const stats = newMapStats();
  const seen = new Set(['e912304de2b2ce35b473ce2ecd3d1502']);
  mapEventOdds(parseJson(fixture('event-odds-e912304de2b2ce35b473ce2ecd3d1502.json')), out, stats, seen);
  t.equal(out.events.length, 0, 'an event already in the batch is not repeated');
  t.equal(out.prices.length, 6, 'six prop outcomes');
  t.same(out.prices[0], {
    book: 'draftkings', event_id: 'e912304de2b2ce35b473ce2ecd3d1502', market: 'player_points', outcome: 'Over',
    point: 27.5, player: 'Jayson Tatum', price: 1.83, ts: Date.parse('2026-11-23T17:58:30Z'),
  }, 'description is the player, name the side, point the line');
});

t.test('theoddsapi map - an outright sport becomes a futures event of selections', async (t) => {
  const out: MappedBatch = { events: [], prices: [] };
  mapSportOdds(parseJson(fixture('odds-basketball_nba_championship_winner.json')), out, newMapStats(), new Set());
  t.same(out.events[0], {
    id: '4f1c7c0e1f2a3b4c5d6e7f8091a2b3c4', sport_key: 'basketball_nba_championship_winner', commence_time: '2027-06-30T00:00:00Z',
    kind: 'futures', title: 'NBA Championship Winner',
  }, 'no teams: a futures event titled by sport_title');
  t.same(out.prices.map((p) => [p.outcome, p.player, p.point, p.price]), [
    ['Boston Celtics', null, null, 4.5], ['Denver Nuggets', null, null, 6], ['Oklahoma City Thunder', null, null, 3.4],
  ], "each selection is an outcome (ingest's outright form)");
});

t.test('theoddsapi map - shapes that are not v4', async (t) => {
  t.throws(() => parseJson('[{"id": "x", '), UpstreamShapeError, 'truncated JSON');
  t.throws(() => mapSportOdds({ message: 'hi' }, { events: [], prices: [] }, newMapStats(), new Set()), UpstreamShapeError, 'an object where an array belongs');
  t.throws(() => parseSports('x'), UpstreamShapeError, 'sports not an array');
  t.throws(() => eventRefs(null), UpstreamShapeError, 'events not an array');
  const stats = newMapStats();
  const out: MappedBatch = { events: [], prices: [] };
  mapSportOdds([7, { id: 'a', sport_key: 'basketball_nba', commence_time: 'x', home_team: 'A', away_team: 'B', bookmakers: [1, { key: 'draftkings', markets: [null, { key: 'h2h', outcomes: [2] }] }] }],
    out, stats, new Set());
  t.equal(stats.malformed, 4, 'a number event, a number bookmaker, a null market and a number outcome are counted');
  t.equal(out.events.length, 1, 'the well-formed event is still sent (ingest judges its commence_time)');
  // American odds where decimal ones were asked for (a proxy answering in its own format): the market is left out
  // (the ingest audit: 150 / 210 / 240 on a three-way market were served as decimal, a 6,312 % arbitrage)
  const am = newMapStats();
  const amOut: MappedBatch = { events: [], prices: [] };
  const game = (markets: unknown[]) => ({ id: 'am', sport_key: 'soccer_epl', commence_time: '2026-12-01T15:00:00Z', home_team: 'Arsenal', away_team: 'Chelsea',
    bookmakers: [{ key: 'williamhill', last_update: '2026-11-25T10:00:00Z', markets }] });
  mapSportOdds([game([
    { key: 'h2h', outcomes: [{ name: 'Arsenal', price: 150 }, { name: 'Chelsea', price: 210 }, { name: 'Draw', price: 240 }] },
    { key: 'spreads', outcomes: [{ name: 'Arsenal', price: -110, point: -0.5 }, { name: 'Chelsea', price: -110, point: 0.5 }] },
    { key: 'totals', outcomes: [{ name: 'Over', price: 1.9, point: 2.5 }, { name: 'Under', price: 1.95, point: 2.5 }] },
  ])], amOut, am, new Set());
  t.same(amOut.prices.map((p) => `${p.market} ${p.outcome} ${p.price}`), ['totals Over 1.9', 'totals Under 1.95'], 'only the decimal market is passed on');
  t.equal(am.malformed, 5, 'the five American prices counted malformed');
  const sports = parseSports(JSON.parse(fixture('sports.json')));
  t.same(sports.get('icehockey_nhl'), { key: 'icehockey_nhl', active: false, has_outrights: false }, 'out of season');
  t.equal(sports.get('basketball_nba_championship_winner')!.has_outrights, true, 'outright sport');
});

t.test('theoddsapi map - usage headers, error bodies, Retry-After', async (t) => {
  const h = new Headers({ 'x-requests-remaining': '19994', 'x-requests-used': '6', 'x-requests-last': '3' });
  t.same(readUsage((n) => h.get(n)), { remaining: 19994, used: 6, last: 3 }, 'the three headers');
  const none = readUsage(() => null);
  t.ok(Number.isNaN(none.remaining) && Number.isNaN(none.used) && Number.isNaN(none.last), 'absent: NaN');
  t.ok(Number.isNaN(readUsage((n) => (n === 'x-requests-remaining' ? 'lots' : null)).remaining), 'not a number: NaN');
  t.same(readError(fixture('error-out-of-usage-credits.json')).code, 'OUT_OF_USAGE_CREDITS', 'the documented error body');
  t.same(readError('<html>bad gateway</html>'), { code: null, message: null }, 'a proxy page');
  t.equal(retryAfterMs('120', T), 120_000, 'delay seconds');
  t.equal(retryAfterMs(new Date(T + 30_000).toUTCString(), T), 30_000, 'an HTTP date');
  t.equal(retryAfterMs(null, T), null, 'absent');
  t.equal(retryAfterMs('soon', T), null, 'unreadable');
  t.equal(retryAfterMs('99999999999', T), 3_600_000, 'at most an hour (a huge value stopped the feed for millennia)');
  t.equal(retryAfterMs(new Date(T + 86_400_000).toUTCString(), T), 3_600_000, 'an HTTP date a day away: an hour');
});

t.test('upstream quota - the cadence formula', async (t) => {
  const day = 86_400_000;
  t.same(cadence({ remaining: 20_000, reserve: 0, cycleCost: 6, msLeft: 15 * day, minMs: 60_000 }),
    { intervalMs: 388_800, spent: false }, '15 days x 6 credits / 20,000 credits = 388.8 s');
  t.same(cadence({ remaining: 20_000, reserve: 0, cycleCost: 6, msLeft: 60 * 60_000, minMs: 60_000 }),
    { intervalMs: 60_000, spent: false }, 'plenty for the hour left: the minimum interval');
  t.same(cadence({ remaining: 1_000, reserve: 400, cycleCost: 6, msLeft: day, minMs: 1000 }),
    { intervalMs: 864_000, spent: false }, 'the reserve is not spent: 86,400 s x 6 / 600');
  t.equal(cadence({ remaining: 5, reserve: 0, cycleCost: 6, msLeft: day, minMs: 1000 }).spent, true, 'cannot pay a cycle: spent');
  t.equal(cadence({ remaining: 10, reserve: 10, cycleCost: 0, msLeft: day, minMs: 1000 }).spent, true, 'nothing above the reserve: spent');
  t.same(cadence({ remaining: 100, reserve: 0, cycleCost: 0, msLeft: day, minMs: 5000 }), { intervalMs: 5000, spent: false }, 'a free cycle: the minimum');
  t.same(cadence({ remaining: Number.NaN, reserve: 0, cycleCost: 6, msLeft: day, minMs: 5000 }), { intervalMs: 5000, spent: false }, 'quota unknown yet: the minimum');
  const less = cadence({ remaining: 2_000, reserve: 0, cycleCost: 6, msLeft: 15 * day, minMs: 60_000 });
  t.ok(less.intervalMs > 388_800, 'fewer credits left: a longer interval');
});

t.test('upstream quota - the period and exhaustion', async (t) => {
  t.equal(nextPeriodStart(T, 1), Date.parse('2026-12-01T00:00:00Z'), 'the 1st of next month');
  t.equal(nextPeriodStart(T, 25), Date.parse('2026-11-25T00:00:00Z'), 'later this month');
  t.equal(nextPeriodStart(Date.parse('2026-12-15T00:00:00Z'), 1), Date.parse('2027-01-01T00:00:00Z'), 'over the year end');
  t.equal(nextPeriodStart(Date.parse('2027-02-01T00:00:00Z'), 31), Date.parse('2027-02-28T00:00:00Z'), 'day 31 falls on the last day of February');
  t.equal(nextPeriodStart(Date.parse('2026-12-01T00:00:00Z'), 1), Date.parse('2027-01-01T00:00:00Z'), 'strictly after now');
  const q = new Quota(1, 0);
  q.observe(T, { remaining: 10, used: 990, last: 3 });
  q.observe(T + 1, { remaining: Number.NaN, used: Number.NaN, last: Number.NaN });
  t.match(q.snapshot(T + 1), { remaining: 10, used: 990, last: 3, exhausted: false, period_ends_at: '2026-12-01T00:00:00.000Z' }, 'headers kept when a response has none');
  q.exhaust(T, 'OUT_OF_USAGE_CREDITS');
  t.ok(q.exhausted(T + 86_400_000), 'still spent the next day');
  t.match(q.snapshot(T), { exhausted: true, exhausted_reason: 'OUT_OF_USAGE_CREDITS', resumes_at: '2026-12-01T00:00:00.000Z' }, 'snapshot says until when');
  t.notOk(q.exhausted(Date.parse('2026-12-01T00:00:00Z')), 'the period rolled over: polling may resume');
  t.equal(q.exhaustedUntil, 0, 'cleared');
  t.ok(Number.isNaN(q.remaining), "the last period's remaining is forgotten");
});

t.test('feeds - FEED and THE_ODDS_API_* are checked at start-up', async (t) => {
  t.same(parseFeeds(undefined), ['sim'], 'default sim');
  t.same(parseFeeds('none'), [], 'none');
  t.same(parseFeeds(' sim , theoddsapi '), ['sim', 'theoddsapi'], 'a comma list');
  t.same(parseFeeds('theoddsapi,theoddsapi'), ['theoddsapi'], 'once each');
  t.throws(() => parseFeeds('sim,oddsjam'), /FEED "oddsjam" is not known: use none, or a comma list of sim, theoddsapi/, 'unknown name');
  t.throws(() => parseFeeds('none,sim'), /cannot be combined/, 'none with another');
  t.equal(dataSourceHeader([]), null, 'no feed: no header');
  t.equal(dataSourceHeader(['sim']), 'simulated', 'sim alone: simulated');
  t.equal(dataSourceHeader(['theoddsapi']), 'theoddsapi', 'real upstream data is not labelled simulated');
  t.equal(dataSourceHeader(['sim', 'theoddsapi']), 'simulated, theoddsapi', 'both: the response may hold either');
  t.match(feedBanner(['sim', 'theoddsapi']), /SIMULATED.*real upstream prices from The Odds API\); raw_json.feed names the source/, 'banner');
  t.throws(() => theOddsApiConfigFromEnv({}), /needs THE_ODDS_API_KEY/, 'key required');
  const env = { THE_ODDS_API_KEY: 'k' };
  const c = theOddsApiConfigFromEnv(env);
  t.match(c, { base: 'https://api.the-odds-api.com', markets: ['h2h', 'spreads', 'totals'], regions: ['us'], minIntervalMs: 60_000, resetDay: 1 }, 'defaults');
  t.throws(() => theOddsApiConfigFromEnv({ ...env, THE_ODDS_API_SPORTS: 'basketball_nba,basketball_xyz' }), /basketball_xyz/, 'unknown sport');
  t.throws(() => theOddsApiConfigFromEnv({ ...env, THE_ODDS_API_MARKETS: 'h2h,h2h_3_way' }), /asked as h2h/, 'h2h_3_way is not an upstream key');
  t.throws(() => theOddsApiConfigFromEnv({ ...env, THE_ODDS_API_REGIONS: 'us,mars' }), /mars/, 'unknown region');
  t.throws(() => theOddsApiConfigFromEnv({ ...env, THE_ODDS_API_BASE: 'ftp://x' }), /http\(s\)/, 'base scheme');
  t.throws(() => theOddsApiConfigFromEnv({ ...env, THE_ODDS_API_RESET_DAY: '0' }), /THE_ODDS_API_RESET_DAY must be an integer from 1 to 31/, 'reset day');
  t.match(theOddsApiConfigFromEnv({ ...env, THE_ODDS_API_MARKETS: 'h2h,player_points', THE_ODDS_API_MIN_INTERVAL_S: '5' }),
    { markets: ['h2h', 'player_points'], minIntervalMs: 5000 }, 'props and interval');
});
