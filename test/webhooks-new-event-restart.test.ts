// new_event announces an event not previously tracked (SPEC), once in its life: the events tracked are kept in
// webhook_tracked_events, so after a restart an event seen before it is not new again, even to a subscription made
// after it was first seen (which the outbox's per-subscription dedupe could not hold back).

import { rmSync } from 'node:fs';
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.js';
import { freshDataDir } from './helpers/db.js';
import { call, j } from './helpers/api.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const WEBHOOKS = { allowPrivate: true, retryDelaysMs: [60_000, 60_000], pollMs: 25 };

t.test('new_event - an event tracked before a restart is not announced again after it', async (t) => {
  const dataDir = await freshDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const rx = await startReceiver(t);
  let app: TestApp = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  const commence = Date.now() + 3_600_000;
  const game = (id: string, home: string, away: string) => ({ id, sport_key: 'basketball_nba', commence_time: commence, home_team: home, away_team: away });
  const price = (id: string, home: string, p: number) => ({ book: 'draftkings', event_id: id, market: 'h2h', outcome: home, price: p });
  // tracked before any subscription exists
  await app.ingest({ events: [game('ne_old', 'Boston Celtics', 'Miami Heat')], prices: [price('ne_old', 'Boston Celtics', 1.9)] });
  const key = await app.key('pro', 1000);
  const sub = await j(await call(app, 'POST', '/v1/webhooks', key, { url: rx.url, events: ['new_event'] }));
  t.ok(sub.id, 'subscribed after the event was first seen');
  await app.close();

  app = await startTestApp(t, { dataDir, shards: 1, webhooks: WEBHOOKS });
  // the feed sends the known event again, and a new one
  await app.ingest({
    events: [game('ne_old', 'Boston Celtics', 'Miami Heat'), game('ne_new', 'Utah Jazz', 'Orlando Magic')],
    prices: [price('ne_old', 'Boston Celtics', 1.95), price('ne_new', 'Utah Jazz', 1.8)],
  });
  await rx.waitFor((r) => r.body?.data?.match_id === 'ne_new', 5000);
  await new Promise((r) => setTimeout(r, 300));
  t.same(rx.requests.map((r) => r.body?.data?.match_id), ['ne_new'], 'only the event never seen before is announced');
});
