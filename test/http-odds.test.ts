// GET /v1/sports/{sport_key}/odds over a real socket: the v4 shape, every filter, odds and date formats, shapes
// (normalized, slim, raw, verification), pregame and live, the rules on incomplete markets, credits and the
// body cache. One app; subtests that change prices use events of their own sport so the others stay exact.

import t from 'tap';
import { TestClock, fixture, startTestApp } from './helpers/app.js';

interface Outcome { name: string; price: number; point?: number }
interface Market { key: string; last_update: string | number; outcomes: Outcome[] }
interface BookEntry {
  key: string; title: string; last_update: string | number; markets: Market[];
  raw_json?: { feed: string; quotes: { market: string; outcome: string; point?: number; price: number; ts: number }[] };
  verified_at?: string | number; line_changed_at?: string | number; is_current?: boolean;
}
interface OddsEvent {
  id: string; sport_key: string; sport_title: string; commence_time: string | number;
  home_team: string; away_team: string; bookmakers: BookEntry[];
}
interface ErrBody { message: string; error_code: string; detail?: { loc: unknown[] }[] }

const clock = new TestClock();
const app = await startTestApp(t, { now: clock.now });
const key = await app.key('business', 1_000_000);

/** whole seconds, so ISO commence times (second precision) and price times (millisecond precision) are exact */
const NOW = Math.floor(Date.now() / 1000) * 1000;
/** the time every fixture price was observed */
const T0 = NOW - 2000;
const { nba, epl } = fixture(NOW);
const iso = (ms: number) => new Date(ms).toISOString();
const isoS = (ms: number) => new Date(ms).toISOString().slice(0, 19) + 'Z';

type Ev = { id: string; home_team: string; away_team: string };
/** ts null: the server's clock stamps the observation */
const price = (book: string, ev: Ev, market: string, outcome: string, p: number, point?: number, ts: number | null = T0) =>
  ({ book, event_id: ev.id, market, outcome, price: p, point, ts });
const h2h = (book: string, ev: Ev, home: number, away: number, ts: number | null = T0) =>
  [price(book, ev, 'h2h', ev.home_team, home, undefined, ts), price(book, ev, 'h2h', ev.away_team, away, undefined, ts)];
const spread = (book: string, ev: Ev, homePoint: number, home: number, away: number) =>
  [price(book, ev, 'spreads', ev.home_team, home, homePoint), price(book, ev, 'spreads', ev.away_team, away, -homePoint)];
const total = (book: string, ev: Ev, point: number, over: number, under: number) =>
  [price(book, ev, 'totals', 'Over', over, point), price(book, ev, 'totals', 'Under', under, point)];
const threeWay = (book: string, ev: Ev, market: string, home: number, away: number, draw: number) =>
  [price(book, ev, market, ev.home_team, home), price(book, ev, market, ev.away_team, away), price(book, ev, market, 'Draw', draw)];

const loaded = await app.ingest({
  events: [nba, epl],
  prices: [
    ...h2h('draftkings', nba, 1.5, 2.75),
    ...spread('draftkings', nba, -6.5, 1.909090909, 1.952380952),
    ...total('draftkings', nba, 220.5, 1.95, 1.87),
    ...h2h('fanduel', nba, 1.55, 2.5),
    ...spread('fanduel', nba, -7, 1.9, 1.92),
    ...total('fanduel', nba, 221, 1.91, 1.91),
    price('betmgm', nba, 'h2h', nba.home_team, 1.5), // one side of a two-way market only
    ...h2h('bovada', nba, 3.0, 3.0), // implied probabilities sum to 0.67: not a sane two-way line
    ...h2h('williamhill', nba, 1.52, 2.6),
    ...spread('williamhill', nba, -6.5, 1.91, 1.91),
    ...h2h('pinnacle', nba, 1.54, 2.68),
    ...total('pinnacle', nba, 220.5, 1.93, 1.93),
    ...h2h('betfair_ex_uk', nba, 1.56, 2.72),
    ...threeWay('draftkings', epl, 'h2h_3_way', 2.1, 3.6, 3.4),
    ...threeWay('williamhill', epl, 'h2h', 2.05, 3.7, 3.3), // h2h on a soccer event is its three-way line
    ...threeWay('pinnacle', epl, 'h2h_3_way', 2.12, 3.65, 3.45),
    ...total('pinnacle', epl, 2.5, 1.95, 1.95),
    price('betfair_ex_uk', epl, 'h2h_3_way', epl.home_team, 2.14), // two of the three outcomes
    price('betfair_ex_uk', epl, 'h2h_3_way', epl.away_team, 3.75),
  ],
});

async function odds(sport: string, query = '', k = key): Promise<{ res: Response; body: any }> {
  const res = await app.get(`/v1/sports/${sport}/odds${query === '' ? '' : '?' + query}`, { 'X-API-Key': k });
  return { res, body: await res.json() };
}

function byKey(books: BookEntry[]): BookEntry[] {
  return [...books].sort((a, b) => (a.key < b.key ? -1 : 1));
}

function bookKeys(doc: OddsEvent): string[] {
  return doc.bookmakers.map((b) => b.key).sort();
}

const rawQuote = (market: string, outcome: string, p: number, point?: number) =>
  (point === undefined ? { market, outcome, price: p, ts: T0 } : { market, outcome, point, price: p, ts: T0 });

t.test('odds - fixture ingested', async (t) => {
  t.equal(loaded.status, 202, '202');
  t.equal(loaded.json.events, 2, 'two events');
  t.equal(loaded.json.accepted, 38, 'every price accepted');
  t.same(loaded.json.rejected, [], 'nothing rejected');
});

