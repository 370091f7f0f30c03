import t from 'tap';
import { CHANGE, CHG } from '../engine/records.js';
import { Hub, shardOf } from '../workers/hub.js';

const now = Date.now();
const events = Array.from({ length: 12 }, (_, i) => ({
  id: `evt_crash_${i}`,
  sport_key: 'basketball_nba',
  commence_time: now + 3_600_000 + i * 60_000,
  home_team: `Home ${i}`,
  away_team: `Away ${i}`,
}));

function prices(ts: number, bump = 0) {
  const out = [];
  for (const ev of events) {
    for (const book of ['draftkings', 'fanduel', 'pinnacle']) {
      out.push({ book, event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.9 + bump, ts });
      out.push({ book, event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 1.95 + bump, ts });
    }
  }
  return out;
}

/** draftkings and fanduel crossed on a moneyline: 2.10 / 2.10 is an arbitrage */
function crossed(ev: (typeof events)[number], ts: number) {
  return [
    { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 2.1, ts },
    { book: 'draftkings', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 1.7, ts },
    { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.home_team, price: 1.7, ts },
    { book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.1, ts },
  ];
}

function kindsOf(hub: Hub): number[] {
  const kinds: number[] = [];
  hub.onBatch((b) => {
    for (let i = 0; i < b.count; i++) kinds.push(b.records[i * CHG.STRIDE + CHG.KIND]);
  });
  return kinds;
}

t.test('shard crash - a killed shard is restarted and rebuilt from the read model', async (t) => {
  const hub = new Hub(2);
  await hub.start();
  t.teardown(() => hub.close());
  const onShard0 = events.filter((e) => shardOf(e.id, 2) === 0);
  t.ok(onShard0.length > 0 && onShard0.length < events.length, 'events spread over both shards');

  const r = await hub.ingest({ events, prices: prices(now - 1000) }, now);
  t.equal(r.accepted, events.length * 6, 'all prices accepted');
  const before = hub.pool.quoteCounts();
  t.equal(before[0] + before[1], events.length * 6, 'quotes held across shards');

  const kinds = kindsOf(hub);
  await hub.pool.kill(0);
  // The restart happens on the exit event; an ingest sent meanwhile waits for it instead of being lost.
  const again = await hub.ingest({ prices: prices(now) }, now);
  t.equal(again.accepted, events.length * 6, 'ingest during the restart accepted');
  t.equal(hub.pool.restarts()[0], 1, 'shard 0 restarted once');
  t.equal(hub.counters.shardRestarts, 1, 'restart counted');
  t.same(hub.pool.quoteCounts(), before, 'the restarted shard holds its quotes again');
  t.ok(kinds.length === events.length * 6 && kinds.every((k) => k === CHANGE.VERIFIED),
    'the same prices after the restart are verifications of restored quotes, not new quotes');

  // restored timestamps: an observation older than the restored quote is ignored as stale
  const staleBefore = hub.counters.stale;
  await hub.ingest({ prices: prices(now - 5000, 0.5).filter((p) => onShard0.some((e) => e.id === p.event_id)) }, now);
  t.equal(hub.counters.stale - staleBefore, onShard0.length * 6, 'older observations ignored on the restored shard');

  const ev = hub.readModel.event(hub.eventIds.peek(onShard0[0].id))!;
  t.equal(ev.quotes, 6, 'read model still holds the event quotes');
});

t.test('shard crash - a batch in flight when the shard dies is applied after the restart', async (t) => {
  const hub = new Hub(1);
  await hub.start();
  t.teardown(() => hub.close());
  await hub.ingest({ events }, now);
  const pending = hub.ingest({ prices: prices(now) }, now);
  const killed = hub.pool.kill(0);
  const r = await pending;
  await killed;
  t.equal(r.accepted, events.length * 6, 'accepted');
  let quotes = 0;
  for (const ev of hub.readModel.events()) quotes += ev.quotes;
  t.equal(quotes, events.length * 6, 'every quote reached the read model');
  t.equal(hub.pool.quoteCounts()[0], events.length * 6, 'and the shard');
});

