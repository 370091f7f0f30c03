// Closing lines: capture at the start boundary, restart in the middle of a start, exports (JSON, CSV), credits
// per 1,000 rows, paging, parameter bounds.

import { rmSync } from 'node:fs';
import t from 'tap';
import { csvField } from '../workers/export-format.js';
import { TestClock, appDatabases, startTestApp, type TestApp } from './helpers/app.js';
import { freshDataDir } from './helpers/db.js';

type Row = Record<string, string | number | null>;
type Body = { as_of: string; date: string; filters: Record<string, unknown>; row_count: number; rows: Row[] };

const clock = new TestClock();
const T0 = clock.freeze(Date.UTC(2026, 10, 20, 17, 0, 0));
const C = T0 + 60_000;
const DAY = '2026-11-20';

const event = { id: 'cl_1', sport_key: 'basketball_nba', commence_time: C, home_team: 'Boston Celtics', away_team: 'Club "Odd", United' };
const h2h = (book: string, home: number | null, away: number | null, ts: number) => [
  ...(home === null ? [] : [{ book, event_id: event.id, market: 'h2h', outcome: event.home_team, price: home, ts }]),
  ...(away === null ? [] : [{ book, event_id: event.id, market: 'h2h', outcome: event.away_team, price: away, ts }]),
];

async function exportDay(app: TestApp, key: string, q = ''): Promise<{ res: Response; body: Body }> {
  const res = await app.get(`/v1/historical/closing-lines.json?date=${DAY}&apiKey=${key}${q}`);
  return { res, body: (await res.json()) as Body };
}

for (const database of appDatabases()) t.test(`closing capture at the start boundary (${database})`, async (t) => {
  clock.freeze(T0);
  const app = await startTestApp(t, { now: clock.now, database });
  const key = await app.key('business', 1000);
  let r = await app.ingest({ events: [event], prices: [
    ...h2h('pinnacle', 1.8, 2.1, T0 - 5000),
    ...h2h('pinnacle', 1.95, null, C - 60_001),
    { book: 'draftkings', event_id: event.id, market: 'player_points', player: 'Jayson Tatum', point: 27.5, outcome: 'Over', price: 1.87, ts: T0 - 2000 },
    { book: 'draftkings', event_id: event.id, market: 'player_points', player: 'Jayson Tatum', point: 27.5, outcome: 'Under', price: 1.93, ts: T0 - 1000 },
  ] });
  t.equal(r.json.accepted, 5, 'pregame quotes accepted');
  // the last pregame millisecond, then the start: a quote at commence and one a millisecond after are not closing
  clock.freeze(C - 1);
  r = await app.ingest({ prices: [...h2h('pinnacle', null, 2.05, C - 1)] });
  clock.freeze(C + 1);
  r = await app.ingest({ prices: [...h2h('pinnacle', 2.5, null, C), ...h2h('pinnacle', null, 2.2, C + 1), ...h2h('fanduel', 1.7, 2.3, C + 1)] });
  t.equal(r.json.accepted, 4, 'in-play quotes accepted by the store');
  await app.app.services.history!.flush();

  const { res, body } = await exportDay(app, key);
  t.equal(res.status, 200, '200');
  t.equal(res.headers.get('x-export-rows'), '2', 'X-Export-Rows');
  t.equal(res.headers.get('x-export-credits'), '1', 'minimum 1 credit');
  t.ok(res.headers.get('x-export-rate'), 'X-Export-Rate');
  t.equal(res.headers.get('x-requests-last'), '1', 'charged 1');
  t.equal(body.row_count, 2, 'row_count');
  t.same(body.filters, { sport_key: null, source: null, limit: 50000 }, 'filters echoed');
  const pin = body.rows.find((x) => x.source === 'pinnacle')!;
  t.same(pin, {
    game_date: DAY, sport_key: 'basketball_nba', commence_time: new Date(C).toISOString().slice(0, 19) + 'Z',
    home_team: event.home_team, away_team: event.away_team, source: 'pinnacle', player_name: null, market_key: 'h2h',
    market_label: pin.market_label, line: null, over_price: 1.95, under_price: 2.05,
    over_implied_prob: Math.round(1e6 / 1.95) / 1e6, under_implied_prob: Math.round(1e6 / 2.05) / 1e6,
    snapshot_time: new Date(C - 1).toISOString(), simulated: false,
  }, 'pinnacle closes at its last pregame prices (home 1.95, away 2.05 at commence - 1 ms), not 2.5 at commence or 2.2 after');
  const prop = body.rows.find((x) => x.source === 'draftkings')!;
  t.match(prop, { player_name: 'Jayson Tatum', market_key: 'player_points', line: 27.5, over_price: 1.87, under_price: 1.93 }, 'props are captured');
  t.notOk(body.rows.some((x) => x.source === 'fanduel'), 'a book quoted only after the start has no row');

  const csv = await app.get(`/v1/historical/closing-lines.csv?date=${DAY}&source=pinnacle&apiKey=${key}`);
  t.equal(csv.status, 200, 'csv 200');
  t.match(csv.headers.get('content-type') ?? '', /^text\/csv/, 'text/csv');
  t.equal(csv.headers.get('x-requests-last'), '1', 'CSV costs 1 per request');
  const text = await csv.text();
  const lines = text.split('\r\n');
  t.equal(lines[0], 'game_date,sport_key,commence_time,home_team,away_team,source,player_name,market_key,market_label,line,over_price,under_price,over_implied_prob,under_implied_prob,snapshot_time,simulated', 'header row');
  t.match(lines[1], /^2026-11-20,basketball_nba,[^,]+,Boston Celtics,"Club ""Odd"", United",pinnacle,,h2h,/, 'RFC 4180: the odd name quoted, its quotes doubled; empty player');
  t.equal(lines[2], '', 'ends with CRLF');
  t.equal(lines.length, 3, 'one row for pinnacle');

  // a second capture of the same event adds nothing
  await app.app.services.history!.flush();
  t.equal((await exportDay(app, key)).body.row_count, 2, 'capture is idempotent');
});

