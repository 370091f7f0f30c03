// Two whole nodes on one PostgreSQL (issue 9, "work that must happen once happens once"): node A is an app in this
// process, node B a service process (node dist/http/main.js) on the same schema, each with its own NODE_ID, delivery
// loop, evaluator, history writer and meter. Without a NATS stream here, the "same data on every node" is made by
// ingesting the same batches (same timestamps) on both nodes.
//
// Real PostgreSQL only: the embedded PGlite is one session held by one process, so two nodes cannot share it
// (test/cluster-claims.test.ts runs the same SQL on it from one handle). Skipped with a reason without
// TEST_DATABASE_URL; CI sets it.

import t from 'tap';
import { writeOutbox, type NewDelivery } from '../sql/webhooks.js';
import { ADMIN_KEY, startTestApp } from './helpers/app.js';
import { kill9, serviceDatabases, startService, type ServiceProcess } from './helpers/service-process.js';
import { startReceiver, type Received } from './helpers/webhook-receiver.js';

const j = (r: Response): Promise<any> => r.json() as Promise<any>;
const LEASE_MS = 1500;
const skip = process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL not set: two nodes need a shared PostgreSQL (PGlite is one process\'s)';

/** Polls `fn` until it returns true (bounded). */
async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('two nodes on one PostgreSQL do once what must happen once', { skip }, async (t) => {
  const [db] = serviceDatabases(t, ['postgres']);
  const schema = (await db.env()).DATABASE_SCHEMA!;
  const direct = await db.direct();
  const rx = await startReceiver(t);
  rx.respond = (r) => (r.path.endsWith('?k') ? 'hang' : 200);
  const A = await startTestApp(t, {
    database: 'postgres', schema, dropSchemaOnClose: false, nodeId: 'node-a', shards: 1,
    webhooks: { allowPrivate: true, leaseMs: LEASE_MS, pollMs: 100, subsRefreshMs: 200 }, history: { captureMs: 200 },
  });
  const admin = { authorization: `Bearer ${ADMIN_KEY}` };
  const hookKey = await A.key('business');
  const hook = async (body: unknown): Promise<any> => j(await A.post('/v1/webhooks', body, { 'x-api-key': hookKey }));
  // subscriptions and keys made on A before B starts, so B loads them (it would also find them within 2 s)
  const hA = await hook({ url: rx.url + '?a', events: ['line_move'] });
  const hC = await hook({ url: rx.url + '?c', events: ['line_move'] });
  const hP = await hook({ destination_url: rx.url + '?p', events: ['parser.degraded'] });
  const hK = await hook({ url: rx.url + '?k', events: ['new_event'] });
  const spender = await A.key('starter');
  const B: ServiceProcess = await startService(t, db, {
    ADMIN_KEY, NODE_ID: 'node-b', WEBHOOK_LEASE_MS: String(LEASE_MS), WEBHOOK_ALLOW_PRIVATE: '1',
  });
  const ingest = async (base: string, body: unknown) => {
    const res = await fetch(base + '/v1/ingest', { method: 'POST', headers: { 'content-type': 'application/json', ...admin }, body: JSON.stringify(body) });
    t.equal(res.status, 202, `ingest on ${base === A.base ? 'A' : 'B'} acknowledged`);
  };
  const onBoth = (body: unknown) => Promise.all([ingest(A.base, body), ingest(B.base, body)]);
  const count = async (where: string, pk: number) => {
    const [{ n }] = await direct.sql.unsafe(`select count(*)::int as n from webhook_deliveries where webhook_id = $1 ${where}`, [pk]);
    return n as number;
  };
  const byDelivery = (reqs: Received[]) => {
    const m = new Map<string, number>();
    for (const r of reqs) m.set(String(r.headers['x-service-delivery-id']), (m.get(String(r.headers['x-service-delivery-id'])) ?? 0) + 1);
    return m;
  };

  t.test('credits: the shared used total is the sum of both nodes\' charges, and each sees the other\'s', async (t) => {
    let charged = 0;
    for (let i = 0; i < 16; i++) {
      const res = await fetch(`${i % 2 === 0 ? A.base : B.base}/v1/sports/basketball_nba/props`, { headers: { 'x-api-key': spender } });
      t.equal(res.status, 200, `call ${i} served`);
      charged += Number(res.headers.get('x-requests-last'));
    }
    t.ok(charged > 0, `${charged} credits charged in all`);
    await A.app.services.accounts.flush();
    const id = A.app.services.accounts.resolve(spender)!.account.id;
    const stored = async () => Number((await direct.sql`select credits_used from accounts where id = ${id}`)[0]!.credits_used);
    await until('B\'s meter write (every second)', async () => (await stored()) === charged);
    t.equal(await stored(), charged, 'credits_used in PostgreSQL is A\'s charges plus B\'s');
    await A.app.services.accounts.flush();
    t.equal(A.app.services.accounts.resolve(spender)!.used, charged, 'A, after its next write, counts B\'s spend too');
  });

  t.test('webhook attempts: due rows with both delivery loops running are each delivered once', async (t) => {
    const N = 30;
    const now = Date.now();
    const rows: NewDelivery[] = Array.from({ length: N }, (_, i) => ({
      deliveryId: `dlv_cluster_a_${i}`, webhookPk: hA.id, eventId: `evt_cluster_a_${i}`, eventType: 'line_move', body: `{"i":${i}}`,
      status: 'pending', nextAttemptAt: now, dedupe: `cluster-a-${i}`,
    }));
    await writeOutbox(direct, rows, now, {});
    await until('every row delivered', async () => (await count(`and status = 'delivered'`, hA.id)) === N);
    // every outcome is recorded: any second attempt would have been made before its row's outcome
    const got = rx.requests.filter((r) => r.path.endsWith('?a'));
    const per = byDelivery(got);
    t.equal(per.size, N, 'every delivery reached the receiver');
    t.same([...per.values()].filter((n) => n !== 1), [], 'each exactly once');
    t.comment(`node A made ${A.app.services.webhooks!.stats.delivered} of the ${N} attempts`);
  });

  t.test('webhook events: the same event found by both nodes is one outbox row, one delivery', async (t) => {
    const t1 = Date.now() - 5000;
    const ev = { id: 'cl_c1', sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat' };
    await onBoth({ events: [ev], prices: [{ book: 'fanduel', event_id: 'cl_c1', market: 'h2h', outcome: 'Boston Celtics', price: 1.9, ts: t1 }] });
    await onBoth({ events: [ev], prices: [{ book: 'fanduel', event_id: 'cl_c1', market: 'h2h', outcome: 'Boston Celtics', price: 2.2, ts: t1 + 1000 }] });
    // acknowledged: each node's line_move is in the outbox, or was skipped as already there
    t.equal(await count('', hC.id), 1, 'line_move: one outbox row for the two nodes');
    // parser.degraded: both nodes see 30 of 31 items rejected; the check's transition is made once
    const bad = [{ book: 'fanduel', event_id: 'cl_c1', market: 'h2h', outcome: 'Miami Heat', price: 2.05, ts: t1 + 2000 }];
    for (let i = 0; i < 30; i++) bad.push({ book: 'nope', event_id: 'cl_c1', market: 'h2h', outcome: 'Miami Heat', price: 2, ts: t1 + 2000 });
    await onBoth({ events: [ev], prices: bad });
    const [pk] = await direct.sql`select id from webhooks where public_id = ${hP.id}`;
    await until('parser.degraded written', async () => (await count('', Number(pk!.id))) >= 1);
    t.equal(await count('', Number(pk!.id)), 1, 'parser.degraded: one outbox row');
    const [st] = await direct.sql`select state from webhook_check_state where kind = 'parser' and key = 'none'`;
    t.equal(st?.state, 'degraded', 'the stored check state moved once, to degraded');
    await rx.waitFor((r) => r.path.endsWith('?c'), 5000);
    await rx.waitFor((r) => r.path.endsWith('?p'), 5000);
    await until('both delivered', async () => (await count(`and status = 'delivered'`, hC.id)) === 1);
    t.equal(rx.requests.filter((r) => r.path.endsWith('?c')).length, 1, 'the line move reached the receiver once');
  });

  t.test('closing captures: an event starting on both nodes is captured once', async (t) => {
    const commence = Date.now() + 1500;
    const ev = { id: 'cl_d1', sport_key: 'basketball_nba', commence_time: commence, home_team: 'Utah Jazz', away_team: 'Orlando Magic' };
    await onBoth({
      events: [ev],
      prices: [
        { book: 'pinnacle', event_id: 'cl_d1', market: 'h2h', outcome: 'Utah Jazz', price: 1.8, ts: commence - 1400 },
        { book: 'pinnacle', event_id: 'cl_d1', market: 'h2h', outcome: 'Orlando Magic', price: 2.1, ts: commence - 1400 },
      ],
    });
    await until('captured', async () => (await direct.sql`select 1 from history_events where event_id = 'cl_d1' and captured_at is not null`).length === 1);
    // both nodes' writers have looked at it once their capture intervals (A 0.2 s, B 1 s) have passed twice
    await new Promise((r) => setTimeout(r, 2200));
    const rows = await direct.sql`select source, over_price, under_price from closing_lines where event_id = 'cl_d1'`;
    t.same(rows.map((r) => [r.source, r.over_price, r.under_price]), [['pinnacle', 1.8, 2.1]], 'one closing row');
    const [{ n }] = await direct.sql`select count(*)::int as n from pregame_quotes where event_id = 'cl_d1'`;
    t.equal(n, 0, 'no pregame state left behind by the node that lost the claim');
    t.comment(`node A captured it: ${A.app.services.history!.counters.captured === 1}`);
  });

  t.test('node B killed while holding claims on due attempts: A delivers each once after the lease', async (t) => {
    const M = 5;
    const events = Array.from({ length: M }, (_, i) => ({
      id: `cl_k${i}`, sport_key: 'basketball_nba', commence_time: Date.now() + 3_600_000, home_team: 'Boston Celtics', away_team: 'Miami Heat',
    }));
    // only B finds these events: it writes the rows claimed and attempts them; the receiver never answers
    await ingest(B.base, { events, prices: events.map((e) => ({ book: 'fanduel', event_id: e.id, market: 'h2h', outcome: 'Boston Celtics', price: 1.9 })) });
    // (the events of the earlier parts are new_event too: only these five are looked at)
    const mine = (r: Received) => r.path.endsWith('?k') && String(r.body?.data?.match_id).startsWith('cl_k');
    const hung = await rx.waitFor(mine, 5000, M);
    const [claims] = await direct.sql`select count(*)::int as n from webhook_deliveries where webhook_id = ${hK.id} and claimed_by = 'node-b'
      and body like '%"cl_k%'`;
    t.equal(claims!.n, M, 'B holds a claim on each while its attempts hang');
    await kill9(B.child);
    const killedAt = Date.now();
    rx.respond = () => 200;
    await until('A delivered them', async () => (await count(`and status = 'delivered' and body like '%"cl_k%'`, hK.id)) === M, 15_000);
    const after = rx.requests.filter((r) => mine(r) && r.at >= killedAt);
    const per = byDelivery(after);
    t.equal(per.size, M, 'every delivery B held is made by A');
    t.same([...per.values()].filter((n) => n !== 1), [], 'each exactly once');
    t.same([...per.keys()].sort(), [...byDelivery(hung).keys()].sort(), 'with the delivery ids B had attempted');
    t.ok(after.every((r) => r.headers['x-service-delivery-attempt'] === '1'), 'as attempt 1 (B\'s outcome was never recorded)');
  });
});
