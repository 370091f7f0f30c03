// The webhook outbox keeps a retention window (WEBHOOK_RETENTION_DAYS, default 30): final deliveries older than it go
// with their attempts; a delivery still on its schedule stays whatever its age. Without it the outbox grew by every
// event ever sent (about 840 bytes a delivery).

import t from 'tap';
import { configFromEnv } from '../http/app.js';
import { appDatabases, startTestApp } from './helpers/app.js';
import { call, j, until } from './helpers/api.js';
import { startReceiver } from './helpers/webhook-receiver.js';

t.test('webhook retention - WEBHOOK_RETENTION_DAYS', async (t) => {
  t.equal(configFromEnv({ WEBHOOK_RETENTION_DAYS: '7' }).webhooks?.retentionMs, 7 * 86_400_000, '7 days');
  t.throws(() => configFromEnv({ WEBHOOK_RETENTION_DAYS: '0' }), /WEBHOOK_RETENTION_DAYS/, '0 refused');
});

for (const database of appDatabases()) {
  t.test(`webhook retention - final deliveries past the window go, with their attempts; scheduled ones stay (${database})`, async (t) => {
    const rx = await startReceiver(t);
    rx.respond = (r) => (r.path.endsWith('?fail') ? 500 : 200);
    const app = await startTestApp(t, { database, shards: 1, webhooks: { allowPrivate: true, retryDelaysMs: [600_000, 600_000], pollMs: 25 } });
    const key = await app.key('pro', 10_000);
    const ok = await j(await call(app, 'POST', '/v1/webhooks', key, { url: rx.url, events: ['new_event'] }));
    const failing = await j(await call(app, 'POST', '/v1/webhooks', key, { url: rx.url + '?fail', events: ['new_event'] }));
    const now = Date.now();
    await app.ingest({
      events: [1, 2, 3].map((i) => ({ id: `rt_${i}`, sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: `Home ${i}`, away_team: `Away ${i}` })),
      prices: [1, 2, 3].map((i) => ({ book: 'draftkings', event_id: `rt_${i}`, market: 'h2h', outcome: `Home ${i}`, price: 1.9 })),
    });
    const list = async (id: number) => j(await call(app, 'GET', `/v1/webhooks/${id}/deliveries`, key)) as Promise<{ status: string }[]>;
    await until(async () => (await list(ok.id)).filter((d) => d.status === 'delivered').length === 3, 5000);
    await until(async () => (await list(failing.id)).filter((d) => d.status === 'retrying').length === 3, 5000);

    const db = app.app.services.db;
    const webhooks = app.app.services.webhooks!;
    t.equal(await webhooks.prune(), 0, 'nothing is older than 30 days yet');
    // every delivery made 31 days ago
    await db.sql`update webhook_deliveries set created_at = created_at - interval '31 days'`;
    t.equal(await webhooks.prune(), 3, 'the three delivered ones go');
    t.same(await list(ok.id), [], 'gone from the list');
    t.equal((await list(failing.id)).length, 3, 'the three still retrying stay');
    const [{ n }] = await db.sql`select count(*)::int as n from webhook_attempts a
      where not exists (select 1 from webhook_deliveries d where d.id = a.delivery_pk)`;
    t.equal(n, 0, 'no attempt outlives its delivery');
    const [{ m }] = await db.sql`select count(*)::int as m from webhook_attempts`;
    t.equal(m, 3, 'the retrying deliveries keep their attempts');
  });
}
