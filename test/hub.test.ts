import t from 'tap';
import { BOOK_INDEX, MARKET_INDEX } from '../engine/ingest.js';
import { ARB } from '../engine/records.js';
import { Hub, shardOf } from '../workers/hub.js';

const now = Date.now();
const ev = (id: string, sport: string, home: string, away: string) => ({ id, sport_key: sport, commence_time: now + 3_600_000, home_team: home, away_team: away });

t.test('hub - change batches are numbered per sport, one step per batch that touches the sport', async (t) => {
  const hub = new Hub(2);
  await hub.start();
  t.teardown(() => hub.close());
  const seen: [string, number][] = [];
  hub.onBatch((b) => seen.push(...b.seqs));
  await hub.ingest({ events: [ev('n1', 'basketball_nba', 'A', 'B'), ev('e1', 'soccer_epl', 'C', 'D')] }, now);
  t.equal(hub.sportSeq('basketball_nba'), 0, 'events alone produce no change batch');
  await hub.ingest({ prices: [{ book: 'fanduel', event_id: 'n1', market: 'h2h', outcome: 'A', price: 1.9 }] }, now);
  await hub.ingest({ prices: [{ book: 'fanduel', event_id: 'n1', market: 'h2h', outcome: 'B', price: 1.9 }] }, now);
  await hub.ingest({ prices: [{ book: 'fanduel', event_id: 'e1', market: 'h2h', outcome: 'Draw', price: 3.4 }] }, now);
  t.equal(hub.sportSeq('basketball_nba'), 2, 'two NBA batches');
  t.equal(hub.sportSeq('soccer_epl'), 1, 'one EPL batch');
  t.same(seen, [['basketball_nba', 1], ['basketball_nba', 2], ['soccer_epl', 1]], 'listeners see each batch with its sequence number');
});

t.test('hub - an event always lands on the shard of its id hash, and ingest resolves with the read model updated', async (t) => {
  const hub = new Hub(2);
  await hub.start();
  t.teardown(() => hub.close());
  const ids = Array.from({ length: 20 }, (_, i) => `evt_${i}`);
  const r = await hub.ingest({
    events: ids.map((id) => ev(id, 'icehockey_nhl', 'H', 'A')),
    prices: ids.map((id) => ({ book: 'pinnacle', event_id: id, market: 'totals', outcome: 'Over', point: 6.5, price: 1.95 })),
  }, now);
  t.equal(r.accepted, 20, 'accepted');
  const counts = hub.pool.quoteCounts();
  const expected = [0, 0];
  for (const id of ids) expected[shardOf(id, 2)]++;
  t.same(counts, expected, 'quotes per shard follow the hash');
  for (const id of ids) {
    const view = hub.readModel.event(hub.eventIds.peek(id))!;
    t.equal(view.shard, shardOf(id, 2), `${id} shard recorded`);
    t.equal(view.quotes, 1, `${id} quote visible once ingest resolved`);
  }
  t.equal(shardOf('evt_1', 2), shardOf('evt_1', 2), 'stable');
});

t.test('hub - a final event leaves the store and the read model', async (t) => {
  const hub = new Hub(1);
  await hub.start();
  t.teardown(() => hub.close());
  await hub.ingest({ events: [ev('f1', 'baseball_mlb', 'H', 'A')], prices: [{ book: 'draftkings', event_id: 'f1', market: 'h2h', outcome: 'H', price: 2.1 }] }, now);
  t.equal(hub.pool.quoteCounts()[0], 1, 'one quote');
  const r = await hub.ingest({ events: [{ ...ev('f1', 'baseball_mlb', 'H', 'A'), status: 'final' }], prices: [{ book: 'draftkings', event_id: 'f1', market: 'h2h', outcome: 'A', price: 1.8 }] }, now);
  t.equal(r.rejected[0]?.error_code, 'INVALID_EVENT', 'a price for a final event is rejected');
  t.equal(hub.pool.quoteCounts()[0], 0, 'store emptied');
  t.equal(hub.readModel.event(hub.eventIds.peek('f1')), undefined, 'read model dropped it');
  t.equal(hub.event('f1'), undefined, 'registry dropped it');
});


