// A process killed mid-schedule delivers after restart (issue 6): the service runs as a child process
// (node dist/http/main.js), on an embedded database in a data directory and, with TEST_DATABASE_URL, on the real
// PostgreSQL in a schema of its own (DATABASE_SCHEMA); it is killed with SIGKILL while one delivery waits for its
// second attempt and another's first attempt is in flight, then started again on the same database. The receiver
// gets both, with the same delivery ids and bodies.

import t from 'tap';
import { client, kill9, serviceDatabases, startService, SERVICE_ADMIN_KEY as ADMIN, type ServiceProcess } from './helpers/service-process.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const j = (r: Response): Promise<any> => r.json() as Promise<any>;
const ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS_MS: '1500,1500' };

for (const db of serviceDatabases(t)) {
  t.test(`a process killed mid-schedule delivers after restart, with the same delivery ids (${db.name})`, async (t) => {
    const rx = await startReceiver(t);
    // ?r: the first attempt fails (the second is due 1.5 s later); ?h: the first attempt never gets an answer
    rx.respond = (r) => (r.path.endsWith('?r') ? 500 : 'hang');
    let svc: ServiceProcess = await startService(t, db, ENV);
    t.match(svc.out(), /WEBHOOK_ALLOW_PRIVATE=1/, 'the start banner reports WEBHOOK_ALLOW_PRIVATE');
    if (db.name === 'postgres') t.match(svc.out(), /schema t_/, 'the start banner names the schema');
    const { post } = client(() => svc);
    const key = (await j(await post('/v1/admin/keys', ADMIN, { tier: 'business' }))).key as string;
    const retrying = await j(await post('/v1/webhooks', key, { destination_url: rx.url + '?r', events: ['parser.degraded'] }));
    const hanging = await j(await post('/v1/webhooks', key, { url: rx.url + '?h', events: ['new_event'] }));
    const now = Date.now();
    // one batch: 30 of 31 prices rejected (parser.degraded at the next tick) and one new event (new_event)
    const prices: unknown[] = [{ book: 'draftkings', event_id: 'rs_1', market: 'h2h', outcome: 'Boston Celtics', price: 1.9 }];
    for (let i = 0; i < 30; i++) prices.push({ book: 'nope', event_id: 'rs_1', market: 'h2h', outcome: 'Boston Celtics', price: 2 });
    const ing = await post('/v1/ingest', ADMIN, {
      events: [{ id: 'rs_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' }],
      prices,
    });
    t.equal(ing.status, 202, 'ingested');
    const [first] = await rx.waitFor((r) => r.path.endsWith('?r'), 5000);
    const [hung] = await rx.waitFor((r) => r.path.endsWith('?h'), 5000);
    // the failed attempt is recorded (status retrying) before the kill; the hanging one is still in flight
    const deadline = Date.now() + 1200;
    let status = '';
    while (Date.now() < deadline) {
      const list = await j(await fetch(`${svc.base}/v1/webhooks/${retrying.id}/deliveries`, { headers: { 'x-api-key': key } }));
      status = list[0]?.status;
      if (status === 'retrying') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    t.equal(status, 'retrying', 'attempt 1 failed and was recorded');
    // and an event acknowledged just before the kill: the 202 of /v1/ingest comes once its events are in the outbox
    const ing2 = await post('/v1/ingest', ADMIN, {
      events: [{ id: 'rs_2', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Utah Jazz', away_team: 'Orlando Magic' }],
      prices: [{ book: 'draftkings', event_id: 'rs_2', market: 'h2h', outcome: 'Utah Jazz', price: 1.9 }],
    });
    t.equal(ing2.status, 202, 'acknowledged');
    await kill9(svc.child);
    const killedAt = Date.now();
    t.equal(rx.requests.filter((r) => r.path.endsWith('?r')).length, 1, 'killed before attempt 2');

    rx.respond = () => 200;
    svc = await startService(t, db, ENV);
    const [second] = await rx.waitFor((r) => r.path.endsWith('?r') && r.headers['x-service-delivery-id'] === first.headers['x-service-delivery-id'] && r.n > first.n, 8000);
    t.equal(second.raw, first.raw, 'the same body');
    t.ok(second.at - first.at >= 1500, 'not before its retry delay');
    const [again] = await rx.waitFor((r) => r.path.endsWith('?h') && r.body?.data?.match_id === 'rs_1' && r.n > hung.n, 8000);
    t.equal(again.headers['x-service-delivery-id'], hung.headers['x-service-delivery-id'], 'the in-flight attempt is made again with the same delivery id');
    t.equal(again.headers['x-service-delivery-attempt'], '1', 'as attempt 1 (its outcome was never recorded)');
    t.equal(again.raw, hung.raw, 'the same body');
    const deliveries = async (id: number | string, pred: (list: any[]) => boolean) => {
      const end = Date.now() + 3000;
      for (;;) {
        const list = await j(await fetch(`${svc.base}/v1/webhooks/${id}/deliveries`, { headers: { 'x-api-key': key } }));
        if (pred(list) || Date.now() > end) return list;
        await new Promise((r) => setTimeout(r, 30));
      }
    };
    const [late] = await rx.waitFor((r) => r.path.endsWith('?h') && r.body?.data?.match_id === 'rs_2' && r.at > killedAt, 8000);
    t.equal(late.body.event_type, 'new_event', 'the event acknowledged right before the kill is delivered after the restart');
    const listR = await deliveries(retrying.id, (l) => l[0]?.status === 'delivered');
    t.same(listR[0].attempts.map((a: { status_code: number }) => a.status_code), [500, 200], 'attempts 1 and 2 recorded across the restart');
    const listH = await deliveries(hanging.id, (l) => l.length === 2 && l.every((d) => d.status === 'delivered'));
    t.same(listH.map((d: { status: string }) => d.status), ['delivered', 'delivered'], 'the interrupted delivery and the late one are delivered');
    // the same event seen again after the restart is not announced twice (new_event is deduplicated in the outbox)
    await post('/v1/ingest', ADMIN, {
      events: [{ id: 'rs_1', sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' }],
      prices: [{ book: 'fanduel', event_id: 'rs_1', market: 'h2h', outcome: 'Boston Celtics', price: 1.95 }],
    });
    await new Promise((r) => setTimeout(r, 300));
    t.equal((await deliveries(hanging.id, () => true)).length, 2, 'new_event of rs_1 delivered once in all');
    t.equal(rx.requests.filter((r) => r.path.endsWith('?h') && r.body?.data?.match_id === 'rs_1').length, 2, 'the receiver saw it twice: the attempt cut by the kill and its repeat');
    await kill9(svc.child);
  });
}
