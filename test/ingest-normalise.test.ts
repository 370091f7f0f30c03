import t from 'tap';
import { MARKETS, sportByKey } from '../engine/catalogue.js';
import {
  BOOK_INDEX,
  MARKET_INDEX,
  MAX_FUTURE_SKEW_MS,
  SLOT,
  isRejection,
  parseEvent,
  parsePrice,
  parseTime,
  type EventRecord,
  type PriceRecord,
  type Rejection,
} from '../engine/ingest.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const LATER = '2026-03-01T19:00:00Z';

function code(r: unknown): string {
  return isRejection(r) ? r.error_code : 'OK';
}

function mustEvent(raw: unknown, now = NOW): EventRecord {
  const r = parseEvent(raw, now);
  if (isRejection(r)) throw new Error(`fixture event rejected: ${r.error_code} ${r.message}`);
  return r;
}

const nba = mustEvent({ id: 'nba-1', sport_key: 'basketball_nba', commence_time: LATER, home_team: 'Los Angeles Lakers', away_team: 'Boston Celtics' });
const mlb = mustEvent({ id: 'mlb-1', sport_key: 'baseball_mlb', commence_time: LATER, home_team: 'New York Yankees', away_team: 'Boston Red Sox' });
const epl = mustEvent({ id: 'epl-1', sport_key: 'soccer_epl', commence_time: LATER, home_team: 'Arsenal', away_team: 'Chelsea' });
const cricket = mustEvent({ id: 'cricket-1', sport_key: 'cricket_test_match', commence_time: LATER, home_team: 'England', away_team: 'India' });
const done = mustEvent({ id: 'nba-final', sport_key: 'basketball_nba', commence_time: '2026-02-28T19:00:00Z', home_team: 'Miami Heat', away_team: 'Orlando Magic', status: 'final' });
const KNOWN = new Map([nba, mlb, epl, cricket, done].map((e) => [e.id, e]));
const lookup = (id: string): EventRecord | undefined => KNOWN.get(id);

/** a valid NBA moneyline price; override fields to test one rule at a time */
function price(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { book: 'draftkings', event_id: 'nba-1', market: 'h2h', outcome: 'Los Angeles Lakers', price: 1.91, ts: NOW - 1000, ...over };
}

function must(raw: unknown, now = NOW): PriceRecord {
  const r = parsePrice(raw, lookup, now);
  if (isRejection(r)) throw new Error(`expected a price record, got ${r.error_code}: ${r.message}`);
  return r;
}

function rejectCode(raw: unknown, now = NOW): string {
  return code(parsePrice(raw, lookup, now));
}

function eventItem(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'ev-1', sport_key: 'basketball_nba', commence_time: LATER, home_team: 'Denver Nuggets', away_team: 'Utah Jazz', ...over };
}

// ---------------------------------------------------------------------------------------------------------------
// parseEvent rejections

t.test('ingest - an item that is not an object is INVALID_ITEM', async (t) => {
  for (const raw of [null, undefined, 42, 'event', true, [], [eventItem()]]) {
    t.equal(code(parseEvent(raw, NOW)), 'INVALID_ITEM', `event ${JSON.stringify(raw)} -> INVALID_ITEM`);
    t.equal(code(parsePrice(raw, lookup, NOW)), 'INVALID_ITEM', `price ${JSON.stringify(raw)} -> INVALID_ITEM`);
  }
});