t.test('hub - observations older than their quote are answered as ignored, across shards and chunks', async (t) => {
  const hub = new Hub(2);
  await hub.start();
  t.teardown(() => hub.close());
  const ids = Array.from({ length: 30 }, (_, i) => `old_${i}`);
  const books = ['pinnacle', 'draftkings', 'fanduel', 'betmgm', 'bovada', 'williamhill_us'];
  // 30 events x 6 books x 2 markets x 2 sides = 720 observations: more than one chunk per shard
  const obs = (ts: number, price: number) => ids.flatMap((id) => books.flatMap((book) => [
    ...['H', 'A'].map((outcome) => ({ book, event_id: id, market: 'h2h', outcome, price, ts })),
    ...['Over', 'Under'].map((outcome) => ({ book, event_id: id, market: 'totals', outcome, point: 5.5, price, ts })),
  ]));
  const first = await hub.ingest({ events: ids.map((id) => ev(id, 'icehockey_nhl', 'H', 'A')), prices: obs(now, 1.9) }, now);
  t.same([first.accepted, first.ignored], [720, 0], 'all applied');
  const older = obs(now - 1000, 1.8);
  // every third one is newer instead: applied
  for (let i = 0; i < older.length; i += 3) older[i].ts = now + 10;
  const second = await hub.ingest({ prices: older }, now + 20);
  t.same([second.accepted, second.ignored, second.rejected.length], [240, 480, 0], 'the older two in three ignored, the rest applied');
  t.equal(hub.counters.accepted, 960, 'the accepted counter counts applied observations only');
  t.equal(hub.counters.stale, 480, 'the stale counter the ignored ones');
});

t.test('hub - a game upserted by a batch from before its start (a cluster replay) is still handed its start', async (t) => {
  const clock = now + 3_600_000; // the node replays a batch an hour old: the game started half an hour ago
  const hub = new Hub(1, () => clock);
  await hub.start();
  t.teardown(() => hub.close());
  const start = now + 1_800_000;
  const game = { id: 'replayed_1', sport_key: 'basketball_nba', commence_time: start, home_team: 'H', away_team: 'A' };
  const r = await hub.ingest({ events: [game], prices: [
    { book: 'fanduel', event_id: game.id, market: 'h2h', outcome: 'H', price: 1.9, ts: now },
    { book: 'fanduel', event_id: game.id, market: 'h2h', outcome: 'A', price: 1.95, ts: now },
  ] }, now);
  t.equal(r.accepted, 2, 'pregame quotes applied at the batch time');
  const view = hub.readModel.event(hub.eventIds.peek(game.id))!;
  t.equal(view.quotes, 2, 'held');
  t.notOk(hub.inPlay(view, clock), 'not in play until its start has reached the store');
  hub.tick();
  for (let i = 0; i < 100 && view.quotes > 0; i++) await new Promise((res) => setTimeout(res, 10));
  t.equal(view.quotes, 0, 'the tick dropped the quotes observed before the start');
  for (let i = 0; i < 100 && !hub.inPlay(view, clock); i++) await new Promise((res) => setTimeout(res, 10));
  t.ok(hub.inPlay(view, clock), 'in play once the kickoff is answered');
});

t.test('hub - analytics listeners see the read model with the batch applied, however the shard answered it', async (t) => {
  // a batch alone in flight is answered in two messages (quotes, then analytics), batches queued behind others in one:
  // either way an opened arbitrage's legs are in the read model when listeners hear of it (the webhooks' event keys
  // and arb_id are built from their data times, and must agree between nodes of a cluster)
  const hub = new Hub(1);
  await hub.start();
  t.teardown(() => hub.close());
  const ids = Array.from({ length: 16 }, (_, i) => `arbq_${i}`);
  await hub.ingest({ events: ids.map((id) => ev(id, 'basketball_nba', 'H', 'A')) }, now);
  let checked = 0;
  const wrong: string[] = [];
  hub.onAnalytics((ch) => {
    for (const rec of ch.arbOpened) {
      const e = rec[ARB.EVENT];
      for (let o = 0; o < rec[ARB.N]; o++) {
        const leg = ARB.LEGS + o * ARB.ALTS * ARB.LSIZE;
        const book = rec[leg + ARB.BOOK];
        const held = hub.readModel.quotePrice(e, rec[ARB.MARKET], rec[ARB.POINT], rec[ARB.PLAYER], o, book);
        if (held !== rec[leg + ARB.PRICE]) wrong.push(`event ${e} outcome ${o}: read model ${held}, arbitrage ${rec[leg + ARB.PRICE]}`);
        checked++;
      }
    }
  });
  await Promise.all(ids.map((id) => hub.ingest({
    prices: [
      { book: 'fanduel', event_id: id, market: 'h2h', outcome: 'H', price: 2.2 },
      { book: 'fanduel', event_id: id, market: 'h2h', outcome: 'A', price: 1.6 },
      { book: 'draftkings', event_id: id, market: 'h2h', outcome: 'H', price: 1.6 },
      { book: 'draftkings', event_id: id, market: 'h2h', outcome: 'A', price: 2.2 },
    ],
  }, now)));
  t.equal(checked, 32, 'sixteen arbitrages opened, two legs each');
  t.same(wrong, [], 'every leg\'s price was in the read model');
});