t.test('shard crash - the analytics of a restarted shard pick up where they were', async (t) => {
  const hub = new Hub(1);
  await hub.start();
  t.teardown(() => hub.close());
  const ev = events[0];
  const t0 = Date.now();
  await hub.ingest({ events: [ev], prices: crossed(ev, t0) }, t0);
  const idx = hub.eventIds.peek(ev.id);
  t.equal(hub.analytics.event(idx)?.arbs.size, 1, 'arbitrage open before the crash');
  await hub.pool.kill(0);
  // the restarted shard rebuilds from the read model and republishes its analytics; a move that closes the
  // arbitrage must close it in the main thread's view too
  await hub.ingest({ prices: [{ book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 1.8, ts: t0 + 1 }] }, t0 + 1);
  t.equal(hub.pool.restarts()[0], 1, 'restarted');
  t.equal(hub.analytics.event(idx)?.arbs.size, 0, 'the arbitrage closed after the restart');
  await hub.ingest({ prices: [{ book: 'fanduel', event_id: ev.id, market: 'h2h', outcome: ev.away_team, price: 2.2, ts: t0 + 2 }] }, t0 + 2);
  t.equal(hub.analytics.event(idx)?.arbs.size, 1, 'and a new one opens');
});

t.test('shard crash - rows a restarted shard no longer has leave the view (its quotes went stale meanwhile)', async (t) => {
  let clock = Date.now();
  const hub = new Hub(1, () => clock);
  await hub.start();
  t.teardown(() => hub.close());
  const ev = events[1];
  const t0 = clock;
  await hub.ingest({ events: [ev], prices: crossed(ev, t0) }, t0);
  const idx = hub.eventIds.peek(ev.id);
  t.equal(hub.analytics.event(idx)?.arbs.size, 1, 'arbitrage open before the crash');
  // the shard comes back an hour later: every quote of the arbitrage is stale by then, so the rebuilt shard
  // never publishes it, and nothing would ever withdraw the old row
  clock = t0 + 3_600_000;
  await hub.pool.kill(0);
  // a batch for the same shard waits for the restart, and is answered after the restore
  const other = events[2];
  await hub.ingest({ events: [other], prices: [{ book: 'draftkings', event_id: other.id, market: 'h2h', outcome: other.home_team, price: 1.9, ts: clock }] }, clock);
  t.equal(hub.pool.restarts()[0], 1, 'restarted');
  t.equal(hub.analytics.event(idx)?.arbs.size ?? 0, 0, 'the stale arbitrage is gone from the view');
  t.equal(hub.analytics.event(idx)?.cons.size ?? 0, 1, 'and the line\'s consensus is there again (republished by the restored shard)');
});

t.test('shard crash - a shard killed while a chunked ingest is on its way gets every chunk again, as one batch', async (t) => {
  const hub = new Hub(1);
  await hub.start();
  t.teardown(() => hub.close());
  const ev = events[0];
  await hub.ingest({ events: [ev], prices: prices(now - 1000).filter((p) => p.event_id === ev.id) }, now);
  const idx = hub.eventIds.peek(ev.id);
  const opened: number[] = [];
  hub.onAnalytics((ch) => opened.push(ch.arbOpened.length));
  // 1,500 observations (three chunks): the crossing prices come first and are uncrossed by the last ones, so a
  // chunk evaluated on its own would open an arbitrage
  const filler = Array.from({ length: 1496 }, (_, i) =>
    ({ book: 'pinnacle', event_id: ev.id, market: 'h2h', outcome: i % 2 === 0 ? ev.home_team : ev.away_team, price: 1.9 + (i % 7) / 100, ts: now + i }));
  const uncross = crossed(ev, now + 2000).map((p) => ({ ...p, price: 1.8 }));
  const ingest = hub.ingest({ prices: [...crossed(ev, now), ...filler, ...uncross] }, now + 3000);
  // the chunks are posted; the shard dies before (or while) it applies them
  await hub.pool.kill(0);
  const r = await ingest;
  t.equal(r.accepted, 1500 + 4, 'every observation accepted');
  t.equal(hub.pool.restarts()[0], 1, 'the shard restarted once');
  t.same(opened.filter((n) => n > 0), [], 'no arbitrage opened by a chunk alone, before or after the restart');
  t.equal(hub.analytics.event(idx)?.arbs.size ?? 0, 0, 'none open at the end');
  t.equal(hub.pool.quoteCounts()[0], 6, 'the rebuilt shard holds the event\'s six quotes');
});