t.test('ingest - event validation: INVALID_EVENT variants', async (t) => {
  const cases: [string, Record<string, unknown>][] = [
    ['id missing', { id: undefined }],
    ['id not a string', { id: 17 }],
    ['id empty', { id: '' }],
    ['id with a space', { id: 'ev 1' }],
    ['id with a slash', { id: 'ev/1' }],
    ['id of 129 characters', { id: 'x'.repeat(129) }],
    ['sport_key missing', { sport_key: undefined }],
    ['sport_key not a string', { sport_key: 5 }],
    ['commence_time missing', { commence_time: undefined }],
    ['commence_time a date only', { commence_time: '2026-03-01' }],
    ['commence_time without a zone', { commence_time: '2026-03-01T19:00:00' }],
    ['commence_time a word', { commence_time: 'tomorrow' }],
    ['commence_time fractional ms', { commence_time: 1772391600000.5 }],
    ['commence_time negative', { commence_time: -1 }],
    ['home_team missing', { home_team: undefined }],
    ['away_team not a string', { away_team: 12 }],
    ['home_team blank', { home_team: '   ' }],
    ['away_team over 200 characters', { away_team: 'A'.repeat(201) }],
    ['same teams', { away_team: 'Denver Nuggets' }],
    ['same teams differing in case and spacing', { away_team: '  denver   NUGGETS ' }],
    ['status unknown', { status: 'postponed' }],
    ['status in capitals', { status: 'LIVE' }],
    ['status not a string', { status: 1 }],
  ];
  for (const [why, over] of cases) {
    const r = parseEvent(eventItem(over), NOW);
    t.equal(code(r), 'INVALID_EVENT', `${why} -> INVALID_EVENT`);
    t.ok(isRejection(r) && r.message.length > 0, `${why}: has a message`);
  }
  t.equal((parseEvent(eventItem({ commence_time: '2026-03-01T19:00:00.999Z' }), NOW) as EventRecord).commence, Date.parse('2026-03-01T19:00:00Z'),
    'a start time is kept to the second (as it is served and filtered on)');
  t.equal((parseEvent(eventItem({ commence_time: Date.parse('2026-03-01T19:00:00Z') + 250 }), NOW) as EventRecord).commence, Date.parse('2026-03-01T19:00:00Z'),
    'in epoch milliseconds too');
  t.equal(code(parseEvent(eventItem({ id: 'x'.repeat(128) }), NOW)), 'OK', 'id of 128 characters is fine');
  t.equal(code(parseEvent(eventItem({ id: 'a-Z_0.9:x' }), NOW)), 'OK', 'id may use letters, digits, _ . : -');
  t.equal(code(parseEvent(eventItem({ away_team: 'A'.repeat(200) }), NOW)), 'OK', 'a 200-character name is fine');
});

t.test('ingest - an event cannot change sport', async (t) => {
  const known = mustEvent(eventItem());
  const r = parseEvent(eventItem({ sport_key: 'basketball_wnba' }), NOW, known);
  t.equal(code(r), 'INVALID_EVENT', 'sport_key change -> INVALID_EVENT');
  t.match((r as Rejection).message, /basketball_nba/, 'the message names the sport it belongs to');
  const same = parseEvent(eventItem({ home_team: 'Denver Nuggets', commence_time: '2026-03-02T01:00:00Z' }), NOW, known);
  t.equal(code(same), 'OK', 'an update in the same sport is fine');
});

t.test('ingest - the teams of a known game cannot change sides', async (t) => {
  // regression: quotes are held by side, so swapping home and away moved every price to the other team
  const known = mustEvent(eventItem());
  const swap = parseEvent(eventItem({ home_team: known.away, away_team: known.home }), NOW, known);
  t.equal(code(swap), 'INVALID_EVENT', 'home and away swapped: INVALID_EVENT');
  t.match((swap as Rejection).message, /cannot change sides/, 'and says why');
  t.equal(code(parseEvent(eventItem({ home_team: known.away.toUpperCase(), away_team: 'Someone Else' }), NOW, known)), 'INVALID_EVENT',
    'the away team moving home (any case): INVALID_EVENT');
  t.equal(code(parseEvent(eventItem({ away_team: known.home }), NOW, known)), 'INVALID_EVENT', 'the home team moving away (home and away equal is caught first or here)');
  t.equal(code(parseEvent(eventItem({ home_team: 'Los Angeles Lakers (renamed)' }), NOW, known)), 'OK', 'renaming a side is fine');
  t.equal(code(parseEvent(eventItem({ home_team: known.away, away_team: known.home }), NOW)), 'OK', 'a new event may have either orientation');
});

t.test('ingest - unknown sport is UNKNOWN_SPORT', async (t) => {
  for (const key of ['basketball_xyz', 'soccer', 'NBA', '']) {
    t.equal(code(parseEvent(eventItem({ sport_key: key }), NOW)), 'UNKNOWN_SPORT', `${JSON.stringify(key)} -> UNKNOWN_SPORT`);
  }
});

