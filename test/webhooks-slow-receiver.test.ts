// One subscription whose receiver never answers holds at most its share of the attempts in flight
// (maxInFlightPerSub): the other subscriptions' first attempts go out at once instead of waiting for its timeouts.

import t from 'tap';
import { startTestApp } from './helpers/app.js';
import { call, j } from './helpers/api.js';
import { startReceiver } from './helpers/webhook-receiver.js';

function newEvents(sport: string, tag: string, n: number) {
  const now = Date.now();
  const events = Array.from({ length: n }, (_, i) => ({ id: `wsr_${tag}_${i}`, sport_key: sport, commence_time: now + 3_600_000, home_team: `Home ${tag}${i}`, away_team: `Away ${tag}${i}` }));
  const prices = events.map((e) => ({ book: 'draftkings', event_id: e.id, market: 'h2h', outcome: e.home_team, price: 1.9 }));
  return { events, prices };
}

t.test('webhooks - a receiver that never answers holds only its share of the slots', async (t) => {
  // 4 slots in all, 2 per subscription; an attempt times out after 3 s
  const app = await startTestApp(t, { shards: 1, webhooks: { allowPrivate: true, maxInFlight: 4, maxInFlightPerSub: 2, timeoutMs: 3000, retryDelaysMs: [60_000, 60_000], pollMs: 25 } });
  const rx = await startReceiver(t);
  rx.respond = (r) => (r.path.endsWith('?slow') ? 'hang' : 200);
  const key = await app.key('business');
  for (const [path, sport] of [['slow', 'icehockey_nhl'], ['fast', 'baseball_mlb']]) {
    const res = await call(app, 'POST', '/v1/webhooks', key, { url: `${rx.url}?${path}`, events: ['new_event'], sport_filter: [sport] });
    t.equal(res.status, 201, `${path} subscription created`);
    await res.arrayBuffer();
  }
  await app.ingest(newEvents('icehockey_nhl', 's', 10));
  await rx.waitFor((r) => r.path.endsWith('?slow'), 5000, 2);
  await app.ingest(newEvents('baseball_mlb', 'f', 1));
  const [fast] = await rx.waitFor((r) => r.path.endsWith('?fast'), 5000);
  const slowSoFar = rx.requests.filter((r) => r.path.endsWith('?slow') && r.at <= fast.at).length;
  // regression: the silent receiver's ten events took every slot, and the other subscription waited for its timeouts
  t.equal(slowSoFar, 2, 'when the other subscription is served, the silent one holds its 2 slots, no more');
  const hooks = await j(await call(app, 'GET', '/v1/webhooks', key));
  const slow = hooks.find((h: { url: string }) => h.url.endsWith('?slow'));
  const list = await j(await call(app, 'GET', `/v1/webhooks/${slow.id}/deliveries?limit=50`, key));
  t.equal(list.length, 10, 'its ten deliveries are recorded');
  t.ok(list.every((d: { status: string }) => d.status === 'pending'), 'all still pending: none had to time out first');
  // once its attempts time out, the waiting ones take its slots in turn
  await rx.waitFor((r) => r.path.endsWith('?slow'), 8000, 4);
  t.pass('the next two went out after the first two timed out');
});

t.test('webhooks - an account whose receivers never answer holds only its share of the slots, across its subscriptions', async (t) => {
  // 8 slots in all, 4 per subscription, 2 per account; an attempt times out after 5 s
  const app = await startTestApp(t, {
    shards: 1,
    webhooks: { allowPrivate: true, maxInFlight: 8, maxInFlightPerSub: 4, maxInFlightPerAccount: 2, timeoutMs: 5000, retryDelaysMs: [60_000, 60_000], pollMs: 25 },
  });
  const rx = await startReceiver(t);
  rx.respond = (r) => (r.path.includes('?noisy') ? 'hang' : 200);
  const noisy = await app.key('business');
  const victim = await app.key('business');
  for (const [key, path, sport] of [[noisy, 'noisy1', 'icehockey_nhl'], [noisy, 'noisy2', 'icehockey_ahl'], [victim, 'victim', 'baseball_mlb']]) {
    const res = await call(app, 'POST', '/v1/webhooks', key, { url: `${rx.url}?${path}`, events: ['new_event'], sport_filter: [sport] });
    t.equal(res.status, 201, `${path} subscription created`);
    await res.arrayBuffer();
  }
  await app.ingest(newEvents('icehockey_nhl', 'n1', 5));
  await app.ingest(newEvents('icehockey_ahl', 'n2', 5));
  await rx.waitFor((r) => r.path.includes('?noisy'), 5000, 2);
  await app.ingest(newEvents('baseball_mlb', 'v', 1));
  const [seen] = await rx.waitFor((r) => r.path.endsWith('?victim'), 5000);
  // regression (the webhook audit): the account's two hanging subscriptions held 4 slots each, all 8, and the other
  // account's delivery waited for their timeouts
  const noisySoFar = rx.requests.filter((r) => r.path.includes('?noisy') && r.at <= seen.at).length;
  t.equal(noisySoFar, 2, 'when the other account is served, the silent account holds its 2 slots across its two subscriptions, no more');
  const hooks = await j(await call(app, 'GET', '/v1/webhooks', noisy));
  let pending = 0;
  for (const h of hooks) {
    const list = await j(await call(app, 'GET', `/v1/webhooks/${h.id}/deliveries?limit=50`, noisy));
    pending += list.filter((d: { status: string }) => d.status === 'pending').length;
  }
  t.equal(pending, 10, 'its ten deliveries all still pending: none had to time out first');
  // once its attempts time out, its waiting ones take the account's slots in turn
  await rx.waitFor((r) => r.path.includes('?noisy'), 12_000, 4);
  t.pass('the next two went out after the first two timed out');
});