t.test('odds - v4 nesting exactly, default us region and h2h', async (t) => {
  const { res, body } = await odds('basketball_nba');
  t.equal(res.status, 200, '200');
  t.equal(body.length, 1, 'one event');
  const ev = body[0] as OddsEvent;
  t.same(Object.keys(ev), ['id', 'sport_key', 'sport_title', 'commence_time', 'home_team', 'away_team', 'bookmakers'], 'event fields in v4 order');
  t.same({ ...ev, bookmakers: byKey(ev.bookmakers) }, {
    id: 'evt_nba_1',
    sport_key: 'basketball_nba',
    sport_title: 'NBA',
    commence_time: isoS(nba.commence_time),
    home_team: 'Boston Celtics',
    away_team: 'Miami Heat',
    bookmakers: [
      {
        key: 'draftkings', title: 'DraftKings', last_update: iso(T0),
        markets: [{ key: 'h2h', last_update: iso(T0), outcomes: [{ name: 'Boston Celtics', price: 1.5 }, { name: 'Miami Heat', price: 2.75 }] }],
        raw_json: { feed: 'none', quotes: [rawQuote('h2h', 'Boston Celtics', 1.5), rawQuote('h2h', 'Miami Heat', 2.75)] },
      },
      {
        key: 'fanduel', title: 'FanDuel', last_update: iso(T0),
        markets: [{ key: 'h2h', last_update: iso(T0), outcomes: [{ name: 'Boston Celtics', price: 1.55 }, { name: 'Miami Heat', price: 2.5 }] }],
        raw_json: { feed: 'none', quotes: [rawQuote('h2h', 'Boston Celtics', 1.55), rawQuote('h2h', 'Miami Heat', 2.5)] },
      },
    ],
  }, 'the whole document: us books only, betmgm (one side) and bovada (insane line) left out');
  for (const b of ev.bookmakers) {
    t.same(Object.keys(b), ['key', 'title', 'last_update', 'markets', 'raw_json'], `${b.key}: bookmaker fields`);
    t.same(Object.keys(b.markets[0]), ['key', 'last_update', 'outcomes'], `${b.key}: market fields`);
    t.same(Object.keys(b.markets[0].outcomes[0]), ['name', 'price'], `${b.key}: h2h outcome has no point`);
  }
});

t.test('odds - regions filter, and bookmakers overrides regions', async (t) => {
  const cases: [string, string[]][] = [
    ['regions=us', ['draftkings', 'fanduel']],
    ['regions=uk', ['betfair_ex_uk', 'williamhill']],
    ['regions=eu', ['pinnacle', 'williamhill']],
    ['regions=us,uk', ['betfair_ex_uk', 'draftkings', 'fanduel', 'williamhill']],
    ['regions=au', []],
    ['bookmakers=pinnacle,fanduel&regions=uk', ['fanduel', 'pinnacle']],
    ['bookmakers=pinnacle', ['pinnacle']],
    ['bookmakers=betmgm,bovada', []],
  ];
  for (const [q, books] of cases) {
    const { res, body } = await odds('basketball_nba', q);
    t.equal(res.status, 200, `${q}: 200`);
    t.same(bookKeys(body[0]), books, `${q}: ${books.join(', ') || 'no books'}`);
  }
});

t.test('odds - markets filter, spreads away point is the negation', async (t) => {
  const { body } = await odds('basketball_nba', 'markets=spreads&regions=us,uk');
  const books = byKey((body[0] as OddsEvent).bookmakers);
  t.same(books.map((b) => b.key), ['draftkings', 'fanduel', 'williamhill'], 'only books quoting spreads');
  t.same(books.map((b) => b.markets.map((m) => m.key)), [['spreads'], ['spreads'], ['spreads']], 'only spreads');
  t.same(books[0].markets[0].outcomes, [
    { name: 'Boston Celtics', price: 1.909090909, point: -6.5 },
    { name: 'Miami Heat', price: 1.952380952, point: 6.5 },
  ], 'draftkings: away point is the negation of the home point');
  t.same(books[1].markets[0].outcomes.map((o) => o.point), [-7, 7], 'fanduel points');
  for (const b of books) t.equal(b.markets[0].outcomes[1].point, -b.markets[0].outcomes[0].point!, `${b.key}: away = -home`);

  const all = await odds('basketball_nba', 'markets=h2h,spreads,totals&regions=us,uk,eu');
  const dk = (all.body[0] as OddsEvent).bookmakers.find((b) => b.key === 'draftkings')!;
  t.same(dk.markets.map((m) => m.key), ['h2h', 'spreads', 'totals'], 'markets in the order asked');
  t.same(dk.markets[2].outcomes, [{ name: 'Over', price: 1.95, point: 220.5 }, { name: 'Under', price: 1.87, point: 220.5 }], 'totals: Over and Under on one point');
  const pin = (all.body[0] as OddsEvent).bookmakers.find((b) => b.key === 'pinnacle')!;
  t.same(pin.markets.map((m) => m.key), ['h2h', 'totals'], 'a book lists only the markets it quotes');
  const raw = pin.raw_json!.quotes.map((q) => q.market);
  t.same(raw, ['h2h', 'h2h', 'totals', 'totals'], 'raw_json carries the quotes of the markets served');

  const h2h3 = await odds('basketball_nba', 'markets=h2h_3_way');
  t.same(h2h3.body[0].bookmakers, [], 'h2h_3_way is not offered for a two-way sport');
});