// ---------------------------------------------------------------------------------------------------------------
// parsePrice rejections

t.test('ingest - unknown and inactive books', async (t) => {
  t.equal(rejectCode(price({ book: undefined })), 'UNKNOWN_BOOK', 'missing book -> UNKNOWN_BOOK');
  t.equal(rejectCode(price({ book: 7 })), 'UNKNOWN_BOOK', 'numeric book -> UNKNOWN_BOOK');
  t.equal(rejectCode(price({ book: 'nosuchbook' })), 'UNKNOWN_BOOK', 'unknown key -> UNKNOWN_BOOK');
  t.equal(rejectCode(price({ book: 'DraftKings' })), 'UNKNOWN_BOOK', 'book keys are case-sensitive');
  const merged = parsePrice(price({ book: 'pointsbetus' }), lookup, NOW);
  t.equal(code(merged), 'INACTIVE_BOOK', 'merged book (pointsbetus) -> INACTIVE_BOOK');
  t.match((merged as Rejection).message, /merged into fanatics/, 'the message names the book it merged into');
  t.equal(rejectCode(price({ book: 'foxbet' })), 'INACTIVE_BOOK', 'decommissioned book (foxbet) -> INACTIVE_BOOK');
  t.equal(rejectCode(price({ book: 'bet365' })), 'INACTIVE_BOOK', 'not yet integrated (bet365) -> INACTIVE_BOOK');
});

t.test('ingest - unknown or final events', async (t) => {
  t.equal(rejectCode(price({ event_id: undefined })), 'EVENT_NOT_FOUND', 'missing event_id -> EVENT_NOT_FOUND');
  t.equal(rejectCode(price({ event_id: 123 })), 'EVENT_NOT_FOUND', 'numeric event_id -> EVENT_NOT_FOUND');
  t.equal(rejectCode(price({ event_id: 'nba-404' })), 'EVENT_NOT_FOUND', 'unknown event_id -> EVENT_NOT_FOUND');
  t.equal(rejectCode(price({ event_id: 'nba-final', outcome: 'Miami Heat' })), 'INVALID_EVENT', 'a final event takes no prices');
});

t.test('ingest - markets: unknown, and not offered for the sport', async (t) => {
  t.equal(rejectCode(price({ market: undefined })), 'UNKNOWN_MARKET', 'missing market -> UNKNOWN_MARKET');
  t.equal(rejectCode(price({ market: 'h2h_lay' })), 'UNKNOWN_MARKET', 'unknown market -> UNKNOWN_MARKET');
  t.equal(rejectCode(price({ market: 'H2H' })), 'UNKNOWN_MARKET', 'market keys are case-sensitive');
  t.equal(rejectCode(price({ market: 'h2h_3_way' })), 'MARKET_NOT_OFFERED', 'h2h_3_way on basketball_nba -> MARKET_NOT_OFFERED');
  t.equal(rejectCode(price({ event_id: 'mlb-1', market: 'player_rebounds', outcome: 'Over', point: 5.5, player: 'Aaron Judge' })),
    'MARKET_NOT_OFFERED', 'a basketball prop on baseball_mlb -> MARKET_NOT_OFFERED');
  t.equal(rejectCode(price({ event_id: 'mlb-1', market: 'player_points', outcome: 'Over', point: 0.5, player: 'Aaron Judge' })),
    'MARKET_NOT_OFFERED', 'player_points (basketball, icehockey) on baseball_mlb -> MARKET_NOT_OFFERED');
  t.equal(rejectCode(price({ event_id: 'mlb-1', market: 'player_hits', outcome: 'Over', point: 1.5, player: 'Aaron Judge' })),
    'OK', 'a baseball prop on baseball_mlb is fine');
});

