import t from 'tap';
import { MARKETS, OUTRIGHTS, isOutright, marketByKey, marketsForFamily } from '../engine/catalogue.js';
import { OUTRIGHT_MARKET, SLOT, isRejection, parseEvent, parsePrice, type EventRecord, type Rejection } from '../engine/ingest.js';

const NOW = Date.parse('2026-10-01T12:00:00Z');
const SEASON = '2026-10-20T23:30:00Z';

function code(r: unknown): string {
  return isRejection(r) ? r.error_code : 'OK';
}

function mustEvent(raw: unknown, known?: EventRecord): EventRecord {
  const r = parseEvent(raw, NOW, known);
  if (isRejection(r)) throw new Error(`fixture event rejected: ${r.error_code} ${r.message}`);
  return r;
}

const futures = mustEvent({ id: 'nba-champ-2027', sport_key: 'basketball_nba', commence_time: SEASON, kind: 'futures', title: 'NBA Championship 2026-27' });
const masters = mustEvent({ id: 'masters-2027', sport_key: 'golf_masters_tournament', commence_time: '2027-04-08T12:00:00Z', kind: 'event_market', title: 'The Masters 2027' });
const game = mustEvent({ id: 'nba-g1', sport_key: 'basketball_nba', commence_time: SEASON, home_team: 'Boston Celtics', away_team: 'New York Knicks' });
const KNOWN = new Map([futures, masters, game].map((e) => [e.id, e]));
const lookup = (id: string) => KNOWN.get(id);

function price(over: Record<string, unknown>) {
  return parsePrice({ book: 'draftkings', event_id: futures.id, market: OUTRIGHTS, outcome: 'Boston Celtics', price: 4.5, ts: NOW - 1000, ...over }, lookup, NOW);
}

t.test('futures - the outright market: every family, one label, a selection line of two sides without a point', async (t) => {
  const m = marketByKey(OUTRIGHTS)!;
  t.ok(m, 'outrights is in the catalogue (The Odds API v4 key)');
  t.equal(isOutright(m), true, 'isOutright');
  t.equal(MARKETS[OUTRIGHT_MARKET], m, 'OUTRIGHT_MARKET is its index');
  t.equal(MARKETS.indexOf(m), MARKETS.length - 1, 'added last: the ids of earlier markets did not move');
  t.equal(m.shape, 'over_under', 'two sides: Yes (slot 0) and No (slot 1)');
  t.same([SLOT.YES, SLOT.NO], [SLOT.OVER, SLOT.UNDER], 'Yes and No take the over/under slots');
  for (const fam of ['basketball', 'golf', 'horse_racing', 'soccer']) {
    t.ok(marketsForFamily(fam).includes(m), `offered for ${fam}`);
  }
  t.equal(isOutright(marketByKey('player_points')!), false, 'a player prop is not an outright');
});

t.test('futures - events without teams: kinds, title, no teams', async (t) => {
  t.equal(futures.kind, 'futures', 'kind futures');
  t.same([futures.home, futures.away, futures.title], ['', '', 'NBA Championship 2026-27'], 'no teams, a title');
  t.equal(masters.kind, 'event_market', 'kind event_market');
  t.equal(game.kind, 'game', 'kind defaults to game');
  t.equal(game.title, null, 'a game has no title');
  t.equal(code(parseEvent({ id: 'g2', sport_key: 'basketball_nba', commence_time: SEASON, kind: 'game', home_team: 'A', away_team: 'B' }, NOW)), 'OK', 'kind game may be explicit');
  t.equal(code(parseEvent({ id: 'f2', sport_key: 'basketball_nba', commence_time: SEASON, kind: 'futures', title: 'MVP', home_team: null, away_team: null }, NOW)), 'OK', 'null teams are absent teams');
  const base = { id: 'f3', sport_key: 'basketball_nba', commence_time: SEASON };
  const cases: [string, Record<string, unknown>][] = [
    ['unknown kind', { kind: 'outright', title: 'x' }],
    ['kind not a string', { kind: 1, title: 'x' }],
    ['futures without a title', { kind: 'futures' }],
    ['futures with a blank title', { kind: 'futures', title: '   ' }],
    ['futures with a title over 200 characters', { kind: 'futures', title: 'x'.repeat(201) }],
    ['futures with a home team', { kind: 'futures', title: 'x', home_team: 'Boston Celtics' }],
    ['event_market with an away team', { kind: 'event_market', title: 'x', away_team: 'Boston Celtics' }],
    ['a game with a title', { home_team: 'A', away_team: 'B', title: 'A vs B' }],
    ['a game without teams', { kind: 'game', title: undefined }],
    ['probable pitchers on a futures event', { sport_key: 'baseball_mlb', kind: 'futures', title: 'World Series 2027', probable_pitchers: { home: null, away: null, venue: null, game_status: null } }],
  ];
  for (const [why, over] of cases) {
    const r = parseEvent({ ...base, ...over }, NOW);
    t.equal(code(r), 'INVALID_EVENT', `${why} -> INVALID_EVENT`);
    t.ok(isRejection(r) && r.message.length > 0, `${why}: has a message`);
  }
  const flip = parseEvent({ id: futures.id, sport_key: 'basketball_nba', commence_time: SEASON, kind: 'game', home_team: 'A', away_team: 'B' }, NOW, futures);
  t.equal(code(flip), 'INVALID_EVENT', 'a futures event cannot become a game');
  t.match((flip as Rejection).message, /kind cannot change/, 'and says why');
  const back = parseEvent({ id: game.id, sport_key: 'basketball_nba', commence_time: SEASON, kind: 'futures', title: 'x' }, NOW, game);
  t.equal(code(back), 'INVALID_EVENT', 'nor a game a futures event');
  t.equal(code(parseEvent({ id: futures.id, sport_key: 'basketball_nba', commence_time: SEASON, kind: 'futures', title: 'NBA Finals 2027' }, NOW, futures)), 'OK', 'a futures event may be renamed');
  const update = parseEvent({ id: futures.id, sport_key: 'basketball_nba', commence_time: SEASON, title: 'NBA Finals 2027', status: 'live' }, NOW, futures);
  t.ok(!isRejection(update) && update.kind === 'futures' && update.status === 'live', 'an update without kind keeps the known kind');
  const teams = parseEvent({ id: futures.id, sport_key: 'basketball_nba', commence_time: SEASON, home_team: 'A', away_team: 'B' }, NOW, futures);
  t.equal(code(teams), 'INVALID_EVENT', 'so teams on a futures update are refused');
});