t.test('webhooks - test and replay sends take the subscription\'s slots and are limited per minute', async (t) => {
  // regression (the webhook audit): 100 concurrent tests to a receiver that never answered opened 100 connections,
  // past the 32 slots of a subscription, at no cost and with no rate limit. 2 slots per subscription here.
  const app = await startTestApp(t, { shards: 1, webhooks: { allowPrivate: true, maxInFlight: 8, maxInFlightPerSub: 2, timeoutMs: 5000, retryDelaysMs: [60_000, 60_000], pollMs: 25 } });
  const rx = await startReceiver(t);
  let hang = false;
  rx.respond = (r) => (hang && r.path.endsWith('?hang') ? 'hang' : 200);
  const key = await app.key('business');
  const make = async (path: string) => j(await call(app, 'POST', '/v1/webhooks', key, { url: `${rx.url}?${path}`, events: ['new_event'], sport_filter: ['cricket_ipl'] }));
  const h = await make('hang');
  const first = await j(await call(app, 'POST', `/v1/webhooks/${h.id}/test`, key));
  t.equal(first.delivered, true, 'a test delivered: a final delivery to replay');
  hang = true;
  const held = [call(app, 'POST', `/v1/webhooks/${h.id}/test`, key), call(app, 'POST', `/v1/webhooks/${h.id}/test`, key)];
  await rx.waitFor((r) => r.path.endsWith('?hang'), 5000, 3);
  for (const [what, path] of [['a third test', `/v1/webhooks/${h.id}/test`], ['a replay', `/v1/webhooks/${h.id}/replay?delivery_id=${first.delivery_id}`]]) {
    const res = await call(app, 'POST', path, key);
    t.equal(res.status, 429, `${what} while two tests hold the subscription's 2 slots: 429`);
    t.equal((await j(res)).error_code, 'EXCEEDED_FREQ_LIMIT', `${what}: EXCEEDED_FREQ_LIMIT`);
    t.ok(Number(res.headers.get('retry-after')) >= 1, `${what}: Retry-After`);
  }
  t.equal(rx.requests.filter((r) => r.path.endsWith('?hang')).length, 3, 'the receiver saw no request for them');
  for (const res of await Promise.all(held)) t.equal((await j(res)).delivered, false, 'the held tests time out');
  hang = false;
  t.equal((await j(await call(app, 'POST', `/v1/webhooks/${h.id}/replay?delivery_id=${first.delivery_id}`, key))).delivered, true, 'once they end, a replay goes out');

  const r = await make('rate');
  for (let i = 1; i <= 10; i++) {
    const res = await call(app, 'POST', `/v1/webhooks/${r.id}/test`, key);
    t.equal(res.status, 200, `test ${i} of the minute: 200`);
    await res.arrayBuffer();
  }
  const over = await call(app, 'POST', `/v1/webhooks/${r.id}/test`, key);
  t.equal(over.status, 429, 'the 11th test within a minute: 429');
  t.equal((await j(over)).error_code, 'EXCEEDED_FREQ_LIMIT', 'EXCEEDED_FREQ_LIMIT');
  t.ok(Number(over.headers.get('retry-after')) >= 1, 'with Retry-After');
  t.equal(rx.requests.filter((x) => x.path.endsWith('?rate')).length, 10, 'ten sent');
});
