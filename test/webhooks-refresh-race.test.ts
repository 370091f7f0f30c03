// On a shared database the webhook service re-reads the subscriptions every subsRefreshMs (other nodes' changes). A
// read that began before this node's own change and ended after it put the old row back: a PATCH {"is_active": true}
// was undone until the next refresh, and the subscription's deliveries held back (seen as a flaky CI failure of
// webhooks-delivery on PostgreSQL). A refresh that overlaps a local change is now dropped. The read is held back here
// so the two overlap every time.

import t from 'tap';
import type { WebhookRow } from '../sql/webhooks.js';
import { startTestApp } from './helpers/app.js';
import { call } from './helpers/api.js';

interface Internals {
  subs: Map<number, { row: WebhookRow }>;
  loadSubs: () => Promise<WebhookRow[]>;
  refreshSubs(): Promise<void>;
}

t.test('webhook cache - a refresh whose read began before a PATCH does not undo it', async (t) => {
  // the refresh timer runs on a shared database only; here it is driven by hand, on either database
  const app = await startTestApp(t, { shards: 1, webhooks: { allowPrivate: true, subsRefreshMs: 3_600_000, pollMs: 25 } });
  const key = await app.key('pro', 1000);
  const w = await (await call(app, 'POST', '/v1/webhooks', key, { url: 'http://127.0.0.1:9/x', events: ['new_event'] })).json() as { id: number };
  const svc = app.app.services.webhooks as unknown as Internals;
  const load = svc.loadSubs;
  // a read that sees the subscription active, then answers only after the PATCH below
  const stale = await load();
  let answer!: () => void;
  svc.loadSubs = () => new Promise((resolve) => { answer = () => resolve(stale); });
  const refresh = svc.refreshSubs();
  const res = await call(app, 'PATCH', `/v1/webhooks/${w.id}`, key, { is_active: false });
  t.equal(res.status, 200, 'PATCH 200');
  t.equal(svc.subs.get(w.id)?.row.isActive, false, 'the cache follows the PATCH');
  answer();
  await refresh;
  t.equal(svc.subs.get(w.id)?.row.isActive, false, 'the stale read does not put the old row back');
  svc.loadSubs = load;
  await svc.refreshSubs();
  t.equal(svc.subs.get(w.id)?.row.isActive, false, 'the next refresh reads the stored row');
});
