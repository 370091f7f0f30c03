// A delivery left on its retry schedule when its subscription is disabled can be replayed by its owner (it was
// 409 DELIVERY_IN_PROGRESS for as long as the subscription stayed disabled, though nothing would attempt it).

import t from 'tap';
import { startTestApp } from './helpers/app.js';
import { call, j, until } from './helpers/api.js';
import { startReceiver } from './helpers/webhook-receiver.js';

t.test('webhooks - a retrying delivery of a disabled subscription is replayable', async (t) => {
  // the second attempt is a minute away: the delivery stays retrying for the whole test
  const app = await startTestApp(t, { shards: 1, webhooks: { allowPrivate: true, retryDelaysMs: [60_000, 60_000], pollMs: 25 } });
  const rx = await startReceiver(t);
  const key = await app.key('pro');
  const created = await call(app, 'POST', '/v1/webhooks', key, { url: `${rx.url}?r`, events: ['new_event'], sport_filter: ['icehockey_nhl'] });
  t.equal(created.status, 201, 'created');
  const w = await j(created);
  rx.respond = () => 500;
  const now = Date.now();
  await app.ingest({
    events: [{ id: 'wdr_1', sport_key: 'icehockey_nhl', commence_time: now + 3_600_000, home_team: 'Home R', away_team: 'Away R' }],
    prices: [{ book: 'draftkings', event_id: 'wdr_1', market: 'h2h', outcome: 'Home R', price: 1.9 }],
  });
  const list = async () => j(await call(app, 'GET', `/v1/webhooks/${w.id}/deliveries`, key));
  await until(async () => (await list()).some((d: { status: string }) => d.status === 'retrying'));
  const d = (await list()).find((x: { status: string }) => x.status === 'retrying');
  const busy = await call(app, 'POST', `/v1/webhooks/${w.id}/replay?delivery_id=${d.id}`, key);
  t.equal(busy.status, 409, 'active: a delivery on its schedule is in progress (409)');
  t.equal((await j(busy)).error_code, 'DELIVERY_IN_PROGRESS', 'DELIVERY_IN_PROGRESS');
  t.equal((await call(app, 'PATCH', `/v1/webhooks/${w.id}`, key, { is_active: false })).status, 200, 'disabled');
  rx.respond = () => 200;
  const replay = await call(app, 'POST', `/v1/webhooks/${w.id}/replay?delivery_id=${d.id}`, key);
  t.equal(replay.status, 200, 'disabled: the retrying delivery can be replayed');
  t.equal((await j(replay)).delivered, true, 'and is delivered');
  t.equal((await list()).find((x: { id: string }) => x.id === d.id)?.status, 'delivered', 'recorded as delivered');
});