t.test('restart in the middle of a start: captured from the persisted pregame state', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  clock.freeze(T0);
  const ev = { ...event, id: 'cl_restart' };
  let app = await startTestApp(t, { now: clock.now, dataDir: dir });
  await app.ingest({ events: [ev], prices: [
    { book: 'betmgm', event_id: ev.id, market: 'totals', point: 221.5, outcome: 'Over', price: 1.9, ts: T0 - 10 },
    { book: 'betmgm', event_id: ev.id, market: 'totals', point: 221.5, outcome: 'Under', price: 1.92, ts: T0 - 5 },
  ] });
  await app.close(); // the persisted state is all the next process has
  clock.freeze(C + 3_600_000);
  app = await startTestApp(t, { now: clock.now, dataDir: dir });
  const key = await app.key('business', 100);
  const { body } = await exportDay(app, key, '&source=betmgm');
  t.same(body.rows.map((x) => [x.market_key, x.line, x.over_price, x.under_price]), [['totals', 221.5, 1.9, 1.92]],
    'the event that started while the process was down is captured at the next start');
  t.equal(app.app.services.history!.openEvents, 0, 'nothing left open');
});

t.test('the simulator\'s closing lines are labelled simulated, also after a restart without it (regression: served as observed)', async (t) => {
  const dir = await freshDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  clock.freeze(T0);
  const ev = { ...event, id: 'cl_sim' };
  let app = await startTestApp(t, { now: clock.now, dataDir: dir });
  // as the simulator feeds it (http/app.ts): its events come from the source 'sim'
  await app.app.services.ingest({ events: [ev], prices: [
    { book: 'pinnacle', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.9, ts: T0 - 10 },
    { book: 'pinnacle', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.0, ts: T0 - 5 },
  ] }, clock.now(), { simulated: true, source: 'sim' });
  await app.app.services.history!.flush();
  await app.close(); // the persisted pregame state is all the next process, with no simulator, has
  clock.freeze(C + 3_600_000);
  app = await startTestApp(t, { now: clock.now, dataDir: dir });
  const key = await app.key('business', 100);
  const { body } = await exportDay(app, key, '&source=pinnacle');
  t.same(body.rows.filter((x) => x.player_name === null).map((x) => [x.over_price, x.simulated]), [[1.9, true]], 'JSON: simulated: true');
  const csv = await (await app.get(`/v1/historical/closing-lines.csv?date=${DAY}&source=pinnacle&apiKey=${key}`)).text();
  t.match(csv.split('\r\n')[1], /,true$/, 'CSV: the simulated column says true');
  // the coverage counts tell them apart too (regression: counted as observed coverage, with no label)
  const cov = (await (await app.get(`/v1/historical/sports/basketball_nba/coverage?apiKey=${key}`)).json()) as { sources: { source: string; rows: number; simulated_rows: number }[] };
  t.same(cov.sources.filter((x) => x.source === 'pinnacle').map((x) => [x.rows, x.simulated_rows]), [[1, 1]], 'sport coverage: simulated_rows');
  const pub = (await (await app.get('/v1/historical/coverage')).json()) as { sports: { sport_key: string; rows: number; simulated_rows: number }[] };
  t.same(pub.sports.map((x) => [x.sport_key, x.rows, x.simulated_rows]), [['basketball_nba', 1, 1]], 'public coverage: simulated_rows');
  const m = (await (await app.get(`/v1/historical/sports/basketball_nba/matches?apiKey=${key}&dateFrom=${DAY}&dateTo=${DAY}`)).json()) as { matches: { event_id: string; simulated: boolean }[] };
  t.same(m.matches.map((x) => [x.event_id, x.simulated]), [['cl_sim', true]], '/matches: simulated');
});

