// The Odds API connector while the database does not answer: its polls go on and their prices are applied; webhook
// events are committed when the database answers again. Each poll used to wait for the outbox,
// so a stuck database stopped the feed's prices with it. The stall is real: the embedded database's one session
// held by an open transaction, with an ingest's webhook event waiting for it in the outbox.

import t from 'tap';
import type { TheOddsApiConfig } from '../workers/theoddsapi-feed.js';
import { ADMIN_KEY, holdDatabase, startTestApp } from './helpers/app.js';
import { startOddsServer } from './helpers/theoddsapi-server.js';
import { startReceiver } from './helpers/webhook-receiver.js';

const T = Date.parse('2026-11-23T18:00:00Z');

t.test('theoddsapi feed - a database that stops answering does not stop its polls', async (t) => {
  const up = await startOddsServer(t);
  const cfg: TheOddsApiConfig = {
    apiKey: 'app', base: up.base, sports: ['basketball_nba'], markets: ['h2h'], regions: ['us'], minIntervalMs: 60_000,
    timeoutMs: 5_000, resetDay: 1, reserve: 0, propsWithinMs: 0, sportsRefreshMs: 3_600_000, exhaustedProbeMs: 3_600_000,
  };
  let now = T;
  const app = await startTestApp(t, {
    now: () => now, shards: 1, feeds: ['theoddsapi'], theOddsApi: cfg, webhooks: { allowPrivate: true, retryDelaysMs: [100], pollMs: 25 },
  });
  const feed = app.app.theOddsApi!;
  if (feed.cycles === 0) await new Promise((resolve) => { feed.onTick = resolve; });
  feed.onTick = null;
  t.equal(feed.cycles, 1, 'the first poll at start');
  const rx = await startReceiver(t);
  const key = await app.key('enterprise');
  const hook = await app.post('/v1/webhooks', { destination_url: rx.url, events: ['arbitrage.opened'] }, { 'x-api-key': key });
  t.equal(hook.status, 201, 'an arbitrage subscription');

  const stall = await holdDatabase(app);
  t.teardown(() => stall.release());
  // an ingest that opens an arbitrage: its event waits in the outbox for the database
  const ev = { id: 'stall_arb_1', sport_key: 'basketball_nba', commence_time: feed.nextCycleAt + 3_600_000, home_team: 'Stall Home', away_team: 'Stall Away' };
  const posting = fetch(`${app.base}/v1/ingest`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: [ev], prices: [
      { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 2.1, ts: T },
      { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 1.8, ts: T },
      { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.8, ts: T },
      { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.1, ts: T },
    ] }),
  });

  let answered = false;
  void posting.then(() => { answered = true; });
  const arbs = async () => ((await (await app.get(`/v1/sports/basketball_nba/arbitrage?apiKey=${key}`)).json()) as { event_id: string }[]).map((a) => a.event_id);
  let listed: string[] = [];
  for (let i = 0; i < 100 && listed.length === 0; i++) {
    listed = await arbs();
    if (listed.length === 0) await new Promise((r) => setTimeout(r, 20));
  }
  t.same(listed, [ev.id], 'the arbitrage is open');
  // the next poll is due: it runs, and its prices are applied, while the database is stuck
  t.ok(feed.nextCycleAt > T, `the next poll is due at ${new Date(feed.nextCycleAt).toISOString()}`);
  now = feed.nextCycleAt;
  const polls = up.requests.filter((r) => r.key === 'app').length;
  const result = await Promise.race([feed.tick(), new Promise((r) => setTimeout(() => r('still waiting after 5 s'), 5000))]);
  t.equal(result, 'polled', 'the poll completes while the database does not answer');
  t.ok(up.requests.filter((r) => r.key === 'app').length > polls, 'it asked The Odds API again');
  t.equal(feed.cycles, 2, 'a second cycle');
  t.notOk(answered, 'while the ingest that raised an event still waits for the outbox: the stall was real');

  await stall.release();
  const res = await posting;
  t.equal(res.status, 202, 'the ingest is answered once its event is committed');
});
