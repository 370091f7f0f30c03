import t, { type Test } from 'tap';
import { BOOKMAKERS } from '../engine/catalogue.js';
import { MARKET_INDEX, SLOT } from '../engine/ingest.js';
import { CHG, OBS } from '../engine/records.js';
import { Hub } from '../workers/hub.js';
import { MSG, decode, encode, type ApplyMsg, type ChangesMsg, type SpareMsg } from '../workers/protocol.js';

const NONE = new Float64Array(0);
const noAnalytics = { cons: NONE, nCons: 0, arb: NONE, nArb: 0, fair: NONE, nFair: 0, ev: NONE, nEv: 0, mid: NONE, nMid: 0 };

/** a started hub with one shard (closed at the end of the test) and one NBA event per id, teams H and A */
async function hubWith(t: Test, now: number, ...ids: string[]): Promise<Hub> {
  const hub = new Hub(1);
  await hub.start();
  t.teardown(() => hub.close());
  const events = ids.map((id) => ({ id, sport_key: 'basketball_nba', commence_time: now + 3_600_000, home_team: 'H', away_team: 'A' }));
  if (events.length > 0) await hub.ingest({ events }, now);
  return hub;
}

function obs(n: number, seed: number): Float64Array {
  const a = new Float64Array(n * OBS.STRIDE);
  for (let i = 0; i < a.length; i++) a[i] = seed + i;
  return a;
}

t.test('protocol - an APPLY is written into a spare buffer that is large enough, and reads back whole', async (t) => {
  const spare = new ArrayBuffer(64 * 1024);
  new Float64Array(spare).fill(-7); // left-overs of an earlier message
  const o = obs(100, 1);
  const buf = encode({ t: MSG.APPLY, seq: 9, n: 100, obs: o, now: 1234, early: true, more: true }, spare);
  t.equal(buf.buffer, spare, 'the spare carries the message');
  const m = decode<ApplyMsg>(buf);
  t.same([m.t, m.seq, m.n, m.now, m.early, m.more], [MSG.APPLY, 9, 100, 1234, true, true], 'header, the early and more flags included');
  t.same(Array.from(m.obs), Array.from(o), 'observations, and nothing of the left-overs');
});

t.test('protocol - a spare too small is left alone: a new buffer with a quarter more room', async (t) => {
  const spare = new ArrayBuffer(800);
  const buf = encode({ t: MSG.APPLY, seq: 1, n: 100, obs: obs(100, 0), now: 0, early: false, more: false }, spare);
  t.not(buf.buffer, spare, 'not the spare');
  t.equal(spare.byteLength, 800, 'the spare is not detached or changed');
  t.ok(buf.buffer.byteLength >= buf.byteLength * 1.25 - 8, 'room for a larger message next time');
});

t.test('protocol - CHANGES in a recycled buffer read back only what the header counts', async (t) => {
  const spare = new ArrayBuffer(64 * 1024);
  new Float64Array(spare).fill(42);
  const rec = new Float64Array(3 * CHG.STRIDE).map((_, i) => i / 2);
  const msg: ChangesMsg = { t: MSG.CHANGES, seqs: [5, 6], n: 3, rec, applied: 3, stale: 0, quotes: 17, quotesFirst: true, ...noAnalytics };
  const back = decode<ChangesMsg>(encode(msg, spare));
  t.same(back.seqs, [5, 6], 'seqs');
  t.same([back.n, back.applied, back.quotes, back.nCons, back.nEv], [3, 3, 17, 0, 0], 'counts');
  t.equal(back.quotesFirst, true, 'the quotes-first flag');
  t.equal(decode<ChangesMsg>(encode({ ...msg, quotesFirst: false }, null)).quotesFirst, false, 'and its absence');
  t.same(Array.from(back.rec), Array.from(rec), 'records');
  t.equal(back.cons.length, 0, 'no consensus records read from the left-overs');
});

t.test('hub - with buffers recycled between batches in flight, every listener sees its own batch\'s prices', async (t) => {
  const now = Date.now();
  const hub = await hubWith(t, now, 'r1');
  const seen: number[] = [];
  hub.onBatch((b) => {
    for (let i = 0, off = 0; i < b.count; i++, off += CHG.STRIDE) seen.push(b.records[off + CHG.PRICE]);
  });
  const books = ['fanduel', 'draftkings', 'betmgm', 'pinnacle', 'bovada', 'williamhill_us'];
  const sent: number[] = [];
  const batches = Array.from({ length: 60 }, (_, i) => books.map((book, k) => {
    const price = 1.5 + ((i * 7 + k * 13) % 97) / 100;
    sent.push(price);
    return { book, event_id: 'r1', market: 'h2h', outcome: k % 2 === 0 ? 'H' : 'A', price, ts: now + i * 10 + k };
  }));
  // eight batches in flight at a time, so answers and new batches cross and buffers come back for reuse
  for (let i = 0; i < batches.length; i += 8) {
    await Promise.all(batches.slice(i, i + 8).map((prices) => hub.ingest({ prices }, now + 1000)));
  }
  t.same(seen.slice().sort(), sent.slice().sort(), 'each price reached the listeners once, none overwritten by a later batch');
});

t.test('protocol - a SPARE hands a buffer back whole, whatever it held', async (t) => {
  const held = new Float64Array(1000).fill(3);
  const buf = encode({ t: MSG.SPARE, buffer: held.buffer });
  t.equal(buf.buffer, held.buffer, 'the same buffer travels');
  const m = decode<SpareMsg>(buf);
  t.equal(m.t, MSG.SPARE, 'read as a SPARE, not as the CHANGES it held');
  t.equal(m.buffer.byteLength, 8000, 'its whole capacity');
});

