// A node whose PostgreSQL goes out of reach answers requests that need it with 503 SERVICE_UNAVAILABLE and a
// Retry-After (a passing outage), not 500 INTERNAL_ERROR, and serves them again once it is back. The database is
// the real server of TEST_DATABASE_URL seen through a TCP relay on loopback, which the test cuts and restores.

import t from 'tap';
import { ADMIN_KEY, startTestApp } from './helpers/app.js';
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