t.test('hub - a read of the analytics in the gap between a batch\'s quotes and its analytics waits for the analytics', async (t) => {
  // a batch alone in flight is answered quotes first: /odds has the moved price while the view still holds the
  // arbitrage the move closed (a 6 % arbitrage served on a price the book no longer offered). Hub.consistent runs the
  // read once the view has caught up.
  const hub = new Hub(1);
  await hub.start();
  t.teardown(() => hub.close());
  await hub.ingest({ events: [ev('gap1', 'basketball_nba', 'H', 'A')] }, now);
  const price = (book: string, outcome: string, p: number) => ({ book, event_id: 'gap1', market: 'h2h', outcome, price: p });
  await hub.ingest({ prices: [price('draftkings', 'H', 2.1), price('draftkings', 'A', 1.8), price('fanduel', 'H', 1.75), price('fanduel', 'A', 2.15)] }, now);
  const idx = hub.eventIds.peek('gap1');
  const arbs = () => hub.analytics.event(idx)?.arbs.size ?? 0;
  const H2H = MARKET_INDEX.get('h2h')!;
  const DK = BOOK_INDEX.get('draftkings')!;
  t.equal(arbs(), 1, 'the arbitrage is open');
  const reads: { sync: boolean; dk: number; arbs: number }[] = [];
  let pending: Promise<unknown> | null = null;
  hub.onBatch(() => {
    const dk = hub.readModel.quotePrice(idx, H2H, NaN, -1, 0, DK);
    const r = hub.consistent(() => ({ dk: hub.readModel.quotePrice(idx, H2H, NaN, -1, 0, DK), arbs: arbs() }));
    if (r instanceof Promise) pending = r.then((v) => reads.push({ sync: false, ...v }));
    else reads.push({ sync: true, ...r });
    t.ok(dk > 0, 'the read model has the quote');
  });
  // a batch alone in flight, with enough other prices that its analytics take a while
  const filler = Array.from({ length: 200 }, (_, i) => ({ book: 'betmgm', event_id: 'gap1', market: 'totals', outcome: i % 2 === 0 ? 'Over' : 'Under', point: 200 + Math.floor(i / 2), price: 1.9 }));
  await hub.ingest({ prices: [...filler, price('draftkings', 'H', 1.5), price('draftkings', 'A', 1.9)] }, now);
  await pending;
  t.ok(reads.length >= 1, 'the listener read the view');
  t.ok(reads.some((r) => !r.sync), 'the read made in the quotes\' listener waited');
  t.same(reads.filter((r) => r.arbs !== 0), [], 'no read saw the closed arbitrage');
  t.equal(arbs(), 0, 'closed');
  t.equal(hub.consistent(() => 7), 7, 'with nothing behind, a read runs at once');
});

t.test('hub - an arbitrage is detected at the time of the batch that opened it, not at the wall clock of its applying', async (t) => {
  // a node replaying the cluster's stream applies a batch taken minutes ago: its detected_at must be the same as on
  // the node that took the batch live (regression: it was the replaying node's clock)
  const hub = new Hub(1);
  await hub.start();
  t.teardown(() => hub.close());
  const taken = Date.now() - 120_000;
  await hub.ingest({
    events: [ev('det_1', 'basketball_nba', 'H', 'A')],
    prices: [
      { book: 'fanduel', event_id: 'det_1', market: 'h2h', outcome: 'H', price: 2.2, ts: taken - 10 },
      { book: 'fanduel', event_id: 'det_1', market: 'h2h', outcome: 'A', price: 1.6, ts: taken - 10 },
      { book: 'draftkings', event_id: 'det_1', market: 'h2h', outcome: 'H', price: 1.6, ts: taken - 10 },
      { book: 'draftkings', event_id: 'det_1', market: 'h2h', outcome: 'A', price: 2.2, ts: taken - 10 },
    ],
  }, taken);
  const arbs = [...hub.analytics.event(hub.eventIds.peek('det_1'))!.arbs.values()];
  t.equal(arbs.length, 1, 'the arbitrage is open');
  t.equal(arbs[0][ARB.DETECTED_AT], taken, 'detected at the batch\'s time');
});
