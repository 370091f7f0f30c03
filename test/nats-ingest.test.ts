// NATS ingest on one node (NATS_URL, no cluster): a msgpack batch on `<prefix>.ingest.<sport>` is applied like
// POST /v1/ingest and answered when it is a request; undecodable, malformed and partly rejected batches are
// counted in /metrics and /v1/status, feed parser.degraded, and the consumer goes on. Skipped without NATS_URL.

import { pack } from 'msgpackr';
import t from 'tap';
import { natsConfigFromEnv } from '../workers/nats.js';
import { NatsIngest } from '../workers/nats-ingest.js';
import { fixture, holdDatabase, startTestApp } from './helpers/app.js';
import { NATS_SKIP, testNats } from './helpers/nats.js';
import { startReceiver } from './helpers/webhook-receiver.js';

t.test('nats ingest - applies a batch, counts bad ones, feeds parser.degraded', { skip: NATS_SKIP }, async (t) => {
  const ns = await testNats(t);
  const nats = natsConfigFromEnv({ ...ns.env, NODE_ID: 'ingest-test' }, (_n, d) => d);
  const app = await startTestApp(t, { shards: 1, nats, status: { cacheMs: 0 }, webhooks: { allowPrivate: true, retryDelaysMs: [100], pollMs: 25 } });
  const rx = await startReceiver(t);
  const key = await app.key('enterprise');
  const hook = await app.post('/v1/webhooks', { destination_url: rx.url + '?parser', events: ['parser.degraded'] }, { 'x-api-key': key });
  t.equal(hook.status, 201, 'parser.degraded subscription');

  const { nba } = fixture(Date.now());
  const subject = `${ns.prefix}.ingest.basketball_nba`;
  const request = async (data: Uint8Array, subj = subject) => JSON.parse((await ns.nc.request(subj, data, { timeout: 10_000 })).string());

  const ok = await request(pack({ events: [nba], prices: [
    { book: 'draftkings', event_id: nba.id, market: 'h2h', outcome: nba.home_team, price: 1.91 },
    { book: 'draftkings', event_id: nba.id, market: 'h2h', outcome: nba.away_team, price: 1.99 },
  ] }));
  t.same(ok, { events: 1, accepted: 2, ignored: 0, rejected: [], rejected_events: [] }, 'a request is answered with the ingest result');
  const odds = await (await app.get(`/v1/sports/basketball_nba/odds?markets=h2h&apiKey=${key}`)).json() as { id: string; bookmakers: { key: string; markets: { outcomes: { name: string; price: number }[] }[] }[] }[];
  const dk = odds.find((e) => e.id === nba.id)?.bookmakers.find((b) => b.key === 'draftkings');
  t.equal(dk?.markets[0].outcomes.find((o) => o.name === nba.home_team)?.price, 1.91, 'the price is served over REST');

  // fire-and-forget bad batches; the request after them is answered once they were handled (one at a time, in order)
  ns.nc.publish(subject, new Uint8Array([0xc1]));
  ns.nc.publish(subject, pack({ events: 5 }));
  ns.nc.publish(`${ns.prefix}.ingest.no_such_sport`, pack({ events: [] }));
  for (let i = 0; i < 20; i++) ns.nc.publish(subject, new Uint8Array([0x92]));
  const partial = await request(pack({ prices: [{ book: 'no_such_book', event_id: nba.id, market: 'h2h', outcome: nba.home_team, price: 2 }] }));
  t.equal(partial.rejected[0]?.error_code, 'UNKNOWN_BOOK', 'an item is rejected on its own, with its code');
  const bad = await request(new Uint8Array([0xc1]));
  t.equal(bad.error_code, 'MALFORMED_BODY', 'an undecodable request is answered with the error body');
  const misspelt = await request(pack({ event: [nba] }));
  t.equal(misspelt.error_code, 'MALFORMED_BODY', 'a misspelt top-level field is malformed, as over HTTP (the same batchShape)');

  const metrics = await (await app.get('/metrics')).text();
  const count = (result: string) => Number(new RegExp(`linewire_nats_ingest_batches_total\\{result="${result}"\\} (\\d+)`).exec(metrics)?.[1]);
  t.same([count('ok'), count('undecodable'), count('malformed'), count('rejected_items')], [1, 22, 3, 1], '/metrics: batches by result');
  t.equal(Number(/linewire_ingest_rejected_total (\d+)/.exec(metrics)?.[1]), 26, 'each refused batch counts as one rejected observation, plus the rejected item');

  const status = await (await app.get('/v1/status')).json() as { nats: { ingest: { bad_batches: number; rejected_items: number; last_bad: { reason: string } } } };
  t.equal(status.nats.ingest.bad_batches, 26, '/v1/status: bad batches');
  t.equal(status.nats.ingest.rejected_items, 1, '/v1/status: items rejected in applied batches');
  t.match(status.nats.ingest.last_bad.reason, /MALFORMED_BODY/, '/v1/status: the last bad batch and why');

  const [deg] = await rx.waitFor((r) => r.path.endsWith('?parser') && r.body?.event === 'parser.degraded', 5000);
  t.ok(deg.body.data.rejected >= 20 && deg.body.data.rejected_pct > 10, 'parser.degraded raised by the bad batches');

  const again = await request(pack({ prices: [{ book: 'draftkings', event_id: nba.id, market: 'h2h', outcome: nba.home_team, price: 1.95 }] }));
  t.equal(again.accepted, 1, 'the consumer goes on after bad batches');
});