t.test('ingest - outcomes must belong to the market', async (t) => {
  t.equal(rejectCode(price({ outcome: undefined })), 'INVALID_OUTCOME', 'missing outcome');
  t.equal(rejectCode(price({ outcome: 3 })), 'INVALID_OUTCOME', 'numeric outcome');
  t.equal(rejectCode(price({ outcome: 'Golden State Warriors' })), 'INVALID_OUTCOME', 'a team not in the event');
  t.equal(rejectCode(price({ outcome: 'Draw' })), 'INVALID_OUTCOME', 'Draw on a two-way moneyline');
  t.equal(rejectCode(price({ outcome: 'Over' })), 'INVALID_OUTCOME', 'Over on a moneyline');
  t.equal(rejectCode(price({ market: 'totals', point: 220.5, outcome: 'Los Angeles Lakers' })), 'INVALID_OUTCOME', 'a team on totals');
  t.equal(rejectCode(price({ market: 'spreads', point: 3.5, outcome: 'Draw' })), 'INVALID_OUTCOME', 'Draw on spreads');
  const r = parsePrice(price({ outcome: 'Nobody' }), lookup, NOW) as Rejection;
  t.match(r.message, /Los Angeles Lakers, Boston Celtics/, 'the message lists the valid outcomes');
});

t.test('ingest - points: required, forbidden, or out of range', async (t) => {
  const spreads = { market: 'spreads', outcome: 'Los Angeles Lakers' };
  t.equal(rejectCode(price({ ...spreads })), 'INVALID_POINT', 'missing on spreads');
  t.equal(rejectCode(price({ ...spreads, point: null })), 'INVALID_POINT', 'null on spreads');
  t.equal(rejectCode(price({ market: 'totals', outcome: 'Over' })), 'INVALID_POINT', 'missing on totals');
  t.equal(rejectCode(price({ point: 3.5 })), 'INVALID_POINT', 'present on h2h');
  t.equal(rejectCode(price({ point: 0 })), 'INVALID_POINT', 'zero is still a point on h2h');
  t.equal(rejectCode(price({ event_id: 'epl-1', outcome: 'Draw', point: 0.5 })), 'INVALID_POINT', 'present on h2h_3_way');
  t.equal(rejectCode(price({ ...spreads, point: 0.3 })), 'INVALID_POINT', '0.3 is not a multiple of 0.25');
  t.equal(rejectCode(price({ ...spreads, point: 5000 })), 'INVALID_POINT', '5000 is out of range');
  t.equal(rejectCode(price({ ...spreads, point: -2000.25 })), 'INVALID_POINT', '-2000.25 is out of range');
  t.equal(rejectCode(price({ ...spreads, point: '3.5' })), 'INVALID_POINT', 'a string point');
  t.equal(rejectCode(price({ ...spreads, point: Number.NaN })), 'INVALID_POINT', 'NaN');
  t.equal(rejectCode(price({ ...spreads, point: Number.POSITIVE_INFINITY })), 'INVALID_POINT', 'Infinity');
  t.equal(rejectCode(price({ ...spreads, point: 2000 })), 'OK', '2000 is the largest point');
  t.equal(rejectCode(price({ ...spreads, point: -2000 })), 'OK', '-2000 is fine');
  t.equal(rejectCode(price({ ...spreads, point: -3.75 })), 'OK', 'quarter lines are fine');
  t.equal(rejectCode(price({ point: null })), 'OK', 'null point on h2h means none');
});

t.test('ingest - players: required on props, forbidden elsewhere', async (t) => {
  const prop = { market: 'player_points', outcome: 'Over', point: 24.5 };
  t.equal(rejectCode(price({ ...prop })), 'INVALID_PLAYER', 'missing on a prop');
  t.equal(rejectCode(price({ ...prop, player: '   ' })), 'INVALID_PLAYER', 'blank on a prop');
  t.equal(rejectCode(price({ ...prop, player: 23 })), 'INVALID_PLAYER', 'numeric on a prop');
  t.equal(rejectCode(price({ ...prop, player: 'L'.repeat(201) })), 'INVALID_PLAYER', 'over 200 characters');
  t.equal(rejectCode(price({ player: 'LeBron James' })), 'INVALID_PLAYER', 'present on h2h');
  t.equal(rejectCode(price({ market: 'totals', outcome: 'Over', point: 220.5, player: 'LeBron James' })), 'INVALID_PLAYER', 'present on totals');
  t.equal(rejectCode(price({ player: null })), 'OK', 'null player on h2h means none');
  const r = must(price({ ...prop, player: '  LeBron   James ' }));
  t.equal(r.player, 'LeBron James', 'player name trimmed and inner spaces collapsed');
  t.equal(r.market, MARKET_INDEX.get('player_points'), 'prop market index');
  t.equal(r.outcome, SLOT.OVER, 'Over slot');
  t.equal(r.point, 24.5, 'prop point kept');
});