for (const database of appDatabases()) t.test(`exports: credits per 1,000 rows, paging, bounds (${database})`, async (t) => {
  clock.release();
  const app = await startTestApp(t, { now: clock.now, database });
  await app.app.services.db.sql`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team,
      source, player_name, market_key, market_label, line, over_price, under_price, snapshot_time)
    select '2026-11-19', case when g % 2 = 0 then 'basketball_nba' else 'icehockey_nhl' end, 'e' || (g / 50), '2026-11-19T20:00:00Z', 'H', 'A',
      case when g % 3 = 0 then 'pinnacle' else 'fanduel' end, 'P' || g, 'player_points', 'Points', 10.5, 1.9, 1.95, '2026-11-19T19:59:00Z'
    from generate_series(1, 2500) g`;
  const key = await app.key('business', 1000);
  const get = (q: string) => app.get(`/v1/historical/closing-lines.json?date=2026-11-19&apiKey=${key}${q}`);
  let res = await get('');
  let body = (await res.json()) as Body;
  t.equal(body.row_count, 2500, 'all rows of the day');
  t.equal(res.headers.get('x-export-credits'), '3', '2,500 rows: 3 credits');
  t.equal(res.headers.get('x-requests-last'), '3', 'charged 3');
  t.equal(res.headers.get('x-ratelimit-remaining'), '997', 'balance down by 3');
  const names = body.rows.map((r) => r.player_name);
  t.equal(new Set(names).size, 2500, 'no row repeated or lost across pages of 1,000');
  res = await get('&limit=1000');
  t.equal(res.headers.get('x-export-credits'), '1', '1,000 rows: 1 credit');
  t.equal(((await res.json()) as Body).rows.length, 1000, 'limit bounds the rows');
  res = await get('&limit=1001');
  t.equal(res.headers.get('x-export-credits'), '2', '1,001 rows: 2 credits');
  await res.arrayBuffer();
  res = await get('&sport_key=basketball_nba&source=pinnacle');
  body = (await res.json()) as Body;
  t.equal(body.row_count, 416, 'filtered by sport and source (even and multiple of 3 up to 2,500)');
  t.ok(body.rows.every((r) => r.sport_key === 'basketball_nba' && r.source === 'pinnacle'), 'only matching rows');
  res = await get('&date=2026-11-18');
  t.equal(res.status, 422, 'a second, different date is 422 (the first one won silently before)');
  await res.arrayBuffer();
  res = await app.get(`/v1/historical/closing-lines.json?date=2026-11-18&apiKey=${key}`);
  body = (await res.json()) as Body;
  t.same([body.row_count, body.rows, res.headers.get('x-export-credits')], [0, [], '1'], 'an empty day: no rows, minimum 1 credit');

  for (const q of ['', 'date=2026-13-01', 'date=2026-11-19&limit=0', 'date=2026-11-19&limit=500001', 'date=2026-11-19&limit=1.5',
    'date=2026-11-19&source=nobook', 'date=2026-11-19&sport_key=nosport']) {
    const bad = await app.get(`/v1/historical/closing-lines.json?${q}&apiKey=${key}`);
    t.equal(bad.status, 422, `${q || 'no date'}: 422`);
    t.equal(((await bad.json()) as { error_code: string }).error_code, 'VALIDATION_ERROR', 'validation body');
  }
  t.equal((await app.get('/v1/historical/closing-lines.json?date=2026-11-19')).status, 401, 'a key is required');
  const poor = await app.key('free', 2);
  // the period's last credits serve it, for what is left (the balance reaches 0 before a refusal); then 401
  const lastOne = await app.get(`/v1/historical/closing-lines.json?date=2026-11-19&apiKey=${poor}`);
  t.same([lastOne.status, lastOne.headers.get('x-requests-last'), lastOne.headers.get('x-ratelimit-remaining')], [200, '2', '0'], '3 credits with 2 left: served for 2');
  await lastOne.arrayBuffer();
  t.equal((await app.get(`/v1/historical/closing-lines.json?date=2026-11-19&apiKey=${poor}`)).status, 401, 'then none left: OUT_OF_USAGE_CREDITS');

  res = await app.get(`/v1/sports/basketball_nba/closing-lines?apiKey=${key}&bookmakers=fanduel&daysFrom=30`);
  t.equal(res.status, 200, 'sport closing lines');
  body = (await res.json()) as Body;
  t.ok(body.rows.every((r) => r.sport_key === 'basketball_nba' && r.source === 'fanduel'), 'sport and bookmakers applied');
  for (const q of ['daysFrom=0', 'daysFrom=31', 'bookmakers=nobook']) {
    t.equal((await app.get(`/v1/sports/basketball_nba/closing-lines?apiKey=${key}&${q}`)).status, 422, `${q}: 422`);
  }
  t.equal((await app.get(`/v1/sports/nosport/closing-lines?apiKey=${key}`)).status, 404, 'unknown sport: 404');
  const cov = await app.get(`/v1/historical/sports/basketball_nba/coverage?apiKey=${key}&dateFrom=2026-11-19&dateTo=2026-11-19`);
  t.equal(cov.headers.get('x-requests-last'), '1', 'coverage costs 1');
  t.same(((await cov.json()) as { sources: unknown[] }).sources, [
    { source: 'fanduel', rows: 834, priced_rows: 834, simulated_rows: 0, first_date: '2026-11-19', last_date: '2026-11-19' },
    { source: 'pinnacle', rows: 416, priced_rows: 416, simulated_rows: 0, first_date: '2026-11-19', last_date: '2026-11-19' },
  ], 'per-source row counts, priced rows, first and last day');
  // regression: a three-way line's draw row has no under side, and a complete line counted as half priced
  await app.app.services.db.sql`insert into closing_lines (game_date, sport_key, event_id, commence_time, home_team, away_team,
      source, player_name, market_key, market_label, line, over_price, under_price, snapshot_time) values
    ('2026-11-19', 'soccer_epl', 'epl_cov', '2026-11-19T15:00:00Z', 'H', 'A', 'pinnacle', '', 'h2h_3_way', '3-Way Result', null, 2.1, 3.4, '2026-11-19T14:59:00Z'),
    ('2026-11-19', 'soccer_epl', 'epl_cov', '2026-11-19T15:00:00Z', 'H', 'A', 'pinnacle', 'Draw', 'h2h_3_way', '3-Way Result', null, 3.3, null, '2026-11-19T14:59:00Z'),
    ('2026-11-19', 'soccer_epl', 'epl_cov', '2026-11-19T15:00:00Z', 'H', 'A', 'fanduel', '', 'h2h_3_way', '3-Way Result', null, 2.0, null, '2026-11-19T14:59:00Z')`;
  const epl = (await (await app.get(`/v1/historical/sports/soccer_epl/coverage?apiKey=${key}`)).json()) as { sources: { source: string; rows: number; priced_rows: number }[] };
  t.same(epl.sources.map((x) => [x.source, x.rows, x.priced_rows]), [['fanduel', 1, 0], ['pinnacle', 2, 2]],
    'a priced draw row counts as priced; a line missing its away side does not');
  const none = (await (await app.get(`/v1/historical/sports/basketball_nba/coverage?apiKey=${key}&dateFrom=2026-11-20`)).json()) as { total_rows: number };
  t.equal(none.total_rows, 0, 'a range after the rows: none');
  t.equal((await app.get(`/v1/historical/sports/basketball_nba/coverage?apiKey=${key}&dateFrom=2026-11-20&dateTo=2026-11-19`)).status, 422, 'dateFrom after dateTo: 422');
  const pub = (await (await app.get('/v1/historical/coverage')).json()) as { sports: { sport_key: string; rows: number }[] };
  t.same(pub.sports.map((x) => [x.sport_key, x.rows]), [['basketball_nba', 1250], ['icehockey_nhl', 1250], ['soccer_epl', 3]], 'public coverage per sport, no key');
  // open to anyone and three counts over every row: one answer for 30 s unless this node captures a game
  await app.app.services.db.sql`delete from closing_lines where event_id = 'epl_cov' and source = 'fanduel'`;
  const again = (await (await app.get('/v1/historical/coverage')).json()) as { sports: { sport_key: string; rows: number }[] };
  t.equal(again.sports.find((x) => x.sport_key === 'soccer_epl')?.rows, 3, 'within 30 s: the same answer (counted once)');
  clock.freeze(clock.now() + 30_000);
  const later = (await (await app.get('/v1/historical/coverage')).json()) as { sports: { sport_key: string; rows: number }[] };
  t.equal(later.sports.find((x) => x.sport_key === 'soccer_epl')?.rows, 2, '30 s later: counted again');
  let m = await app.get(`/v1/historical/sports/basketball_nba/matches?apiKey=${key}&dateFrom=2026-11-01&dateTo=2026-11-30`);
  t.match(m.headers.get('x-coverage-hint'), /held from 2026-11-19 to 2026-11-19/, 'X-Coverage-Hint when the range asked exceeds what is held');
  t.equal(((await m.json()) as { matches: unknown[] }).matches.length, 51, 'the events of the range');
  m = await app.get(`/v1/historical/sports/basketball_nba/matches?apiKey=${key}&dateFrom=2026-11-19&dateTo=2026-11-19&limit=5`);
  t.equal(m.headers.get('x-coverage-hint'), null, 'no hint inside the held range');
  t.equal(((await m.json()) as { matches: unknown[] }).matches.length, 5, 'limit');
  t.equal((await app.get(`/v1/historical/sports/basketball_nba/matches?apiKey=${key}&limit=1001`)).status, 422, 'limit 1001: 422');
  // a 422 names the parameter sent, not the dateTo defaulted to today (regression: loc dateTo, input today's date)
  for (const [q, what] of [['dateFrom=2020-01-01', 'too far before today'], ['dateFrom=2099-01-01', 'after today']]) {
    const bad = (await (await app.get(`/v1/historical/sports/basketball_nba/matches?apiKey=${key}&${q}`)).json()) as { detail: { loc: string[]; msg: string; input: string }[] };
    t.same(bad.detail[0].loc, ['query', 'dateFrom'], `dateFrom ${what} without dateTo: loc dateFrom`);
    t.equal(bad.detail[0].input, q.slice('dateFrom='.length), 'its input is the date sent');
    t.match(bad.detail[0].msg, /today \(\d{4}-\d{2}-\d{2}\) when dateTo is omitted/, 'the message says what it was measured against');
  }
  const sent = (await (await app.get(`/v1/historical/sports/basketball_nba/matches?apiKey=${key}&dateFrom=2020-01-01&dateTo=2026-01-01`)).json()) as { detail: { loc: string[] }[] };
  t.same(sent.detail[0].loc, ['query', 'dateTo'], 'a dateTo sent too far after dateFrom: loc dateTo');
  const doc = (await (await app.get('/openapi.json')).json()) as { paths: Record<string, unknown> };
  t.ok(doc.paths['/v1/historical/closing-lines.csv'] && doc.paths['/v1/sports/{sport_key}/closing-lines'], 'exports listed in /openapi.json');
});

