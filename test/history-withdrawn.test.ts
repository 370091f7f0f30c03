// Closing lines follow what left the market before the start (found by the durability audit): a book's market
// withdrawn before the start (ingest `price: null`, the Odds API connector's pulled line) stood in the export as its
// book's close, and a game made final before its start (cancelled; the connector's event gone upstream) was captured
// at its planned start with every pregame quote and listed by /matches. A game delayed after its planned start
// (pregame again, a later start) kept the close taken at the planned start.

import t from 'tap';
import { TestClock, appDatabases, startTestApp } from './helpers/app.js';

type Row = Record<string, string | number | null>;

const clock = new TestClock();
const T0 = clock.freeze(Date.UTC(2026, 10, 21, 17, 0, 0));
const C = T0 + 60_000;
const DAY = '2026-11-21';
const game = (id: string) => ({ id, sport_key: 'basketball_nba', commence_time: C, home_team: 'Boston Celtics', away_team: 'Miami Heat' });
const h2h = (id: string, book: string, home: number, away: number, ts: number) => [
  { book, event_id: id, market: 'h2h', outcome: 'Boston Celtics', price: home, ts },
  { book, event_id: id, market: 'h2h', outcome: 'Miami Heat', price: away, ts },
];
const totals = (id: string, book: string, point: number, over: number, under: number, ts: number) => [
  { book, event_id: id, market: 'totals', outcome: 'Over', point, price: over, ts },
  { book, event_id: id, market: 'totals', outcome: 'Under', point, price: under, ts },
];