t.test('hub - a batch alone in flight reaches the read model before its analytics; the ingest waits for both', async (t) => {
  const now = Date.now();
  const hub = await hubWith(t, now, 'e1');
  const idx = hub.eventIds.peek('e1');
  const arbsSeen: number[] = [];
  hub.onBatch(() => arbsSeen.push(hub.analytics.event(idx)?.arbs.size ?? 0));
  // draftkings 2.10 on H and fanduel 2.10 on A: 1/2.1 + 1/2.1 < 1, an arbitrage
  const cross = [{ book: 'draftkings', event_id: 'e1', market: 'h2h', outcome: 'H', price: 2.1, ts: now },
    { book: 'fanduel', event_id: 'e1', market: 'h2h', outcome: 'A', price: 2.1, ts: now }];
  await hub.ingest({ prices: cross }, now);
  t.same(arbsSeen, [0], 'the quotes were applied and listened to while the arbitrage was still on its way');
  t.equal(hub.analytics.event(idx)?.arbs.size, 1, 'and it was in the view when the ingest resolved');
  // two batches at once: the second is sent while the first is in flight and is answered in one message
  arbsSeen.length = 0;
  const close = [{ book: 'draftkings', event_id: 'e1', market: 'h2h', outcome: 'H', price: 1.8, ts: now + 1 }];
  const reopen = [{ book: 'draftkings', event_id: 'e1', market: 'h2h', outcome: 'H', price: 2.2, ts: now + 2 }];
  await Promise.all([hub.ingest({ prices: close }, now + 10), hub.ingest({ prices: reopen }, now + 10)]);
  t.same(arbsSeen, [1, 1], 'first batch early (its arbitrage not closed yet); second with its analytics (open again)');
});

t.test('hub - a large ingest goes to the shard in chunks as it is parsed, and its analytics are one batch', async (t) => {
  const now = Date.now();
  const hub = await hubWith(t, now, 'c1', 'c2');
  const at = (book: string, event_id: string, outcome: string, price: number, ts: number) => ({ book, event_id, market: 'h2h', outcome, price, ts });
  await hub.ingest({ prices: [at('draftkings', 'c1', 'H', 1.9, now), at('draftkings', 'c1', 'A', 1.9, now),
    at('fanduel', 'c1', 'H', 1.9, now), at('fanduel', 'c1', 'A', 1.9, now)] }, now);
  const opened: number[] = [];
  hub.onAnalytics((ch) => opened.push(ch.arbOpened.length));
  const chunks: boolean[] = [];
  const apply = hub.pool.apply.bind(hub.pool);
  hub.pool.apply = (shard, obs, n, more) => {
    chunks.push(more === true);
    return apply(shard, obs, n, more);
  };
  // draftkings H 2.20 against A 1.90 crosses (1/2.2 + 1/1.9 < 1) until both books' A fall to 1.70 (1/2.2 + 1/1.7 > 1),
  // 1,100 observations later: a shard that evaluated the first chunk alone would open an arbitrage and close it again
  const filler = Array.from({ length: 1100 }, (_, i) => at('betmgm', 'c2', i % 2 === 0 ? 'H' : 'A', 1.5 + (i % 40) / 100, now + 1 + i));
  const res = await hub.ingest({ prices: [at('draftkings', 'c1', 'H', 2.2, now + 1), ...filler, at('fanduel', 'c1', 'A', 1.7, now + 2000),
    at('draftkings', 'c1', 'A', 1.7, now + 2000)] }, now + 3000);
  t.same(chunks, [true, true, false], '1,103 observations: two full chunks of 512 while parsing, then the rest');
  t.equal(res.accepted, 1103, 'every observation accepted');
  t.same(opened, [], 'no arbitrage opened: the chunks were evaluated together, after the last');
  t.equal(hub.readModel.quotePrice(hub.eventIds.peek('c1'), MARKET_INDEX.get('h2h')!, Number.NaN, -1, SLOT.AWAY, BOOKMAKERS.findIndex((b) => b.key === 'fanduel')), 1.7,
    'the last chunk\'s price is in the read model when the ingest resolves');
});

t.test('hub - an ingest that fails half way still sends what it parsed: no shard is left with an unfinished batch', async (t) => {
  const now = Date.now();
  const hub = await hubWith(t, now, 'f1');
  const idx = hub.eventIds.peek('f1');
  const prices = Array.from({ length: 700 }, (_, i) =>
    ({ book: 'betmgm', event_id: 'f1', market: 'h2h', outcome: i % 2 === 0 ? 'H' : 'A', price: 1.5 + (i % 50) / 100, ts: now + i }));
  // the 600th observation's event lookup fails: 512 have gone as a chunk, 87 more are parsed
  const id = hub.eventIds.id.bind(hub.eventIds);
  let calls = 0;
  hub.eventIds.id = (key: string) => {
    if (++calls === 600) throw new Error('lookup failed');
    return id(key);
  };
  await t.rejects(hub.ingest({ prices }, now), /lookup failed/, 'the ingest fails');
  hub.eventIds.id = id;
  const betmgm = BOOKMAKERS.findIndex((b) => b.key === 'betmgm');
  const home = () => hub.readModel.quotePrice(idx, MARKET_INDEX.get('h2h')!, Number.NaN, -1, SLOT.HOME, betmgm);
  for (let i = 0; i < 100 && home() !== 1.98; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(home(), 1.98, 'the 599 observations parsed before the failure were applied (the last home price 1.98) without waiting for another ingest');
});