t.test('odds - oddsFormat=american against hand-worked conversions', async (t) => {
  const { body } = await odds('basketball_nba', 'oddsFormat=american&markets=h2h,spreads,totals&bookmakers=draftkings,fanduel');
  const [dk, fd] = byKey((body[0] as OddsEvent).bookmakers);
  t.same(dk.markets.map((m) => m.outcomes.map((o) => o.price)), [
    [-200, 175], // 100 / 0.5 = 200; 1.75 * 100 = +175
    [-110, -105], // 100 / 0.909090909 = 110.0; 100 / 0.952380952 = 105.0
    [-105, -115], // 100 / 0.95 = 105.26; 100 / 0.87 = 114.94
  ], 'draftkings h2h, spreads, totals');
  t.same(fd.markets.map((m) => m.outcomes.map((o) => o.price)), [
    [-182, 150], // 100 / 0.55 = 181.8; 1.5 * 100 = +150
    [-111, -109], // 100 / 0.9 = 111.1; 100 / 0.92 = 108.7
    [-110, -110], // 100 / 0.91 = 109.9
  ], 'fanduel h2h, spreads, totals');
  t.same(dk.markets[1].outcomes.map((o) => o.point), [-6.5, 6.5], 'points unchanged by the odds format');
  t.ok(body[0].bookmakers.every((b: BookEntry) => b.markets.every((m) => m.outcomes.every((o) => Number.isInteger(o.price)))), 'American prices are integers');
  const dec = await odds('basketball_nba', 'oddsFormat=decimal&bookmakers=draftkings');
  t.same(dec.body[0].bookmakers[0].markets[0].outcomes.map((o: Outcome) => o.price), [1.5, 2.75], 'decimal is the stored price');
});

t.test('odds - dateFormat=unix gives integer seconds everywhere', async (t) => {
  const { body } = await odds('basketball_nba', 'dateFormat=unix&bookmakers=draftkings&include=verification');
  const ev = body[0] as OddsEvent;
  t.equal(ev.commence_time, Math.floor(nba.commence_time / 1000), 'commence_time in seconds');
  const b = ev.bookmakers[0];
  t.equal(b.last_update, Math.floor(T0 / 1000), 'bookmaker last_update in seconds');
  t.equal(b.markets[0].last_update, Math.floor(T0 / 1000), 'market last_update in seconds');
  t.equal(b.verified_at, Math.floor(T0 / 1000), 'verified_at in seconds');
  t.equal(b.line_changed_at, Math.floor(T0 / 1000), 'line_changed_at in seconds');
  const isoDoc = (await odds('basketball_nba', 'dateFormat=iso&bookmakers=draftkings')).body[0] as OddsEvent;
  t.equal(isoDoc.commence_time, isoS(nba.commence_time), 'iso is the default form');
});

t.test('odds - include shapes: normalized has raw_json, slim drops it, raw gives ids and raw_json only', async (t) => {
  const normalized = (await odds('basketball_nba', 'include=normalized&bookmakers=draftkings&markets=spreads')).body[0] as OddsEvent;
  t.same(normalized.bookmakers[0].raw_json, {
    feed: 'none',
    quotes: [rawQuote('spreads', 'Boston Celtics', 1.909090909, -6.5), rawQuote('spreads', 'Miami Heat', 1.952380952, 6.5)],
  }, 'normalized carries raw_json');
  const dflt = (await odds('basketball_nba', 'bookmakers=draftkings&markets=spreads')).body;
  t.same(dflt, [normalized], 'normalized is the default');

  const slim = (await odds('basketball_nba', 'include=slim&regions=us,uk')).body as OddsEvent[];
  t.ok(slim[0].bookmakers.length > 0, 'books listed');
  for (const b of slim[0].bookmakers) t.same(Object.keys(b), ['key', 'title', 'last_update', 'markets'], `${b.key}: slim has no raw_json`);

  const raw = (await odds('basketball_nba', 'include=raw&bookmakers=draftkings,fanduel')).body as OddsEvent[];
  t.equal(raw.length, 1, 'one event');
  t.same(Object.keys(raw[0]), ['id', 'bookmakers'], 'raw event: id and bookmakers only');
  t.equal(raw[0].id, 'evt_nba_1', 'the id');
  t.same(byKey(raw[0].bookmakers), [
    { key: 'draftkings', raw_json: { feed: 'none', quotes: [rawQuote('h2h', 'Boston Celtics', 1.5), rawQuote('h2h', 'Miami Heat', 2.75)] } },
    { key: 'fanduel', raw_json: { feed: 'none', quotes: [rawQuote('h2h', 'Boston Celtics', 1.55), rawQuote('h2h', 'Miami Heat', 2.5)] } },
  ], 'raw bookmakers: key and raw_json only');

  for (const q of ['include=raw,verification', 'include=raw&verified=true']) {
    const both = await odds('basketball_nba', q);
    t.equal(both.res.status, 422, `${q}: 422 (raw returns only ids and raw_json; the verification fields were dropped silently)`);
  }

  const slimVer = (await odds('basketball_nba', 'include=slim,verification&bookmakers=draftkings')).body[0] as OddsEvent;
  t.same(Object.keys(slimVer.bookmakers[0]).sort(), ['is_current', 'key', 'last_update', 'line_changed_at', 'markets', 'title', 'verified_at'], 'slim,verification');
});