t.test('futures - outright prices: the v4 form and the Yes/No contract form', async (t) => {
  const v4 = price({});
  t.ok(!isRejection(v4), 'the selection as outcome is accepted');
  if (isRejection(v4)) return;
  t.same([v4.market, v4.player, v4.outcome, v4.price], [OUTRIGHT_MARKET, 'Boston Celtics', SLOT.YES, 4.5], 'the selection is the line, its price the Yes side');
  t.ok(Number.isNaN(v4.point), 'no point');
  const no = price({ book: 'kalshi', player: 'Boston Celtics', outcome: 'No', price: 1 / 0.8 });
  t.ok(!isRejection(no) && no.outcome === SLOT.NO && no.player === 'Boston Celtics', 'a No contract on the selection');
  const yes = price({ book: 'kalshi', player: '  Boston   Celtics ', outcome: 'yes', price: 1 / 0.21 });
  t.ok(!isRejection(yes) && yes.outcome === SLOT.YES && yes.player === 'Boston Celtics', 'Yes in any case, the selection folded like names');
  const golfer = parsePrice({ book: 'fanduel', event_id: masters.id, market: OUTRIGHTS, outcome: 'Scottie Scheffler', price: 5.5 }, lookup, NOW);
  t.ok(!isRejection(golfer) && golfer.ts === NOW, 'an event market takes outrights; ts defaults to now');
  const prop = parsePrice({ book: 'fanduel', event_id: futures.id, market: 'player_points', player: 'Jayson Tatum', point: 1850.5, outcome: 'Over', price: 1.9 }, lookup, NOW);
  t.equal(code(prop), 'OK', 'a season-long player prop on a futures event');
});

t.test('futures - outright and game-line rejections', async (t) => {
  const cases: [string, unknown, string][] = [
    ['h2h on a futures event', parsePrice({ book: 'draftkings', event_id: futures.id, market: 'h2h', outcome: 'Boston Celtics', price: 1.9 }, lookup, NOW), 'MARKET_NOT_OFFERED'],
    ['totals on an event market', parsePrice({ book: 'draftkings', event_id: masters.id, market: 'totals', outcome: 'Over', point: 280.5, price: 1.9 }, lookup, NOW), 'MARKET_NOT_OFFERED'],
    ['outrights on a game', parsePrice({ book: 'draftkings', event_id: game.id, market: OUTRIGHTS, outcome: 'Boston Celtics', price: 1.9 }, lookup, NOW), 'MARKET_NOT_OFFERED'],
    ['a point on an outright', price({ point: 0.5 }), 'INVALID_POINT'],
    ['Yes without a selection', price({ outcome: 'Yes' }), 'INVALID_OUTCOME'],
    ['No without a selection', price({ outcome: 'NO' }), 'INVALID_OUTCOME'],
    ['a selection with an outcome other than Yes or No', price({ player: 'Boston Celtics', outcome: 'Over' }), 'INVALID_OUTCOME'],
    ['a blank outcome', price({ outcome: '  ' }), 'INVALID_OUTCOME'],
    ['an outcome over 200 characters', price({ outcome: 'x'.repeat(201) }), 'INVALID_OUTCOME'],
    ['a blank selection', price({ player: ' ', outcome: 'Yes' }), 'INVALID_PLAYER'],
    ['a selection not a string', price({ player: 7, outcome: 'Yes' }), 'INVALID_PLAYER'],
    ['a price of 1', price({ price: 1 }), 'INVALID_PRICE'],
    ['a price as a string', price({ price: '4.5' }), 'INVALID_PRICE'],
    ['ts in the future', price({ ts: NOW + 120_000 }), 'INVALID_TIMESTAMP'],
    ['ts not an integer', price({ ts: 1.5 }), 'INVALID_TIMESTAMP'],
  ];
  for (const [why, r, want] of cases) {
    t.equal(code(r), want, `${why} -> ${want}`);
    t.ok(isRejection(r) && r.message.length > 0, `${why}: has a message`);
  }
});