t.test('nats ingest - a database that stops answering holds a batch\'s answer, not the batches after it', { skip: NATS_SKIP }, async (t) => {
  const ns = await testNats(t);
  const nats = natsConfigFromEnv({ ...ns.env, NODE_ID: 'ingest-stall' }, (_n, d) => d);
  const app = await startTestApp(t, { shards: 1, nats, webhooks: { allowPrivate: true, retryDelaysMs: [100], pollMs: 25 } });
  const rx = await startReceiver(t);
  const key = await app.key('enterprise');
  const hook = await app.post('/v1/webhooks', { destination_url: rx.url, events: ['arbitrage.opened'] }, { 'x-api-key': key });
  t.equal(hook.status, 201, 'an arbitrage subscription: a batch that opens one has an event for the outbox');
  const { nba } = fixture(Date.now());
  const subject = `${ns.prefix}.ingest.basketball_nba`;
  const h2h = (book: string, home: number, away: number) => [
    { book, event_id: nba.id, market: 'h2h', outcome: nba.home_team, price: home },
    { book, event_id: nba.id, market: 'h2h', outcome: nba.away_team, price: away },
  ];
  const first = JSON.parse((await ns.nc.request(subject, pack({ events: [nba], prices: h2h('draftkings', 1.9, 1.95) }), { timeout: 10_000 })).string());
  t.equal(first.accepted, 2, 'the event and a first book');

  // the embedded database's one session taken by a transaction: the outbox insert queues behind it
  const stall = await holdDatabase(app);
  t.teardown(() => stall.release());
  // fanduel's away price crosses draftkings' home price: an arbitrage opens, and its event waits for the database
  let answered = false;
  const opening = ns.nc.request(subject, pack({ prices: h2h('fanduel', 1.7, 2.25) }), { timeout: 20_000 })
    .then((m) => { answered = true; return JSON.parse(m.string()) as { accepted: number }; });
  // a later batch on the same subject is applied while that answer waits
  ns.nc.publish(subject, pack({ prices: h2h('betmgm', 1.88, 1.97) }));
  let served: number | undefined;
  for (let i = 0; i < 100 && served === undefined; i++) {
    const odds = await (await app.get(`/v1/sports/basketball_nba/odds?markets=h2h&bookmakers=betmgm&apiKey=${key}`)).json() as { bookmakers: { markets: { outcomes: { price: number }[] }[] }[] }[];
    served = odds[0]?.bookmakers[0]?.markets[0]?.outcomes[0]?.price;
    if (served === undefined) await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(served, 1.88, 'the batch after it is served while the database does not answer');
  t.notOk(answered, 'the batch that raised a webhook event is not answered before its event is durable');
  await stall.release();
  const reply = await opening;
  t.equal(reply.accepted, 2, 'answered once the database answers again');
  const [opened] = await rx.waitFor((r) => r.body?.event === 'arbitrage.opened', 10_000);
  t.equal(opened.body.data.event_id, nba.id, 'and its arbitrage.opened is delivered');
});

t.test('nats ingest - a burst beyond the backlog bound is dropped and counted, not held in memory', { skip: NATS_SKIP }, async (t) => {
  // the ingest audit: 1,000 batches of 846 KB published at once took the node from 755 MB to 1.63 GB, for good (the
  // client queued every message for the subscription's iterator)
  const ns = await testNats(t);
  const app = await startTestApp(t, { shards: 1 });
  const hub = app.app.services.hub;
  const { nba } = fixture(Date.now());
  await hub.ingest({ events: [nba] }, Date.now());
  const LIMIT = 32 * 1024;
  // each batch applied after 200 ms: the burst arrives while the first is applied
  const ni = new NatsIngest(ns.nc, {
    hub,
    ingest: async (body, now) => {
      await new Promise((r) => setTimeout(r, 200));
      return hub.ingest(body, now);
    },
    now: Date.now,
  }, `${ns.prefix}.ingest.*`, null, LIMIT);
  ni.start();
  t.teardown(() => ni.close());
  const subject = `${ns.prefix}.ingest.basketball_nba`;
  const batch = (i: number) => pack({ prices: Array.from({ length: 60 }, (_, k) => (
    { book: 'draftkings', event_id: nba.id, market: 'totals', outcome: k % 2 === 0 ? 'Over' : 'Under', point: 200 + i + (k >> 1) / 2, price: 1.9 })) });
  const size = batch(0).length;
  t.ok(size > 4096 && size < LIMIT / 3, `batches of ${size} bytes`);
  for (let i = 0; i < 30; i++) ns.nc.publish(subject, batch(i));
  const reply = JSON.parse((await ns.nc.request(subject, batch(99), { timeout: 10_000 })).string()) as { error_code?: string; message?: string };
  t.equal(reply.error_code, 'SERVICE_UNAVAILABLE', `a request meeting a full backlog is answered 503 (${reply.message})`);
  for (let i = 0; i < 200 && ni.counts.ok + ni.counts.dropped < 31; i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(ni.counts.ok + ni.counts.dropped, 31, 'every batch applied or dropped');
  t.ok(ni.counts.ok >= 2 && ni.counts.dropped >= 20, `applied ${ni.counts.ok}, dropped ${ni.counts.dropped}`);
  t.ok(ni.peakBacklogBytes <= LIMIT, `the backlog never held more than its bound (${ni.peakBacklogBytes} of ${LIMIT} bytes)`);
  t.match(ni.snapshot(), { batches: { dropped: ni.counts.dropped } }, '/v1/status counts them');
});