t.test('odds - verification: verified_at, line_changed_at, is_current', async (t) => {
  t.teardown(() => clock.release());
  const now = clock.freeze(NOW + 1000);
  const ev = { id: 'odds_ver_1', sport_key: 'basketball_euroleague', commence_time: now + 3_600_000, home_team: 'Real Madrid', away_team: 'Olympiacos' };
  const old = now - 10_000;
  const r1 = await app.ingest({ events: [ev], prices: [...h2h('draftkings', ev, 1.8, 2.1, old), ...h2h('fanduel', ev, 1.85, 2.0, null)] });
  t.equal(r1.json.accepted, 4, 'ingested');
  const plain = (await odds('basketball_euroleague', 'regions=us')).body[0] as OddsEvent;
  t.ok(plain.bookmakers.every((b) => !('verified_at' in b) && !('line_changed_at' in b) && !('is_current' in b)), 'no verification fields unless asked');

  const v1 = byKey(((await odds('basketball_euroleague', 'include=verification')).body[0] as OddsEvent).bookmakers);
  t.same(Object.keys(v1[0]), ['key', 'title', 'last_update', 'markets', 'verified_at', 'line_changed_at', 'is_current', 'raw_json'], 'verification fields per bookmaker');
  t.same([v1[0].key, v1[0].verified_at, v1[0].line_changed_at, v1[0].is_current], ['draftkings', iso(old), iso(old), false],
    'a price observed 10 s ago is not current');
  t.same([v1[1].key, v1[1].verified_at, v1[1].line_changed_at, v1[1].is_current], ['fanduel', iso(now), iso(now), true],
    'a price just ingested (ts defaulted to now) is current');
  const alias = (await odds('basketball_euroleague', 'verified=true')).body[0] as OddsEvent;
  t.same(byKey(alias.bookmakers), v1, 'verified=true is an alias of include=verification');

  const again = now - 1000;
  const r2 = await app.ingest({ prices: h2h('draftkings', ev, 1.8, 2.1, again) });
  t.equal(r2.json.accepted, 2, 'the same prices again');
  const v2 = ((await odds('basketball_euroleague', 'include=verification&bookmakers=draftkings')).body[0] as OddsEvent).bookmakers[0];
  t.equal(v2.verified_at, iso(again), 'a repeated identical price moves verified_at');
  t.equal(v2.line_changed_at, iso(old), 'but not line_changed_at');
  t.equal(v2.is_current, true, 'and makes the entry current');
  t.equal(v2.last_update, iso(again), 'last_update is the freshest of change and verification');
  t.equal(v2.markets[0].last_update, iso(again), 'market last_update too');
  t.same(v2.markets[0].outcomes.map((o) => o.price), [1.8, 2.1], 'prices unchanged');

  const moved = now - 500;
  await app.ingest({ prices: [price('draftkings', ev, 'h2h', ev.home_team, 1.83, undefined, moved)] });
  const v3 = ((await odds('basketball_euroleague', 'include=verification&bookmakers=draftkings')).body[0] as OddsEvent).bookmakers[0];
  t.equal(v3.line_changed_at, iso(moved), 'a price move moves line_changed_at');
  t.equal(v3.verified_at, iso(again), 'not verified_at: the away price was last seen at again (the oldest verification of the prices served)');
  t.equal(v3.last_update, iso(moved), 'last_update is the freshest');
  t.same(v3.markets[0].outcomes.map((o) => o.price), [1.83, 2.1], 'the new price');

  const stale = await app.ingest({ prices: [price('draftkings', ev, 'h2h', ev.home_team, 1.7, undefined, old)] });
  t.equal(stale.status, 202, 'an observation older than the quote is answered 202');
  t.same([stale.json.accepted, stale.json.ignored, stale.json.rejected], [0, 1, []], 'counted as ignored, not as accepted');
  const v4 = ((await odds('basketball_euroleague', 'include=verification&bookmakers=draftkings')).body[0] as OddsEvent).bookmakers[0];
  t.same(v4, v3, 'but changes nothing');

  clock.freeze(now + 6000);
  const v5 = byKey(((await odds('basketball_euroleague', 'include=verification')).body[0] as OddsEvent).bookmakers);
  t.same(v5.map((b) => b.is_current), [false, false], 'once 5 s pass without a verification nothing is current (the cached body expires)');
  t.equal(v5[0].verified_at, iso(again), 'verified_at is unchanged');
});

t.test('odds - regression: is_current needs every price of the entry verified within 5 s (one side polled again made an 8-second-old opposite side current)', async (t) => {
  t.teardown(() => clock.release());
  const now = clock.freeze(NOW + 240_000);
  const ev = { id: 'odds_cur_1', sport_key: 'icehockey_ahl', commence_time: now + 3_600_000, home_team: 'Hershey Bears', away_team: 'Providence Bruins' };
  const seen = now - 8000;
  const ml = (outcome: string, p: number, ts: number) => price('fanduel', ev, 'h2h', outcome, p, undefined, ts);
  const ou = (outcome: string, ts: number) => price('fanduel', ev, 'totals', outcome, 1.91, 5.5, ts);
  const r = await app.ingest({ events: [ev], prices: [ml(ev.home_team, 1.9, seen), ml(ev.away_team, 1.95, seen), ou('Over', seen), ou('Under', seen)] });
  t.equal(r.json.accepted, 4, 'ingested, seen 8 s ago');
  const entry = async (markets: string) => ((await odds('icehockey_ahl', `include=verification&bookmakers=fanduel&markets=${markets}`)).body[0] as OddsEvent).bookmakers[0];

  await app.ingest({ prices: [ml(ev.home_team, 1.9, now - 300)] });
  const one = await entry('h2h');
  t.same([one.verified_at, one.is_current, one.last_update], [iso(seen), false, iso(now - 300)],
    'the home side seen again, the away side not for 8 s: not current, verified_at the away side\'s (last_update the freshest)');

  await app.ingest({ prices: [ml(ev.away_team, 1.95, now - 200)] });
  const both = await entry('h2h');
  t.same([both.verified_at, both.is_current], [iso(now - 300), true], 'both sides seen within 5 s: current, as of the older');
  const withTotals = await entry('h2h,totals');
  t.same([withTotals.verified_at, withTotals.is_current], [iso(seen), false], 'a moneyline seen again does not make the 8-second-old totals line current');

  await app.ingest({ prices: [ou('Over', now - 100), ou('Under', now - 100)] });
  t.same(await entry('h2h,totals').then((b) => [b.verified_at, b.is_current]), [iso(now - 300), true], 'every price seen within 5 s: current');
  clock.freeze(now + 4600);
  t.equal((await entry('h2h,totals')).is_current, true, '4.9 s after the oldest verification: still current');
  clock.freeze(now + 4800);
  t.equal((await entry('h2h,totals')).is_current, false, '5.1 s after it: no longer (the cached body expires with the oldest price)');
});

