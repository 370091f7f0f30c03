// The closing-line writer when the database refuses one event's rows (a data exception: here a NUL in a team's name,
// which ingest now refuses, put into the read model behind its back) or cannot be reached: the other events are
// captured, and nothing taken for a write that failed is lost.

import t from 'tap';
import { TestClock, appDatabases, startTestApp } from './helpers/app.js';

const clock = new TestClock();
const T0 = clock.freeze(Date.UTC(2026, 10, 21, 17, 0, 0));
const C = T0 + 60_000;

const bad = { id: 'ref_bad', sport_key: 'basketball_nba', commence_time: C, home_team: 'Poison Home', away_team: 'Poison Away' };
const good = { id: 'ref_good', sport_key: 'basketball_nba', commence_time: C + 1000, home_team: 'Good Home', away_team: 'Good Away' };
const h2h = (ev: typeof bad, book: string, a: number, b: number, ts: number) => [
  { book, event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: a, ts },
  { book, event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: b, ts },
];

for (const database of appDatabases()) t.test(`closing lines - one event refused by the database holds up no other (${database})`, async (t) => {
  clock.freeze(T0);
  const app = await startTestApp(t, { now: clock.now, database });
  const key = await app.key('business', 1000);
  const ingest = await app.ingest({ events: [bad, good] });
  t.equal(ingest.json.events, 2, 'both events');
  const hub = app.app.services.hub;
  hub.readModel.event(hub.eventIds.peek(bad.id))!.home = 'Poison\u0000Home';
  const r = await app.ingest({ prices: [...h2h(bad, 'pinnacle', 1.9, 2.0, T0 - 1000), ...h2h(good, 'pinnacle', 1.8, 2.1, T0 - 1000)] });
  t.equal(r.json.accepted, 4, 'prices for both');
  const history = app.app.services.history!;
  await history.flush();
  t.ok(history.counters.failures >= 1, 'the refused write counted');
  clock.freeze(C + 2000);
  await history.flush();
  const res = await app.get(`/v1/historical/closing-lines.json?date=2026-11-21&apiKey=${key}`);
  const body = (await res.json()) as { rows: { home_team: string; over_price: number | null }[] };
  t.same(body.rows.map((x) => x.home_team), ['Good Home'], 'the other event captured (every pass stopped at the refused one)');
  t.equal(history.openEvents, 0, 'neither left open');
});
