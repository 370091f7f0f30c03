// A webhook attempt in flight when the process stops is charged once, when it is delivered after the restart: its
// credits are held (taken from the balance) while it is in flight, not charged and not written (Accounts.hold), so
// the meter written at shutdown, or every second before a kill, holds nothing for it. Before, the reservation was
// written and the repeat after the restart charged again: 10 credits for one delivery.

import { rmSync } from 'node:fs';
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { freshDataDir } from './helpers/db.js';
import { call, j, until } from './helpers/api.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const WEBHOOKS = { allowPrivate: true, timeoutMs: 8000, retryDelaysMs: [60_000, 60_000], pollMs: 25 };

t.test('webhook credits - an attempt cut by a shutdown is charged once, after the restart delivers it', async (t) => {
  const dataDir = await freshDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const rx = await startReceiver(t);
  rx.respond = () => 'hang';
  let app: TestApp = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  const key = await app.key('pro', 1000);
  const sub = await j(await call(app, 'POST', '/v1/webhooks', key, { url: rx.url, events: ['new_event'] }));
  t.ok(sub.id, 'subscribed');
  const usage = async () => {
    // a keyed call that costs nothing, for the usage headers
    const r = await call(app, 'GET', '/v1/calc/odds?price=2', key);
    await r.arrayBuffer();
    return [Number(r.headers.get('x-requests-used')), Number(r.headers.get('x-ratelimit-remaining'))];
  };
  const ing = await app.ingest({
    events: [{ id: 'cr_1', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' }],
    prices: [{ book: 'draftkings', event_id: 'cr_1', market: 'h2h', outcome: 'Boston Celtics', price: 1.9 }],
  });
  t.equal(ing.status, 202, 'ingested');
  await rx.waitFor(() => true, 5000);
  t.same(await usage(), [0, 995], 'in flight: 5 credits held from the balance, none used');
  // the meter is written every second: long enough for a reservation to have reached the database
  await new Promise((r) => setTimeout(r, 1300));
  await app.close();

  rx.respond = () => 200;
  app = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  await rx.waitFor(() => true, 8000, 2);
  await until(async () => (await j(await call(app, 'GET', `/v1/webhooks/${sub.id}/deliveries`, key)))[0]?.status === 'delivered', 3000);
  t.same(await usage(), [5, 995], 'one delivery, charged 5 credits once');
});