t.test('odds - pregame only by default, live=true only started, include_live=true both', async (t) => {
  const now = Date.now();
  const started = { id: 'odds_live_1', sport_key: 'americanfootball_nfl', commence_time: now - 1_800_000, home_team: 'Buffalo Bills', away_team: 'Miami Dolphins' };
  const later = { id: 'odds_pre_1', sport_key: 'americanfootball_nfl', commence_time: now + 3_600_000, home_team: 'Kansas City Chiefs', away_team: 'Denver Broncos' };
  const r = await app.ingest({ events: [started, later], prices: [...h2h('draftkings', started, 1.4, 3.1), ...h2h('draftkings', later, 1.7, 2.2)] });
  t.equal(r.json.accepted, 4, 'ingested');
  const ids = async (q: string) => ((await odds('americanfootball_nfl', q)).body as OddsEvent[]).map((e) => e.id);
  t.same(await ids(''), ['odds_pre_1'], 'default: pregame only');
  t.same(await ids('live=false'), ['odds_pre_1'], 'live=false: pregame only');
  t.same(await ids('live=true'), ['odds_live_1'], 'live=true: only started events');
  t.same(await ids('include_live=true'), ['odds_live_1', 'odds_pre_1'], 'include_live=true: both, by commence_time');
  const live = (await odds('americanfootball_nfl', 'live=true')).res;
  t.equal(live.headers.get('x-requests-last'), '1', 'live costs no extra');
  const events = (await (await app.get('/v1/sports/americanfootball_nfl/events')).json()) as { id: string }[];
  t.same(events.map((e) => e.id), ['odds_live_1', 'odds_pre_1'], '/events lists in-play and upcoming events');
});

t.test('odds - an event leaves the pregame list the moment it starts (the cached body expires)', async (t) => {
  t.teardown(() => clock.release());
  const start = clock.freeze(NOW + 60_000);
  const ev = { id: 'odds_soon_1', sport_key: 'americanfootball_ncaaf', commence_time: start + 2000, home_team: 'Alabama Crimson Tide', away_team: 'Auburn Tigers' };
  t.equal((await app.ingest({ events: [ev], prices: h2h('draftkings', ev, 1.5, 2.6, null) })).json.accepted, 2, 'ingested');
  const ids = async (q: string) => ((await odds('americanfootball_ncaaf', q)).body as OddsEvent[]).map((e) => e.id);
  t.same(await ids(''), ['odds_soon_1'], 'pregame before its start');
  t.same(await ids('live=true'), [], 'not live yet');
  clock.freeze(start + 2000);
  t.same(await ids(''), [], 'started at commence_time: no longer pregame');
  t.same(await ids('live=true'), ['odds_soon_1'], 'live from commence_time on');
});

