// A node alone that shuts down closes the arbitrages it announced (arbitrage.closed, reason service_stopped): its
// prices live in memory, so after the restart nothing would ever close them and a bot tracking open arbitrages
// kept them open for good. The close is written with the last outbox rows and delivered after the restart.

import { rmSync } from 'node:fs';
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { freshDataDir } from './helpers/db.js';
import { call, j } from './helpers/api.js';
import { startReceiver, type Received } from './helpers/webhook-receiver.js';

const WEBHOOKS = { allowPrivate: true, retryDelaysMs: [100, 100], pollMs: 25 };

t.test('webhooks - arbitrages announced are closed when the node stops (reason service_stopped)', async (t) => {
  const dataDir = await freshDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const rx = await startReceiver(t);
  let app: TestApp = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  const key = await app.key('business');
  const sub = await j(await call(app, 'POST', '/v1/webhooks', key, { destination_url: rx.url + '?b', events: ['arbitrage.opened', 'arbitrage.closed'] }));
  t.ok(sub.id, 'subscribed');
  const g = { id: 'sc_1', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const side = (book: string, outcome: string, price: number) => ({ book, event_id: g.id, market: 'h2h', outcome, price });
  await app.ingest({ events: [g], prices: [side('draftkings', g.home_team, 2.2), side('draftkings', g.away_team, 1.6), side('fanduel', g.home_team, 1.6), side('fanduel', g.away_team, 2.2)] });
  const is = (type: string) => (r: Received) => r.body?.event === type && r.body.data.event_id === g.id;
  const [opened] = await rx.waitFor(is('arbitrage.opened'), 5000);
  await app.close();
  app = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  const [closed] = await rx.waitFor(is('arbitrage.closed'), 5000);
  t.equal(closed.body.data.arb_id, opened.body.data.arb_id, 'the same arbitrage');
  t.equal(closed.body.data.reason, 'service_stopped', 'reason service_stopped');
  t.same((await app.get('/v1/sports/basketball_nba/arbitrage', { 'X-API-Key': key }).then((r) => r.json())), [], 'and after the restart there is none');
});
