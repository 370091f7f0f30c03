// A subscription deleted while its events waited for the outbox write: its rows broke the foreign key, the write
// put the whole batch back and tried again every 500 ms for good, so no other subscription got anything again and
// every ingest (which waits for the outbox commit) answered 503 (found by the durability audit). Rows of a deleted
// subscription are now skipped in the insert, and a batch the database refuses for its data is written item by
// item, the refused item dropped. The outbox statements are held back here (the service's serialising chain) so
// that the deletion lands between the queueing and the write every time.

import t from 'tap';
import { appDatabases, startTestApp } from './helpers/app.js';
import { call, j } from './helpers/api.js';
import { startReceiver, type Received } from './helpers/webhook-receiver.js';

interface Internals {
  flushInserts: () => Promise<void>;
  inserts: { row: { deliveryId: string; dedupe: string; body: string } }[];
}

/** holds the webhook service's outbox writes until the returned function is called (the rows queue meanwhile) */
function holdOutbox(svc: Internals): () => void {
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  const flush = svc.flushInserts;
  svc.flushInserts = async function (this: Internals) {
    await held;
    return flush.call(this);
  };
  return () => {
    svc.flushInserts = flush;
    release();
  };
}

const game = (id: string) => ({ id, sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' });
/** a game with one quote: its first quote announces it (new_event) */
const announce = (id: string) => ({ events: [game(id)], prices: [{ book: 'draftkings', event_id: id, market: 'h2h', outcome: 'Boston Celtics', price: 1.9 }] });
const newEvent = (id: string) => (r: Received) => r.body?.event_type === 'new_event' && r.body.data?.match_id === id;

for (const database of appDatabases()) {
  t.test(`webhooks - a subscription deleted while its events are queued stops nothing else (${database})`, async (t) => {
    const logs: string[] = [];
    const app = await startTestApp(t, { database, shards: 1, log: (m) => logs.push(m), webhooks: { allowPrivate: true, pollMs: 25 } });
    const key = await app.key('pro', 1000);
    const rxA = await startReceiver(t);
    const rxB = await startReceiver(t);
    const a = await j(await call(app, 'POST', '/v1/webhooks', key, { url: rxA.url, events: ['new_event'] }));
    await j(await call(app, 'POST', '/v1/webhooks', key, { url: rxB.url, events: ['new_event'] }));
    const svc = app.app.services.webhooks as unknown as Internals;
    const release = holdOutbox(svc);
    const ingest = app.ingest(announce('del_1'));
    // the new_event rows of both subscriptions wait for the write
    const deadline = Date.now() + 5000;
    while (svc.inserts.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    t.equal(svc.inserts.length, 2, 'a new_event row queued for each subscription');
    t.equal((await call(app, 'DELETE', `/v1/webhooks/${a.id}`, key)).status, 200, 'the first deleted meanwhile');
    release();
    await rxB.waitFor(newEvent('del_1'), 5000);
    t.pass('the other subscription got its event');
    t.equal((await ingest).status, 202, 'the ingest waiting on the outbox was answered');
    const next = await app.ingest(announce('del_2'));
    t.equal(next.status, 202, 'a later ingest too');
    await rxB.waitFor(newEvent('del_2'), 5000);
    t.equal(rxA.requests.length, 0, 'the deleted subscription got nothing');
    t.notOk(logs.some((l) => l.includes('webhook outbox')), 'its row skipped by the insert, not refused by the database');
  });

  t.test(`webhooks - a batch the database refuses is written item by item, the refused one dropped (${database})`, async (t) => {
    const logs: string[] = [];
    const app = await startTestApp(t, { database, shards: 1, log: (m) => logs.push(m), webhooks: { allowPrivate: true, pollMs: 25 } });
    const key = await app.key('pro', 1000);
    const rx = await startReceiver(t);
    await j(await call(app, 'POST', '/v1/webhooks', key, { url: rx.url, events: ['new_event'] }));
    const svc = app.app.services.webhooks as unknown as Internals;
    const release = holdOutbox(svc);
    const ingest = app.ingest(announce('ref_1'));
    const deadline = Date.now() + 5000;
    while (svc.inserts.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // a row no PostgreSQL stores: text with a NUL (an unsupported \u0000 escape in the write's JSON)
    const good = svc.inserts[0];
    svc.inserts.unshift({ ...good, row: { ...good.row, deliveryId: 'refused-row', dedupe: 'refused-row', body: 'a\u0000b' } });
    release();
    await rx.waitFor(newEvent('ref_1'), 5000);
    t.pass('the good row of the batch was written and delivered');
    t.equal((await ingest).status, 202, 'the ingest was answered');
    t.ok(logs.some((l) => l.includes('refused-row') && l.includes('dropped')), 'the refused row is logged as dropped');
    t.equal(svc.inserts.length, 0, 'nothing put back to fail again');
    t.equal((await app.ingest(announce('ref_2'))).status, 202, 'later writes go on');
    await rx.waitFor(newEvent('ref_2'), 5000);
  });
}