t.test('ingest - prices must be decimal odds above 1', async (t) => {
  for (const [p, why] of [
    [1, 'exactly 1'], [0.9, 'below 1'], [0, 'zero'], [-1.5, 'negative'], ['2.0', 'a string'], [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'], [undefined, 'missing'], [100_001, 'above 100000'],
  ] as [unknown, string][]) {
    t.equal(rejectCode(price({ price: p })), 'INVALID_PRICE', `${why} -> INVALID_PRICE`);
  }
  t.equal(must(price({ price: 1.01 })).price, 1.01, '1.01 is accepted');
  // null is a withdrawal of the book's market: price 0 in the observation, no outcome or point needed
  const w = must(price({ price: null, outcome: undefined, point: 7.5 }));
  t.same([w.price, w.outcome, Number.isNaN(w.point)], [0, 0, true], 'null withdraws: price 0, the point not read');
  t.equal(must(price({ price: 100_000 })).price, 100_000, '100000 is accepted');
});

t.test('ingest - timestamps: epoch ms, not beyond 60 s in the future', async (t) => {
  t.equal(MAX_FUTURE_SKEW_MS, 60_000, 'skew allowance is 60 s');
  t.equal(rejectCode(price({ ts: NOW + 60_001 })), 'INVALID_TIMESTAMP', '60.001 s in the future');
  t.equal(rejectCode(price({ ts: NOW + 3_600_000 })), 'INVALID_TIMESTAMP', 'an hour in the future');
  t.equal(rejectCode(price({ ts: NOW - 0.5 })), 'INVALID_TIMESTAMP', 'a non-integer');
  t.equal(rejectCode(price({ ts: String(NOW) })), 'INVALID_TIMESTAMP', 'a numeric string');
  t.equal(rejectCode(price({ ts: '2026-03-01T12:00:00Z' })), 'INVALID_TIMESTAMP', 'an ISO string (ts is epoch ms only)');
  t.equal(rejectCode(price({ ts: 0 })), 'INVALID_TIMESTAMP', 'zero');
  t.equal(rejectCode(price({ ts: -5 })), 'INVALID_TIMESTAMP', 'negative');
  t.equal(rejectCode(price({ ts: Number.NaN })), 'INVALID_TIMESTAMP', 'NaN');
  t.equal(must(price({ ts: NOW + 60_000 })).ts, NOW, 'exactly 60 s ahead is accepted, taken as now');
  t.equal(must(price({ ts: NOW + 50_000 })).ts, NOW, 'a ts ahead of the clock is taken as now (no last_update in the future)');
  t.equal(must(price({ ts: NOW - 86_400_000 })).ts, NOW - 86_400_000, 'a day old is accepted (staleness is the store\'s job)');
  t.equal(must(price({ ts: undefined })).ts, NOW, 'missing ts defaults to now');
  t.equal(must(price({ ts: null })).ts, NOW, 'null ts defaults to now');
});

// ---------------------------------------------------------------------------------------------------------------
// Normalisation

t.test('ingest - h2h on a soccer sport is the three-way moneyline, with Draw', async (t) => {
  const three = MARKET_INDEX.get('h2h_3_way')!;
  const home = must(price({ event_id: 'epl-1', outcome: 'Arsenal' }));
  t.equal(home.market, three, 'h2h on soccer_epl resolves to h2h_3_way');
  t.equal(MARKETS[home.market].shape, 'three_way', 'three-way shape');
  t.equal(home.outcome, SLOT.HOME, 'home slot');
  t.equal(must(price({ event_id: 'epl-1', outcome: 'Chelsea' })).outcome, SLOT.AWAY, 'away slot');
  const draw = must(price({ event_id: 'epl-1', outcome: 'Draw' }));
  t.equal(draw.market, three, 'Draw on h2h (soccer) is accepted');
  t.equal(draw.outcome, SLOT.DRAW, 'draw slot');
  t.ok(Number.isNaN(draw.point), 'no point');
  t.equal(draw.player, null, 'no player');
  t.equal(must(price({ event_id: 'epl-1', market: 'h2h_3_way', outcome: 'draw' })).market, three, 'h2h_3_way by name, draw lower-case');
  t.equal(must(price({ event_id: 'cricket-1', outcome: 'Draw' })).market, three, 'a three-way sport outside soccer (test cricket) too');
  t.equal(sportByKey('soccer_epl')!.three_way, true, 'precondition: soccer is three-way');
  t.equal(must(price({ outcome: 'Boston Celtics' })).market, MARKET_INDEX.get('h2h'), 'NBA h2h stays two-way');
});

t.test('ingest - spreads: the away outcome\'s point is negated into the home-side line point', async (t) => {
  const home = must(price({ market: 'spreads', outcome: 'Los Angeles Lakers', point: -3.5 }));
  const away = must(price({ market: 'spreads', outcome: 'Boston Celtics', point: 3.5 }));
  t.equal(home.point, -3.5, 'home -3.5 stays -3.5');
  t.equal(away.point, -3.5, 'away +3.5 is the same line: -3.5');
  t.equal(home.outcome, SLOT.HOME, 'home slot');
  t.equal(away.outcome, SLOT.AWAY, 'away slot');
  t.equal(must(price({ market: 'spreads', outcome: 'Boston Celtics', point: -7 })).point, 7, 'away -7 is home +7');
  const pk = must(price({ market: 'spreads', outcome: 'Boston Celtics', point: 0 }));
  t.ok(Object.is(pk.point, 0), 'a pick\'em away line is +0, never -0 (keys must not split)');
  const over = must(price({ market: 'totals', outcome: 'Over', point: 220.5 }));
  const under = must(price({ market: 'totals', outcome: 'Under', point: 220.5 }));
  t.equal(over.point, 220.5, 'totals Over keeps its point');
  t.equal(under.point, 220.5, 'totals Under is not negated');
  t.equal(over.outcome, SLOT.OVER, 'over slot');
  t.equal(under.outcome, SLOT.UNDER, 'under slot');
});

t.test('ingest - outcome names match case-insensitively', async (t) => {
  t.equal(must(price({ outcome: 'los angeles lakers' })).outcome, SLOT.HOME, 'lower case home');
  t.equal(must(price({ outcome: 'BOSTON CELTICS' })).outcome, SLOT.AWAY, 'upper case away');
  t.equal(must(price({ outcome: '  Boston Celtics ' })).outcome, SLOT.AWAY, 'surrounding spaces ignored');
  t.equal(must(price({ market: 'totals', point: 220.5, outcome: 'OVER' })).outcome, SLOT.OVER, 'OVER');
  t.equal(must(price({ market: 'totals', point: 220.5, outcome: 'under' })).outcome, SLOT.UNDER, 'under');
  t.equal(must(price({ event_id: 'epl-1', outcome: 'DRAW' })).outcome, SLOT.DRAW, 'DRAW');
});

t.test('ingest - an outcome sent exactly as the event\'s team name is accepted', async (t) => {
  // Regression: parseEvent collapses inner whitespace of team names ("Los Angeles  Clippers" is stored as
  // "Los Angeles Clippers") but parsePrice only trims the outcome, so the feed's own spelling no longer matches.
  const sent = { id: 'nba-2', sport_key: 'basketball_nba', commence_time: LATER, home_team: 'Los Angeles  Clippers', away_team: 'Phoenix Suns' };
  const ev = mustEvent(sent);
  const r = parsePrice(price({ event_id: 'nba-2', outcome: sent.home_team }), (id) => (id === 'nba-2' ? ev : undefined), NOW);
  t.equal(code(r), 'OK', `outcome ${JSON.stringify(sent.home_team)} matches home_team ${JSON.stringify(sent.home_team)} as sent`);
});

t.test('ingest - a valid price record carries interned ids and the input values', async (t) => {
  const r = must(price({ book: 'pinnacle', market: 'h2h', outcome: 'Boston Celtics', price: 2.05, ts: NOW - 5 }));
  t.same(r, { book: BOOK_INDEX.get('pinnacle'), market: MARKET_INDEX.get('h2h'), point: Number.NaN, player: null, outcome: SLOT.AWAY, price: 2.05, ts: NOW - 5 },
    'book and market indexes, NaN point, null player, away slot, price, ts');
});

t.test('ingest - event status defaults from commence vs now', async (t) => {
  // (a start is kept to the second: NOW + 1 ms is NOW's second)
  t.equal(mustEvent(eventItem({ commence_time: NOW + 1000 })).status, 'upcoming', 'commence in the future -> upcoming');
  t.equal(mustEvent(eventItem({ commence_time: NOW })).status, 'live', 'commence now -> live');
  t.equal(mustEvent(eventItem({ commence_time: NOW - 60_000 })).status, 'live', 'commence in the past -> live');
  t.equal(mustEvent(eventItem({ commence_time: '2026-03-01T11:00:00Z', status: null })).status, 'live', 'null status defaults too');
  t.equal(mustEvent(eventItem({ commence_time: NOW + 1, status: 'final' })).status, 'final', 'an explicit status wins');
  t.equal(mustEvent(eventItem({ commence_time: NOW - 1, status: 'upcoming' })).status, 'upcoming', 'explicit upcoming kept');
});

t.test('ingest - event fields are normalised', async (t) => {
  const e = mustEvent(eventItem({ home_team: '  Denver   Nuggets ', commence_time: '2026-03-01T21:00:00+02:00' }));
  t.equal(e.home, 'Denver Nuggets', 'team name trimmed, inner spaces collapsed');
  t.equal(e.commence, Date.parse('2026-03-01T19:00:00Z'), 'commence converted to epoch ms (UTC)');
  t.equal(e.sport.key, 'basketball_nba', 'sport resolved to its definition');
  t.equal(e.id, 'ev-1', 'id kept');
});

t.test('ingest - parseTime accepts ISO 8601 with a zone and epoch ms', async (t) => {
  const at = Date.UTC(2026, 0, 1, 12, 0, 0);
  t.equal(parseTime('2026-01-01T12:00:00Z'), at, 'Z');
  t.equal(parseTime('2026-01-01T12:00Z'), at, 'no seconds');
  t.equal(parseTime('2026-01-01T12:00:00.250Z'), at + 250, 'fractional seconds');
  t.equal(parseTime('2026-01-01T14:00:00+02:00'), at, '+02:00 offset');
  t.equal(parseTime('2026-01-01T14:00:00+0200'), at, '+0200 offset');
  t.equal(parseTime('2026-01-01T07:00:00-05:00'), at, '-05:00 offset');
  t.equal(parseTime(at), at, 'epoch ms');
  t.equal(parseTime(1), 1, 'any positive integer ms');
});

t.test('ingest - parseTime refuses dates without a time or zone, words, and bad numbers', async (t) => {
  for (const v of ['2026-01-01', 'tomorrow', '2026-01-01T12:00:00', '2026-01-01 12:00:00Z', '', 'now', String(Date.UTC(2026, 0, 1)),
    ' 2026-01-01T12:00:00Z', '2026-01-01T12:00:60Z', '2026-13-01T12:00:00Z']) {
    t.ok(Number.isNaN(parseTime(v)), `${JSON.stringify(v)} -> NaN`);
  }
  for (const v of [1.5, 0, -1, Number.NaN, Number.POSITIVE_INFINITY, null, undefined, {}, new Date(0)]) {
    t.ok(Number.isNaN(parseTime(v)), `${String(v)} -> NaN`);
  }
});

t.test('ingest - parseTime refuses impossible calendar dates', async (t) => {
  // Regression: V8's Date.parse rolls day-of-month overflow forward (Feb 30 -> Mar 2), so a commence_time of
  // 2026-02-30 was stored two days late instead of being rejected.
  for (const v of ['2026-02-30T19:00:00Z', '2026-02-29T19:00:00Z', '2026-04-31T19:00:00Z']) {
    const got = parseTime(v);
    t.ok(Number.isNaN(got), `${v} is not a date -> NaN (got ${Number.isNaN(got) ? 'NaN' : new Date(got).toISOString()})`);
  }
  t.equal(parseTime('2028-02-29T19:00:00Z'), Date.UTC(2028, 1, 29, 19), 'a leap day is fine');
});