t.test('odds - eventIds, commenceTimeFrom/To and date filters', async (t) => {
  const at = (d: string) => Date.parse(d);
  const ev = (id: string, when: string) => ({ id, sport_key: 'icehockey_nhl', commence_time: at(when), home_team: `Home ${id}`, away_team: `Away ${id}` });
  const evs = [
    ev('nhl_a', '2031-03-10T12:00:00Z'),
    ev('nhl_b', '2031-03-11T00:00:00Z'),
    // a start with a fraction of a second: kept to the second, as shown (regression: date= and commenceTimeTo= left
    // it out, filtering on the hidden 500 ms)
    ev('nhl_c', '2031-03-11T23:59:59.500Z'),
    ev('nhl_d', '2031-03-12T00:00:00Z'),
  ];
  await app.ingest({ events: evs, prices: evs.flatMap((e) => h2h('draftkings', e, 1.9, 1.9)) });
  const ids = async (q: string) => {
    const { res, body } = await odds('icehockey_nhl', q);
    t.equal(res.status, 200, `${q}: 200`);
    return (body as OddsEvent[]).map((e) => e.id);
  };
  t.same(await ids(''), ['nhl_a', 'nhl_b', 'nhl_c', 'nhl_d'], 'all four, by commence_time');
  t.same(await ids('eventIds=nhl_c,nhl_a'), ['nhl_a', 'nhl_c'], 'eventIds');
  t.same(await ids('eventIds=nope'), [], 'unknown eventIds give nothing');
  t.equal(((await odds('icehockey_nhl', 'eventIds=nhl_c')).body as OddsEvent[])[0].commence_time, '2031-03-11T23:59:59Z', 'the start to the second');
  t.same(await ids('commenceTimeFrom=2031-03-11T23:59:59Z&commenceTimeTo=2031-03-11T23:59:59Z'), ['nhl_c'], 'the second it is shown with finds it');
  t.same(await ids('commenceTimeFrom=2031-03-11T00:00:00Z'), ['nhl_b', 'nhl_c', 'nhl_d'], 'commenceTimeFrom is inclusive');
  t.same(await ids('commenceTimeTo=2031-03-11T00:00:00Z'), ['nhl_a', 'nhl_b'], 'commenceTimeTo is inclusive');
  t.same(await ids('commenceTimeFrom=2031-03-10T12:00:01Z&commenceTimeTo=2031-03-11T23:59:58Z'), ['nhl_b'], 'both bounds');
  t.same(await ids('date=2031-03-11'), ['nhl_b', 'nhl_c'], 'date is the whole UTC day, 00:00:00 to 23:59:59');
  t.same(await ids('date=2031-03-10'), ['nhl_a'], 'another day');
  t.same(await ids('date=2031-03-13'), [], 'a day without events');
  t.same(await ids('date=2031-03-11&commenceTimeFrom=2031-03-10T00:00:00Z&commenceTimeTo=2031-03-10T23:59:59Z'), ['nhl_a'],
    'explicit commenceTimeFrom and commenceTimeTo win over date');
  t.same(await ids('date=2031-03-11&commenceTimeTo=2031-03-12T00:00:00Z'), ['nhl_b', 'nhl_c', 'nhl_d'],
    'an explicit commenceTimeTo wins, date still gives the start');
  t.same(await ids('date=2031-03-11&commenceTimeFrom=2031-03-11T12:00:00Z'), ['nhl_c'], 'an explicit commenceTimeFrom wins');
  t.same(await ids('date=2031-03-11&eventIds=nhl_a,nhl_c'), ['nhl_c'], 'filters combine');
});

t.test('odds - soccer: h2h is the three-way line with Draw, incomplete lines are not served', async (t) => {
  const { body } = await odds('soccer_epl', 'regions=us,uk,eu');
  const ev = body[0] as OddsEvent;
  t.equal(ev.id, 'evt_epl_1', 'the EPL event');
  const books = byKey(ev.bookmakers);
  t.same(books.map((b) => b.key), ['draftkings', 'pinnacle', 'williamhill'], 'betfair_ex_uk (no Draw) is not served');
  for (const b of books) {
    t.equal(b.markets.length, 1, `${b.key}: one market`);
    t.equal(b.markets[0].key, 'h2h', `${b.key}: served under the key asked for`);
    t.same(b.markets[0].outcomes.map((o) => o.name).sort(), ['Arsenal', 'Chelsea', 'Draw'], `${b.key}: three outcomes with Draw`);
  }
  t.same(books[2].markets[0].outcomes, [{ name: 'Arsenal', price: 2.05 }, { name: 'Chelsea', price: 3.7 }, { name: 'Draw', price: 3.3 }],
    'williamhill (ingested as h2h) in full');
  const three = (await odds('soccer_epl', 'markets=h2h_3_way&bookmakers=pinnacle')).body[0] as OddsEvent;
  t.same(three.bookmakers[0].markets, [{
    key: 'h2h_3_way', last_update: iso(T0),
    outcomes: [{ name: 'Arsenal', price: 2.12 }, { name: 'Chelsea', price: 3.65 }, { name: 'Draw', price: 3.45 }],
  }], 'markets=h2h_3_way serves the same line under its own key');
  const totals = (await odds('soccer_epl', 'markets=totals&regions=eu')).body[0] as OddsEvent;
  t.same(totals.bookmakers.map((b) => [b.key, b.markets[0].outcomes]), [['pinnacle', [{ name: 'Over', price: 1.95, point: 2.5 }, { name: 'Under', price: 1.95, point: 2.5 }]]], 'soccer totals');
  const umbrella = (await odds('soccer', 'regions=uk')).body as OddsEvent[];
  t.same(umbrella.map((e) => [e.id, e.sport_key]), [['evt_epl_1', 'soccer_epl']], 'the soccer umbrella serves EPL events');

  await app.ingest({ prices: [price('betfair_ex_uk', epl, 'h2h_3_way', 'Draw', 3.5)] });
  const completed = (await odds('soccer_epl', 'bookmakers=betfair_ex_uk')).body[0] as OddsEvent;
  t.same(completed.bookmakers.map((b) => b.markets[0].outcomes.length), [3], 'served once its Draw arrives');
});

t.test('odds - credits: markets x regions, shown in the usage headers', async (t) => {
  const k = await app.key('starter', 100);
  let balance = 100;
  const eleven = 'draftkings,fanduel,betmgm,williamhill_us,espnbet,betrivers,fanatics,bovada,betonlineag,lowvig,mybookieag';
  const ten = eleven.split(',').slice(0, 10).join(',');
  const cases: [string, number][] = [
    ['', 1],
    ['markets=h2h,spreads&regions=us,uk', 4],
    ['markets=h2h,spreads,totals&regions=us', 3],
    ['regions=us,uk,eu,au', 4],
    ['regions=us,us', 1],
    [`bookmakers=${eleven}`, 2],
    [`bookmakers=${eleven}&markets=h2h,totals`, 4],
    [`bookmakers=${ten}`, 1],
    ['bookmakers=pinnacle&regions=us,uk,eu', 1],
    ['live=true&markets=h2h,spreads', 2],
  ];
  for (const [q, cost] of cases) {
    const { res } = await odds('basketball_nba', q, k);
    balance -= cost;
    t.equal(res.status, 200, `${q || '(defaults)'}: 200`);
    t.equal(res.headers.get('x-requests-last'), String(cost), `${q || '(defaults)'}: costs ${cost}`);
    t.equal(res.headers.get('x-ratelimit-remaining'), String(balance), `${q || '(defaults)'}: X-RateLimit-Remaining ${balance}`);
    t.equal(res.headers.get('x-requests-remaining'), String(balance), `${q || '(defaults)'}: x-requests-remaining`);
    t.equal(res.headers.get('x-requests-used'), String(100 - balance), `${q || '(defaults)'}: x-requests-used`);
  }
  const unknown = await odds('curling_world', 'markets=h2h,spreads', k);
  t.equal(unknown.res.status, 404, 'unknown sport is 404');
  t.equal(unknown.body.error_code, 'UNKNOWN_SPORT', 'UNKNOWN_SPORT');
  t.equal(unknown.res.headers.get('x-requests-last'), '0', 'unknown sport charges nothing');
  t.equal(unknown.res.headers.get('x-ratelimit-remaining'), String(balance), 'balance unchanged');
});