for (const database of appDatabases()) {
  t.test(`closing lines - a market withdrawn before the start has no closing row; one moved keeps its last line (${database})`, async (t) => {
    clock.freeze(T0);
    const app = await startTestApp(t, { now: clock.now, database });
    const key = await app.key('business', 1000);
    const id = `cw_${database}`;
    let r = await app.ingest({ events: [game(id)], prices: [
      ...h2h(id, 'pinnacle', 1.9, 2.0, T0 - 5000),
      ...totals(id, 'draftkings', 220.5, 1.87, 1.95, T0 - 5000),
      ...totals(id, 'fanduel', 219.5, 1.9, 1.9, T0 - 5000),
    ] });
    t.equal(r.json.accepted, 6, 'pregame quotes');
    clock.freeze(T0 + 10_000);
    r = await app.ingest({ prices: [
      { book: 'draftkings', event_id: id, market: 'totals', price: null, ts: T0 + 10_000 },
      ...totals(id, 'fanduel', 221.5, 1.88, 1.92, T0 + 10_000),
    ] });
    t.equal(r.json.accepted, 3, 'draftkings withdraws its totals; fanduel moves to 221.5');
    clock.freeze(C + 1);
    await app.app.services.history!.flush();
    const res = await app.get(`/v1/historical/closing-lines.json?date=${DAY}&apiKey=${key}`);
    const rows = ((await res.json()) as { rows: Row[] }).rows;
    t.same(rows.map((x) => `${x.source}:${x.market_key}:${x.line}:${x.over_price}:${x.under_price}`).sort(), [
      'fanduel:totals:221.5:1.88:1.92', 'pinnacle:h2h:null:1.9:2',
    ], 'pinnacle\'s moneyline and fanduel\'s moved total close; draftkings\' withdrawn total has no row');
  });

  t.test(`closing lines - a game made final before its start has none, and /matches does not list it (${database})`, async (t) => {
    clock.freeze(T0);
    const app = await startTestApp(t, { now: clock.now, database });
    const key = await app.key('business', 1000);
    const id = `cc_${database}`;
    const kept = `ck_${database}`;
    await app.ingest({ events: [game(id), { ...game(kept), home_team: 'Utah Jazz', away_team: 'Orlando Magic' }], prices: [
      ...h2h(id, 'pinnacle', 1.9, 2.0, T0 - 5000),
      { book: 'pinnacle', event_id: kept, market: 'h2h', outcome: 'Utah Jazz', price: 1.8, ts: T0 - 5000 },
      { book: 'pinnacle', event_id: kept, market: 'h2h', outcome: 'Orlando Magic', price: 2.1, ts: T0 - 5000 },
    ] });
    await app.app.services.history!.flush();
    clock.freeze(T0 + 20_000);
    const fin = await app.ingest({ events: [{ ...game(id), status: 'final' }] });
    t.equal(fin.json.events, 1, 'cancelled: made final before its start');
    clock.freeze(C + 1);
    await app.app.services.history!.flush();
    const rows = ((await (await app.get(`/v1/historical/closing-lines.json?date=${DAY}&apiKey=${key}`)).json()) as { rows: Row[] }).rows;
    t.same(rows.map((x) => x.home_team), ['Utah Jazz'], 'only the game that started has closing lines');
    const m = (await (await app.get(`/v1/historical/sports/basketball_nba/matches?dateFrom=${DAY}&dateTo=${DAY}&apiKey=${key}`)).json()) as { matches: { event_id: string }[] };
    t.same(m.matches.map((x) => x.event_id), [kept], '/matches lists the game that started alone');
    const left = await app.app.services.db.sql`select count(*)::int as n from pregame_quotes where event_id = ${id}`;
    const open = await app.app.services.db.sql`select count(*)::int as n from history_events where event_id = ${id} and captured_at is null`;
    t.same([left[0].n, open[0].n], [0, 0], 'its pregame state is gone from the database: a restart has nothing of it to capture');
  });

  t.test(`closing lines - a game delayed after its planned start closes again at its new start (${database})`, async (t) => {
    clock.freeze(T0);
    const app = await startTestApp(t, { now: clock.now, database });
    const key = await app.key('business', 1000);
    const id = `cd_${database}`;
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19) + 'Z';
    await app.ingest({ events: [game(id)], prices: [...h2h(id, 'pinnacle', 1.9, 2.0, T0 - 5000), ...h2h(id, 'fanduel', 1.8, 2.1, T0 - 5000)] });
    clock.freeze(C + 1);
    await app.app.services.history!.flush();
    const rows = async () => ((await (await app.get(`/v1/historical/closing-lines.json?date=${DAY}&apiKey=${key}`)).json()) as { rows: Row[] }).rows
      .map((x) => `${x.source}:${x.over_price}:${x.under_price}:${x.commence_time}`).sort();
    t.same(await rows(), [`fanduel:1.8:2.1:${iso(C)}`, `pinnacle:1.9:2:${iso(C)}`], 'captured at the planned start');
    // delayed: a start two minutes later; pinnacle prices it again just before
    const C2 = C + 120_000;
    clock.freeze(C + 10_000);
    t.equal((await app.ingest({ events: [{ ...game(id), commence_time: C2 }] })).json.events, 1, 'the start moves later');
    clock.freeze(C2 - 2000);
    t.equal((await app.ingest({ prices: h2h(id, 'pinnacle', 1.95, 1.9, C2 - 2000) })).json.accepted, 2, 'pregame again');
    // the close is what /odds serves just before the new start (a book's quote from before the planned start is
    // served still unless the planned start's tick dropped it first: either way, served and closed agree)
    clock.freeze(C2 - 1);
    const served = ((await (await app.get(`/v1/sports/basketball_nba/odds?apiKey=${key}&eventIds=${id}&oddsFormat=decimal&bookmakers=pinnacle,fanduel`)).json()) as
      { bookmakers: { key: string; markets: { outcomes: { name: string; price: number }[] }[] }[] }[])[0].bookmakers
      .map((b) => `${b.key}:${b.markets[0].outcomes.find((o) => o.name === 'Boston Celtics')!.price}:${b.markets[0].outcomes.find((o) => o.name === 'Miami Heat')!.price}:${iso(C2)}`).sort();
    t.ok(served.includes(`pinnacle:1.95:1.9:${iso(C2)}`), 'pinnacle\'s new prices are served');
    clock.freeze(C2 + 1);
    await app.app.services.history!.flush();
    t.same(await rows(), served, 'closed again at the new start, as served then: the first capture replaced');
    const m = (await (await app.get(`/v1/historical/sports/basketball_nba/matches?dateFrom=${DAY}&dateTo=${DAY}&apiKey=${key}`)).json()) as { matches: { commence_time: string }[] };
    t.same(m.matches.map((x) => x.commence_time), [iso(C2)], '/matches: the new start');
  });
}