t.test('closing lines - CSV: a text a spreadsheet would run as a formula is written with a leading apostrophe', async (t) => {
  t.equal(csvField("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0", '= is neutralised');
  t.equal(csvField('+1 (555) 0100'), "'+1 (555) 0100", '+');
  t.equal(csvField('@SUM(A1)'), "'@SUM(A1)", '@');
  t.equal(csvField('-2+3,x'), `"'-2+3,x"`, '- and still quoted for its comma');
  t.equal(csvField(-3.5), '-3.5', 'a number is written as it is');
  t.equal(csvField('Boston Celtics'), 'Boston Celtics', 'a plain name unchanged');
});

t.test('closing lines - the sport\'s last-days export serves a game captured after an identical request', async (t) => {
  // the window ends at the request: a game starting after it is captured later and belongs in the same window
  // (regression: the cached body, invalidated only by captures before the first request's time, served 0 rows for
  // up to 6 hours)
  const start = Date.UTC(2026, 10, 21, 18, 0, 0);
  clock.freeze(start);
  const app = await startTestApp(t, { now: clock.now });
  const key = await app.key('business', 1000);
  const ev = { ...event, id: 'cl_late', commence_time: start + 20_000 };
  await app.ingest({ events: [ev], prices: [
    { book: 'pinnacle', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.8, ts: start - 1000 },
    { book: 'pinnacle', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.1, ts: start - 1000 },
  ] });
  const rows = async () => ((await (await app.get(`/v1/sports/basketball_nba/closing-lines?apiKey=${key}`)).json()) as Body).rows.length;
  clock.freeze(start + 5000);
  t.equal(await rows(), 0, 'before the start: no closing line');
  clock.freeze(start + 21_000);
  await app.app.services.history!.flush();
  t.equal(await rows(), 1, 'the same request in the same minute, after the capture: its row');
});
