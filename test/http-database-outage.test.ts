// A node whose PostgreSQL goes out of reach answers requests that need it with 503 SERVICE_UNAVAILABLE and a
// Retry-After (a passing outage), not 500 INTERNAL_ERROR, and serves them again once it is back. The database is
// the real server of TEST_DATABASE_URL seen through a TCP relay on loopback, which the test cuts and restores.

import t from 'tap';
import { ADMIN_KEY, TestClock, startTestApp } from './helpers/app.js';
import { testSchemaName } from './helpers/db.js';
import { startRelay } from './helpers/tcp-relay.js';

const url = process.env.TEST_DATABASE_URL;

/** the server of TEST_DATABASE_URL through a relay of the test's own, and the URL that reaches it through the relay */
async function relayedDatabase(t: Parameters<typeof startRelay>[0]) {
  const target = new URL(url!);
  const relay = await startRelay(t, target.hostname, Number(target.port || 5432));
  const relayed = new URL(url!);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(relay.port);
  return { relay, databaseUrl: relayed.toString() };
}

t.test('database outage - 503 with Retry-After while PostgreSQL is unreachable, served again once it is back',
  { skip: url ? false : 'TEST_DATABASE_URL is not set (a PostgreSQL server to relay to)' }, async (t) => {
    const { relay, databaseUrl } = await relayedDatabase(t);
    const app = await startTestApp(t, { databaseUrl, schema: testSchemaName(), dropSchemaOnClose: true });
    // the relay is back before the app closes (it drops its schema)
    t.teardown(() => relay.restore().catch(() => undefined));
    const admin = { authorization: `Bearer ${ADMIN_KEY}` };
    t.equal((await app.post('/v1/admin/keys', { tier: 'pro' }, admin)).status, 201, 'a key is made while the database is reachable');
    await relay.cut();
    const res = await app.post('/v1/admin/keys', { tier: 'pro' }, admin);
    const body = (await res.json()) as { error_code: string; message: string };
    t.equal(res.status, 503, `503 while the database is unreachable (${body.message})`);
    t.equal(body.error_code, 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE');
    t.equal(res.headers.get('retry-after'), '5', 'Retry-After: 5');
    await relay.restore();
    let status = 0;
    for (let i = 0; i < 50 && status !== 201; i++) {
      status = (await app.post('/v1/admin/keys', { tier: 'pro' }, admin)).status;
      if (status !== 201) await new Promise((r) => setTimeout(r, 100));
    }
    t.equal(status, 201, 'keys are made again once the database is back');
  });

t.test('database outage - a status history read the database does not answer is 503 within its bound, not a request held open',
  { skip: url ? false : 'TEST_DATABASE_URL is not set (a PostgreSQL server to relay to)' }, async (t) => {
    const { relay, databaseUrl } = await relayedDatabase(t);
    const app = await startTestApp(t, { databaseUrl, schema: testSchemaName(), dropSchemaOnClose: true, status: { historyTimeoutMs: 500 } });
    t.teardown(() => relay.thaw());
    t.equal((await app.get('/v1/status/history?window_s=60')).status, 200, 'answered while the database answers');
    relay.freeze();
    const started = Date.now();
    const res = await app.get('/v1/status/history?window_s=60');
    const ms = Date.now() - started;
    t.equal(res.status, 503, `503 when the database stops answering (${ms} ms)`);
    t.equal(res.headers.get('retry-after'), '5', 'Retry-After');
    t.ok(ms < 3000, 'within its bound (0.5 s here), not after the driver gives up');
    relay.thaw();
  });

t.test('database outage - pregame prices taken for a write that failed are written with the next, not lost',
  { skip: url ? false : 'TEST_DATABASE_URL is not set (a PostgreSQL server to relay to)' }, async (t) => {
    const { relay, databaseUrl } = await relayedDatabase(t);
    const clock = new TestClock();
    const T0 = clock.freeze(Date.UTC(2026, 10, 22, 17, 0, 0));
    const app = await startTestApp(t, { databaseUrl, schema: testSchemaName(), dropSchemaOnClose: true, now: clock.now });
    t.teardown(() => relay.restore().catch(() => undefined));
    const key = await app.key('business', 1000);
    const ev = { id: 'outage_cl', sport_key: 'basketball_nba', commence_time: T0 + 60_000, home_team: 'Outage Home', away_team: 'Outage Away' };
    const history = app.app.services.history!;
    await app.ingest({ events: [ev], prices: [
      { book: 'pinnacle', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.9, ts: T0 - 1000 },
      { book: 'pinnacle', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.0, ts: T0 - 1000 },
    ] });
    await relay.cut();
    const failures = history.counters.failures;
    await history.flush();
    t.ok(history.counters.failures > failures, 'the write failed while the database was out of reach');
    await relay.restore();
    let persisted = 0;
    for (let i = 0; i < 50 && persisted === 0; i++) {
      await history.flush();
      persisted = history.counters.persistedQuotes;
      if (persisted === 0) await new Promise((r) => setTimeout(r, 100));
    }
    t.equal(persisted, 2, 'both prices written once the database is back (they were taken, then dropped)');
    // a node restarted now would read them back from the database as the pregame state
    clock.freeze(T0 + 61_000);
    await history.flush();
    const res = await app.get(`/v1/historical/closing-lines.json?date=2026-11-22&apiKey=${key}`);
    const body = (await res.json()) as { rows: { over_price: number; under_price: number }[] };
    t.same(body.rows.map((x) => [x.over_price, x.under_price]), [[1.9, 2.0]], 'and captured at the start');
  });