t.test('odds - every bad parameter is a 422 naming it and charges nothing', async (t) => {
  const k = await app.key('starter', 50);
  const cases: [string, string][] = [
    ['regions=zz', 'regions'],
    ['regions=us,zz', 'regions'],
    ['regions=', 'regions'],
    ['markets=foo', 'markets'],
    ['markets=h2h,player_points', 'markets'],
    ['oddsFormat=x', 'oddsFormat'],
    ['dateFormat=x', 'dateFormat'],
    ['include=slim,raw', 'include'],
    ['include=normalized,slim', 'include'],
    ['include=everything', 'include'],
    ['bookmakers=nosuchbook', 'bookmakers'],
    ['commenceTimeFrom=garbage', 'commenceTimeFrom'],
    ['commenceTimeTo=2031-03-11', 'commenceTimeTo'],
    ['date=2026-13-01', 'date'],
    ['date=2026-02-30', 'date'],
    ['date=20260201', 'date'],
    ['commenceTimeFrom=2031-03-12T00:00:00Z&commenceTimeTo=2031-03-11T00:00:00Z', 'commenceTimeTo'],
    // the range's end is the date's day: the error names what was sent (it named commenceTimeTo, with the date as input)
    ['date=2031-03-11&commenceTimeFrom=2031-03-12T00:00:00Z', 'commenceTimeFrom'],
    ['verified=maybe', 'verified'],
    ['live=yes', 'live'],
    ['include_live=2', 'include_live'],
  ];
  for (const [q, name] of cases) {
    const { res, body } = await odds('basketball_nba', q, k);
    t.equal(res.status, 422, `${q}: 422`);
    t.equal((body as ErrBody).error_code, 'VALIDATION_ERROR', `${q}: VALIDATION_ERROR`);
    t.same((body as ErrBody).detail!.map((d) => d.loc), [['query', name]], `${q}: detail names ${name}`);
    t.equal(res.headers.get('x-requests-last'), '0', `${q}: charges nothing`);
    t.equal(res.headers.get('x-ratelimit-remaining'), '50', `${q}: balance untouched`);
  }
  const range = await odds('basketball_nba', 'commenceTimeFrom=2031-03-12T02:00:00%2B02:00&commenceTimeTo=2031-03-11T00:00:00Z', k);
  t.same((range.body as { detail: { input: unknown }[] }).detail[0].input, '2031-03-11T00:00:00Z', 'the 422 echoes the value as sent, not as normalised');
  const day = await odds('basketball_nba', 'date=2031-03-11&commenceTimeFrom=2031-03-12T01:00:00%2B01:00', k);
  t.same((day.body as { detail: { input: unknown }[] }).detail[0].input, '2031-03-12T01:00:00+01:00', 'commenceTimeFrom too, zone and all');
  const many = await odds('basketball_nba', 'regions=zz&markets=foo&oddsFormat=x', k);
  t.same((many.body as ErrBody).detail!.map((d) => d.loc[1]), ['regions', 'markets', 'oddsFormat'], 'one 422 lists every bad parameter');
  const ok = await odds('basketball_nba', '', k);
  t.equal(ok.res.headers.get('x-ratelimit-remaining'), '49', 'the next valid call is the first charge');
});

t.test('odds - /v4 alias gives the same body', async (t) => {
  const q = '?regions=us,uk&markets=h2h,spreads,totals&oddsFormat=american';
  const v1 = await app.get(`/v1/sports/basketball_nba/odds${q}`, { 'X-API-Key': key });
  const v4 = await app.get(`/v4/sports/basketball_nba/odds${q}`, { 'X-API-Key': key });
  t.equal(v4.status, 200, '/v4 is served');
  t.equal(v4.headers.get('x-requests-last'), v1.headers.get('x-requests-last'), 'same cost');
  t.equal(await v4.text(), await v1.text(), 'byte-identical body');
});

