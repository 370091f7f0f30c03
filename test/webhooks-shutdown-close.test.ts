// A node alone that shuts down closes the arbitrages it announced (arbitrage.closed, reason service_stopped): its
// prices live in memory, so after the restart nothing would ever close them and a bot tracking open arbitrages
// kept them open for good. The close is written with the last outbox rows and sent as the node stops; one the
// receiver does not answer in time stays pending and is delivered after the restart.

import { rmSync } from 'node:fs';
import t, { type Test } from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { freshDataDir } from './helpers/db.js';
import { call, j } from './helpers/api.js';
import { startReceiver, type Received, type Receiver } from './helpers/webhook-receiver.js';

const WEBHOOKS = { allowPrivate: true, retryDelaysMs: [100, 100], pollMs: 25 };

/** A node alone on a data directory of its own, subscribed (Variant B) to a receiver, with one arbitrage announced on
 *  game `id` (the receiver answers the opening with `openingAnswer`, once it holds it); `is(type)` picks that game's
 *  requests of a type. */
async function announced(t: Test, id: string, openingAnswer: ReturnType<Receiver['respond']> = 200) {
  const dataDir = await freshDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const rx = await startReceiver(t);
  rx.respond = (r) => (r.body?.event === 'arbitrage.opened' ? openingAnswer : 200);
  const app: TestApp = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  const key = await app.key('business');
  const sub = await j(await call(app, 'POST', '/v1/webhooks', key, { destination_url: rx.url + '?b', events: ['arbitrage.opened', 'arbitrage.closed'] }));
  t.ok(sub.id, 'subscribed');
  const g = { id, sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
  const side = (book: string, outcome: string, price: number) => ({ book, event_id: g.id, market: 'h2h', outcome, price });
  await app.ingest({ events: [g], prices: [side('draftkings', g.home_team, 2.2), side('draftkings', g.away_team, 1.6), side('fanduel', g.home_team, 1.6), side('fanduel', g.away_team, 2.2)] });
  const is = (type: string) => (r: Received) => r.body?.event === type && r.body.data.event_id === g.id;
  const [opened] = await rx.waitFor(is('arbitrage.opened'), 5000);
  return { dataDir, rx, app, key, is, opened };
}

t.test('webhooks - arbitrages announced are closed when the node stops (reason service_stopped)', async (t) => {
  const { dataDir, rx, key, is, opened, ...rest } = await announced(t, 'sc_1');
  let app = rest.app;
  await app.close();
  // sent as the node stopped (it was delivered only after a restart: a node that never came back never closed it)
  const closedNow = rx.requests.filter(is('arbitrage.closed'));
  t.equal(closedNow.length, 1, 'the receiver holds the close once the node has stopped');
  const [closed] = closedNow;
  t.equal(closed.body.data.arb_id, opened.body.data.arb_id, 'the same arbitrage');
  t.equal(closed.body.data.reason, 'service_stopped', 'reason service_stopped');
  app = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  t.same((await app.get('/v1/sports/basketball_nba/arbitrage', { 'X-API-Key': key }).then((r) => r.json())), [], 'after the restart there is none');
  await new Promise((r) => setTimeout(r, 500));
  t.equal(rx.requests.filter(is('arbitrage.closed')).length, 1, 'and the delivered close is not sent again');
});

t.test('webhooks - a close the receiver does not answer as the node stops is delivered after the restart', async (t) => {
  const { dataDir, rx, is, ...rest } = await announced(t, 'sc_2');
  let app = rest.app;
  rx.respond = (r) => (is('arbitrage.closed')(r) ? 503 : 200);
  const started = Date.now();
  await app.close();
  t.ok(Date.now() - started < 8000, 'the stop is bounded');
  t.ok(rx.requests.some(is('arbitrage.closed')), 'the close was tried as the node stopped');
  rx.respond = () => 200;
  const before = rx.requests.filter(is('arbitrage.closed')).length;
  app = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  const after = await rx.waitFor(is('arbitrage.closed'), 5000, before + 1);
  t.equal(after.at(-1)!.body.data.reason, 'service_stopped', 'and delivered after the restart');
});

t.test('webhooks - a close whose opening is still being answered as the node stops is sent once the opening is', async (t) => {
  // the close waits for its opening to be final; an opening answered while the node stops was still in flight (or
  // its outcome unwritten) when the last pass claimed, so the close was left for a restart that may never come
  const { rx, is, app } = await announced(t, 'sc_3', { status: 200, afterMs: 400 });
  await app.close();
  const closed = rx.requests.filter(is('arbitrage.closed'));
  t.equal(closed.length, 1, 'the close was sent as the node stopped');
  t.equal(closed[0]?.body.data.reason, 'service_stopped', 'reason service_stopped');
});
