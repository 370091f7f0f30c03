// An arbitrage's close never reaches a subscription before its opening (migration 012, NewDelivery.after): the close
// waits while the opening to the same subscription is on its retry schedule, and goes once the opening is final,
// delivered or failed. Regression from the webhook audit: with the receiver answering 503 to the opening's first
// attempt, arbitrage.closed arrived at once and the opening 30 s later.

import t from 'tap';
import { appDatabases, startTestApp } from './helpers/app.js';
import { call, j } from './helpers/api.js';
import { startReceiver, type Received } from './helpers/webhook-receiver.js';

for (const database of appDatabases()) {
  t.test(`webhooks - an arbitrage.closed waits for its opening (${database})`, async (t) => {
    const app = await startTestApp(t, { database, shards: 1, webhooks: { allowPrivate: true, retryDelaysMs: [400, 400], pollMs: 25 } });
    const rx = await startReceiver(t);
    const key = await app.key('enterprise');
    const res = await call(app, 'POST', '/v1/webhooks', key, { destination_url: rx.url, events: ['arbitrage.opened', 'arbitrage.closed'] });
    t.equal(res.status, 201, 'subscription made');
    const hook = await j(res);
    const now = Date.now();
    const game = (id: string) => ({ id, sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: `Home ${id}`, away_team: `Away ${id}` });
    const cross = (e: ReturnType<typeof game>, home: number) => [
      { book: 'fanduel', event_id: e.id, market: 'h2h', outcome: e.home_team, price: home },
      { book: 'draftkings', event_id: e.id, market: 'h2h', outcome: e.away_team, price: 2.2 },
    ];
    const of = (type: string, id: string) => (r: Received) => r.body?.event === type && r.body.data.event_id === id;
    const order = (id: string) => rx.requests.filter((r) => r.body?.data?.event_id === id).map((r) => `${r.body.event}:${r.headers['x-service-delivery-attempt']}:${rx.respond(r)}`);

    t.test('the opening\'s first attempt fails: the close follows its second', async (t) => {
      const e = game('ord_1');
      let openings = 0;
      rx.respond = (r) => (of('arbitrage.opened', e.id)(r) && ++openings === 1 ? 503 : 200);
      await app.ingest({ events: [e], prices: cross(e, 2.2) });
      await rx.waitFor(of('arbitrage.opened', e.id));
      // the close is raised while the opening waits 400 ms for its second attempt
      await app.ingest({ prices: cross(e, 1.5).slice(0, 1) });
      await rx.waitFor(of('arbitrage.closed', e.id), 5000);
      const seen = rx.requests.filter((r) => r.body?.data?.event_id === e.id).map((r) => `${r.body.event}:${r.headers['x-service-delivery-attempt']}`);
      t.same(seen, ['arbitrage.opened:1', 'arbitrage.opened:2', 'arbitrage.closed:1'], 'opening, its retry, then the close');
    });

    t.test('the opening fails every attempt: the close goes once it is final, not before', async (t) => {
      const e = game('ord_2');
      rx.respond = (r) => (of('arbitrage.opened', e.id)(r) ? 503 : 200);
      await app.ingest({ events: [e], prices: cross(e, 2.2) });
      await rx.waitFor(of('arbitrage.opened', e.id));
      await app.ingest({ prices: cross(e, 1.5).slice(0, 1) });
      await rx.waitFor(of('arbitrage.closed', e.id), 5000);
      const seen = rx.requests.filter((r) => r.body?.data?.event_id === e.id).map((r) => `${r.body.event}:${r.headers['x-service-delivery-attempt']}`);
      t.same(seen, ['arbitrage.opened:1', 'arbitrage.opened:2', 'arbitrage.opened:3', 'arbitrage.closed:1'], 'three failed attempts, then the close');
      const list = (await j(await call(app, 'GET', `/v1/webhooks/${hook.id}/deliveries?limit=50&status=failed`, key))) as { status: string }[];
      t.equal(list.length, 1, 'the opening is recorded as failed');
    });

    t.test('a replay made while disabled keeps its record when the re-enabled schedule resumes', async (t) => {
      // regression from the webhook audit: the scheduled attempt 2 took the replay's record number 2 and overwrote it
      const owner = await app.key('business');
      const w = await j(await call(app, 'POST', '/v1/webhooks', owner, { url: `${rx.url}?r`, events: ['new_event'], sport_filter: ['icehockey_nhl'] }));
      const mine = (r: Received) => r.path.endsWith('?r');
      let answer = 500;
      rx.respond = (r) => (mine(r) ? answer : 200);
      const e = { id: 'ord_r', sport_key: 'icehockey_nhl', commence_time: now + 3_600_000, home_team: 'Home R', away_team: 'Away R' };
      await app.ingest({ events: [e], prices: [{ book: 'fanduel', event_id: e.id, market: 'h2h', outcome: e.home_team, price: 1.9 }] });
      await rx.waitFor(mine);
      // disabled while its first retry waits (400 ms): nothing attempts it, so its owner may replay it
      t.equal((await call(app, 'PATCH', `/v1/webhooks/${w.id}`, owner, { is_active: false })).status, 200, 'disabled');
      const listed = async () => (await j(await call(app, 'GET', `/v1/webhooks/${w.id}/deliveries`, owner)))[0];
      let d = await listed();
      // (the attempt's outcome is recorded just after the receiver answered)
      for (let i = 0; i < 100 && d.status !== 'retrying'; i++) {
        await new Promise((r) => setTimeout(r, 10));
        d = await listed();
      }
      t.same([d.status, d.attempts.length], ['retrying', 1], 'on its schedule after one attempt');
      const replay = await j(await call(app, 'POST', `/v1/webhooks/${w.id}/replay?delivery_id=${d.id}`, owner));
      t.same([replay.delivered, replay.attempt, replay.replay], [false, 2, 1], 'the replay fails, recorded as the second');
      answer = 200;
      t.equal((await call(app, 'PATCH', `/v1/webhooks/${w.id}`, owner, { is_active: true })).status, 200, 're-enabled');
      await rx.waitFor(mine, 5000, 3);
      let last = await listed();
      for (let i = 0; i < 100 && last.status !== 'delivered'; i++) {
        await new Promise((r) => setTimeout(r, 25));
        last = await listed();
      }
      t.same(last.attempts.map((a: { number: number; replay: boolean; status_code: number }) => [a.number, a.replay, a.status_code]),
        [[1, false, 500], [2, true, 500], [3, false, 200]], 'every attempt kept, numbered in the order made, the replay marked');
      t.same(rx.requests.filter(mine).map((r) => [r.headers['x-service-delivery-attempt'], r.headers['x-service-replay'] ?? null]),
        [['1', null], ['1', '1'], ['2', null]], 'on the wire: attempt 1, the replay, then the schedule\'s attempt 2');
    });

    t.test('an opening delivered at once: its close is not held', async (t) => {
      const e = game('ord_3');
      rx.respond = () => 200;
      await app.ingest({ events: [e], prices: cross(e, 2.2) });
      const [open] = await rx.waitFor(of('arbitrage.opened', e.id));
      await app.ingest({ prices: cross(e, 1.5).slice(0, 1) });
      const [closed] = await rx.waitFor(of('arbitrage.closed', e.id), 5000);
      t.ok(closed.at >= open.at, 'after the opening');
      t.same(order(e.id).map((x) => x.split(':').slice(0, 2).join(':')), ['arbitrage.opened:1', 'arbitrage.closed:1'], 'each once');
    });
  });
}