t.test('odds - the body cache: identical requests share a body, an ingest invalidates it', async (t) => {
  const ev = { id: 'odds_cache_1', sport_key: 'basketball_ncaab', commence_time: NOW + 3_600_000, home_team: 'Duke', away_team: 'North Carolina' };
  await app.ingest({ events: [ev], prices: h2h('draftkings', ev, 1.7, 2.2) });
  const hits = async () => {
    const text = await (await app.get('/metrics')).text();
    return Number(/^linewire_body_cache_total\{result="hit"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };
  const first = await (await app.get('/v1/sports/basketball_ncaab/odds', { 'X-API-Key': key })).text();
  const before = await hits();
  const second = await (await app.get('/v1/sports/basketball_ncaab/odds', { 'X-API-Key': key })).text();
  t.equal(second, first, 'the same body');
  t.equal(await hits(), before + 1, 'served from the cache');

  await app.ingest({ prices: [price('draftkings', ev, 'h2h', 'Duke', 1.75, undefined, Date.now())] });
  const third = JSON.parse(await (await app.get('/v1/sports/basketball_ncaab/odds', { 'X-API-Key': key })).text()) as OddsEvent[];
  t.same(third[0].bookmakers[0].markets[0].outcomes.map((o) => o.price), [1.75, 2.2], 'a new ingest changes the body');
  t.equal(await hits(), before + 1, 'rebuilt, not a cache hit');

  await app.ingest({ events: [{ ...ev, commence_time: NOW + 7_200_000 }] });
  const moved = JSON.parse(await (await app.get('/v1/sports/basketball_ncaab/odds', { 'X-API-Key': key })).text()) as OddsEvent[];
  t.equal(moved[0].commence_time, isoS(NOW + 7_200_000), 'an event update alone invalidates the body too');

  await app.ingest({ events: [{ ...ev, status: 'final' }] });
  t.same(await (await app.get('/v1/sports/basketball_ncaab/odds', { 'X-API-Key': key })).json(), [], 'a final event leaves /odds');
});

t.test('odds - a rebuilt body reuses the documents of the events that did not move, and rebuilds those that did', async (t) => {
  t.teardown(() => clock.release());
  const now = clock.freeze(NOW + 120_000);
  const a = { id: 'odds_frag_a', sport_key: 'basketball_wnba', commence_time: now + 3_600_000, home_team: 'Las Vegas Aces', away_team: 'New York Liberty' };
  const b = { id: 'odds_frag_b', sport_key: 'basketball_wnba', commence_time: now + 7_200_000, home_team: 'Seattle Storm', away_team: 'Chicago Sky' };
  await app.ingest({ events: [a, b], prices: [...h2h('draftkings', a, 1.6, 2.4, now - 1000), ...h2h('draftkings', b, 1.9, 1.95, now - 1000)] });
  const docs = async () => {
    const text = await (await app.get('/metrics')).text();
    const n = (r: string) => Number(new RegExp(`^linewire_odds_event_docs_total\\{result="${r}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { built: n('built'), kept: n('kept') };
  };
  const prices = (body: OddsEvent[]) => body.map((e) => [e.id, e.bookmakers.map((bk) => bk.markets[0].outcomes.map((o) => o.price))]);
  const q = 'include=verification';
  const first = (await odds('basketball_wnba', q)).body as OddsEvent[];
  t.same(prices(first), [['odds_frag_a', [[1.6, 2.4]]], ['odds_frag_b', [[1.9, 1.95]]]], 'both events');
  const c0 = await docs();

  await app.ingest({ prices: [price('draftkings', a, 'h2h', a.home_team, 1.65, undefined, now - 500)] });
  const second = (await odds('basketball_wnba', q)).body as OddsEvent[];
  t.same(prices(second), [['odds_frag_a', [[1.65, 2.4]]], ['odds_frag_b', [[1.9, 1.95]]]], 'the moved price, the other event as it was');
  t.same(second[1], first[1], 'the unmoved event exactly as before');
  const c1 = await docs();
  t.same([c1.built - c0.built, c1.kept - c0.kept], [1, 1], 'one document built again, one kept');

  // a player prop moving is not a change of the game lines /odds serves
  await app.ingest({ prices: [{ book: 'draftkings', event_id: a.id, market: 'player_points', outcome: 'Over', player: 'A\'ja Wilson', point: 22.5, price: 1.9, ts: now - 400 }] });
  const propMoved = (await odds('basketball_wnba', q)).body as OddsEvent[];
  t.same(propMoved, second, 'the same body');
  const cp = await docs();
  t.same([cp.built - c1.built, cp.kept - c1.kept], [0, 2], 'both documents kept');

  // a change of teams alone, with no quote of the event moving, is a change of the event
  await app.ingest({ events: [{ ...b, home_team: 'Seattle Storm II' }] });
  const third = (await odds('basketball_wnba', q)).body as OddsEvent[];
  t.same(third.map((e) => e.home_team), ['Las Vegas Aces', 'Seattle Storm II'], 'the renamed team');
  t.same(third[1].bookmakers[0].markets[0].outcomes.map((o) => o.name), ['Seattle Storm II', 'Chicago Sky'], 'and outcome names follow it');
  const c2 = await docs();
  t.same([c2.built - cp.built, c2.kept - cp.kept], [1, 1], 'the renamed event built again, the other kept');

  // the clock alone: an entry verified within 5 s stops being current without any change of data
  t.same(third.map((e) => e.bookmakers[0].is_current), [true, true], 'current within 5 s');
  clock.freeze(now + 4200);
  const fourth = (await odds('basketball_wnba', q)).body as OddsEvent[];
  t.same(fourth.map((e) => e.bookmakers[0].is_current), [false, false],
    'neither entry is current 5.2 s after its oldest price was verified (a\'s home price moved 4.7 s ago, its away price did not)');

  // documents are kept per shape: the same events in American odds are not the decimal ones
  const american = (await odds('basketball_wnba', `${q}&oddsFormat=american`)).body as OddsEvent[];
  t.same(prices(american), [['odds_frag_a', [[-154, 140]]], ['odds_frag_b', [[-111, -105]]]], 'American prices (hand-worked: -100/0.65, +140, -100/0.9, -100/0.95)');
});
