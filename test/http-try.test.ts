import t from 'tap';
import { TestClock, startTestApp } from './helpers/app.js';

t.test('/v1/try: no key, US moneylines of the first five events, six sports, 60 an hour per address', async (t) => {
  const clock = new TestClock();
  // the middle of an hour, so the hourly window cannot roll over during the test
  const now = clock.freeze(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 1_800_000);
  const app = await startTestApp(t, { now: clock.now });
  const events = Array.from({ length: 7 }, (_, i) => ({ id: `try_${i}`, sport_key: 'icehockey_nhl', commence_time: now + (i + 1) * 3_600_000, home_team: `H${i}`, away_team: `A${i}` }));
  await app.ingest({ events, prices: events.flatMap((e) => [
    { book: 'draftkings', event_id: e.id, market: 'h2h', outcome: e.home_team, price: 1.9 },
    { book: 'draftkings', event_id: e.id, market: 'h2h', outcome: e.away_team, price: 1.95 },
    { book: 'draftkings', event_id: e.id, market: 'totals', outcome: 'Over', point: 6.5, price: 1.9 },
    { book: 'draftkings', event_id: e.id, market: 'totals', outcome: 'Under', point: 6.5, price: 1.9 },
    { book: 'williamhill', event_id: e.id, market: 'h2h', outcome: e.home_team, price: 1.91 },
    { book: 'williamhill', event_id: e.id, market: 'h2h', outcome: e.away_team, price: 1.93 },
  ]) });
  const res = await app.get('/v1/try/icehockey_nhl/odds');
  t.equal(res.status, 200, 'no key needed');
  const body = (await res.json()) as { id: string; bookmakers: { key: string; markets: { key: string }[]; raw_json?: unknown }[] }[];
  t.same(body.map((e) => e.id), ['try_0', 'try_1', 'try_2', 'try_3', 'try_4'], 'the first five events');
  t.ok(body.every((e) => e.bookmakers.every((b) => b.key === 'draftkings' && b.markets.every((m) => m.key === 'h2h') && b.raw_json === undefined)),
    'moneylines of US books only');
  t.equal((await app.get('/v1/try/tennis_atp_finals/odds')).status, 404, 'other sports: 404');
  for (let i = 0; i < 59; i++) await (await app.get('/v1/try/icehockey_nhl/odds')).arrayBuffer();
  const limited = await app.get('/v1/try/icehockey_nhl/odds');
  t.equal(limited.status, 429, 'the 61st request of the hour is refused');
  t.equal(((await limited.json()) as { error_code: string }).error_code, 'EXCEEDED_FREQ_LIMIT', 'EXCEEDED_FREQ_LIMIT');
  t.equal(limited.headers.get('retry-after'), '1800', 'Retry-After: the rest of the hour');
  clock.freeze(now + 1_800_000);
  t.equal((await app.get('/v1/try/icehockey_nhl/odds')).status, 200, 'the next hour starts afresh');
});
