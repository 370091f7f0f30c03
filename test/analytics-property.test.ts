import t from 'tap';
import { Analytics, QS, isFresh, scratch, type ScratchSets } from '../engine/analytics.js';
import { AnalyticsView } from '../engine/analytics-view.js';
import { BOOKMAKERS, MARKETS } from '../engine/catalogue.js';
import { LD, PriceStore } from '../engine/price-store.js';
import { ARB, CHG, CONS, EVQ, EVR, OBS, ROW, RecordBuffer } from '../engine/records.js';
import { uniform as mulberry32 } from '../engine/prng.js';
import { Simulator } from '../engine/simulator.js';
import { Hub } from '../workers/hub.js';


const book = (key: string) => BOOKMAKERS.findIndex((b) => b.key === key);
const market = (key: string) => MARKETS.findIndex((m) => m.key === key);
// sharps (pinnacle, an exchange with commission, lowvig), soft books, a prediction market and a DFS book: every
// kind of staleness threshold and commission takes part
const BOOKS = ['pinnacle', 'betfair_ex_uk', 'lowvig', 'draftkings', 'fanduel', 'betmgm', 'williamhill', 'kalshi', 'prizepicks'].map(book);
const MKTS = [
  { id: market('h2h'), outcomes: 2, points: [Number.NaN], players: [-1] },
  { id: market('h2h_3_way'), outcomes: 3, points: [Number.NaN], players: [-1] },
  { id: market('spreads'), outcomes: 2, points: [-3.5, -3, -2.5, -4], players: [-1] },
  { id: market('totals'), outcomes: 2, points: [44.5, 45, 46.5, 47], players: [-1] },
  { id: market('player_points'), outcomes: 2, points: [24.5, 25.5, 27], players: [0, 1] },
];
// 1.2 / 1.2 sums to 1.67 in implied probability, 2.1 / 2.2 to 0.93: moneyline pairs outside consistentMoneyline's
// bounds, which count in no view
const PRICES = [1.2, 1.5, 1.8, 1.85, 1.9, 1.95, 2.0, 2.05, 2.1, 2.2, 2.5, 3.2, 3.6, 4.5];

/** A store with the analytics on, fed moneyline prices a batch at a time (the hand-made cases below). */
function moneylines() {
  const store = new PriceStore(8);
  const analytics = new Analytics(store);
  const out = new RecordBuffer(CHG.STRIDE, 8);
  const obs = new RecordBuffer(OBS.STRIDE, 8);
  return {
    store,
    /** queues `key`'s price for outcome o of event `event`'s h2h line, observed at `ts` */
    put(key: string, o: number, price: number, event = 0, ts = 1_800_000_000_000): void {
      const off = obs.push();
      const d = obs.data;
      d[off + OBS.EVENT] = event; d[off + OBS.MARKET] = market('h2h'); d[off + OBS.POINT] = Number.NaN; d[off + OBS.PLAYER] = -1;
      d[off + OBS.OUTCOME] = o; d[off + OBS.BOOK] = book(key); d[off + OBS.PRICE] = price; d[off + OBS.TS] = ts;
    },
    /** applies what was queued as one batch at `now` and returns the analytics' records of it */
    step(now: number) {
      analytics.begin(now);
      store.apply(obs.data, obs.length, out);
      obs.length = 0;
      return analytics.flush();
    },
  };
}

function sameSets(t: { equal: (a: unknown, b: unknown, m: string) => void }, got: ScratchSets, want: ScratchSets, label: string): number {
  let bad = 0;
  for (const name of ['cons', 'arb', 'ev', 'mid'] as const) {
    const g = got[name];
    const w = want[name];
    const missing = [...w.keys()].filter((k) => !g.has(k));
    const extra = [...g.keys()].filter((k) => !w.has(k));
    if (missing.length > 0 || extra.length > 0) {
      bad++;
      t.equal(`${missing.length} missing ${missing.slice(0, 2)} / ${extra.length} extra ${extra.slice(0, 2)}`, 'none', `${label}: ${name} keys`);
      continue;
    }
    for (const [k, wv] of w) {
      const gv = g.get(k)!;
      for (let i = 1; i < wv.length; i++) {
        if (name === 'arb' && i === ARB.DETECTED_AT) continue;
        const a = gv[i];
        const b = wv[i];
        if (a === b || (a !== a && b !== b)) continue;
        bad++;
        if (process.env.PROPERTY_DEBUG) console.error(label, name, k, 'got', [...gv].join(','), 'want', [...wv].join(','));
        t.equal(a, b, `${label}: ${name} ${k} field ${i}`);
        break;
      }
      if (bad > 3) return bad;
    }
  }
  return bad;
}

interface Asserts {
  equal(a: unknown, b: unknown, m: string): void;
  ok(v: unknown, m: string): void;
}

function run(t: Asserts, seed: number, steps: number): void {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const store = new PriceStore(8);
  const analytics = new Analytics(store);
  const view = new AnalyticsView();
  const out = new RecordBuffer(CHG.STRIDE, 8);
  const obs = new RecordBuffer(OBS.STRIDE, 8);
  let clock = 1_800_000_000_000;
  let compared = 0;
  let bad = 0;
  const seen = { arb: 0, ev: 0, mid: 0, stale: 0 };
  const flush = () => {
    view.apply(analytics.flush());
    out.length = 0;
  };
  for (let step = 0; step < steps && bad === 0; step++) {
    clock += Math.floor(rnd() * 40_000);
    analytics.begin(clock);
    analytics.tick();
    const r = rnd();
    if (r < 0.03) {
      store.removeEvent(Math.floor(rnd() * 3), out);
    } else if (r < 0.05) {
      // a game's start: its quotes last observed before it go (Hub.tick)
      store.dropBefore(Math.floor(rnd() * 3), clock - Math.floor(rnd() * 300_000), out);
    } else if (r > 0.1) {
      const apply = () => {
        const n = 1 + Math.floor(rnd() * 12);
        for (let i = 0; i < n; i++) {
          const m = pick(MKTS);
          const off = obs.push();
          const d = obs.data;
          d[off + OBS.EVENT] = Math.floor(rnd() * 3);
          d[off + OBS.MARKET] = m.id;
          d[off + OBS.POINT] = pick(m.points);
          d[off + OBS.PLAYER] = pick(m.players);
          d[off + OBS.OUTCOME] = Math.floor(rnd() * m.outcomes);
          d[off + OBS.BOOK] = pick(BOOKS);
          // now and then a withdrawal (price 0: the book no longer offers the market), mid-batch among updates
          d[off + OBS.PRICE] = rnd() < 0.06 ? 0 : pick(PRICES);
          // mostly now; sometimes minutes old (stale on arrival for fast books), sometimes out of order
          d[off + OBS.TS] = clock - (rnd() < 0.8 ? 0 : Math.floor(rnd() * 400_000));
        }
        store.apply(obs.data, obs.length, out);
        obs.length = 0;
      };
      apply();
    }
    flush();
    if (step % 5 === 0 || step === steps - 1) {
      const want = scratch(store, clock);
      seen.arb += want.arb.size > 0 ? 1 : 0;
      seen.ev += want.ev.size > 0 ? 1 : 0;
      seen.mid += want.mid.size > 0 ? 1 : 0;
      for (let e = 0; e < 3; e++) store.forEachQuote(e, (_l, _o, slot) => { if (!isFresh(store, slot, clock)) seen.stale++; });
      // every ladder tuple carries its quote's freshness as the quote's own record holds it (the EV bits live in the
      // tuple alone; the EV sets compared below show they are right)
      for (let line = 0; line < store.lineIdLimit; line++) {
        if (!store.lineLive(line)) continue;
        for (let o = 0; o < 3; o++) {
          const l = store.ladder(line, o);
          for (let k = 0; k < l.length; k += LD.STRIDE) {
            const fresh = store.records[store.stateOf(l[k + LD.SLOT]) + QS.BITS] & 1;
            if ((l[k + LD.FLAG] & 1) !== fresh) {
              bad++;
              t.equal(l[k + LD.FLAG] & 1, fresh, `seed ${seed} step ${step}: line ${line} outcome ${o} tuple ${k / LD.STRIDE} carries its quote's freshness`);
            }
          }
        }
      }
      bad += sameSets(t, view.canonical((e, m, pt, pl, o, b) => store.quote(e, m, pt, pl, o, b)?.price ?? 0), want, `seed ${seed} step ${step}`);
      compared++;
    }
  }
  t.equal(bad, 0, `seed ${seed}: incremental analytics equal a from-scratch recomputation at ${compared} checkpoints`);
  t.ok(seen.arb > 0 && seen.ev > 0 && seen.mid > 0 && seen.stale > 0,
    `seed ${seed}: arbitrage, EV, middles and stale quotes all occurred (${JSON.stringify(seen)})`);
}

t.test('analytics - incremental sets equal a from-scratch recomputation after random updates, removals, withdrawals and staleness', async (t) => {
  // PROPERTY_SEEDS=N runs seeds 1..N instead (a longer search after changing the engine); PROPERTY_DEBUG=1 prints
  // both records of a mismatch
  const n = Number(process.env.PROPERTY_SEEDS ?? 6);
  for (let seed = 1; seed <= n; seed++) run(t, seed, 1500);
});

t.test('analytics - consensus best price ties an exchange with a bookmaker at the same raw price', async (t) => {
  // betfair_ex_uk at 2.10 has an effective price of 1 + 1.1 x 0.95 = 2.045; the search for the best raw price
  // may stop early only when no raw price behind can still reach the best: 1 + 1.045 / 0.95 is 2.1 in exact
  // arithmetic but can round an ulp below it, and the tie must still be met (the lower book id wins)
  const { store, put, step } = moneylines();
  const view = new AnalyticsView();
  const now = 1_800_000_000_000;
  const quotes: [string, number, number][] = [['pinnacle', 2.1, 1.8], ['betfair_ex_uk', 2.1, 1.75], ['draftkings', 1.9, 1.9]];
  for (const [key, home, away] of quotes) { put(key, 0, home); put(key, 1, away); }
  view.apply(step(now));
  const lower = Math.min(book('pinnacle'), book('betfair_ex_uk'));
  for (const [label, sets] of [['incremental', view.canonical((e, m, pt, pl, o, b) => store.quote(e, m, pt, pl, o, b)?.price ?? 0)], ['from scratch', scratch(store, now)]] as const) {
    const rec = [...sets.cons.values()][0];
    t.equal(rec[CONS.O + CONS.BEST], 2.1, `${label}: best raw price 2.10`);
    t.equal(rec[CONS.O + CONS.BEST_BOOK], lower, `${label}: the tie goes to the lower book id`);
    t.equal(rec[CONS.O + CONS.OSIZE + CONS.WORST_BOOK], book('betfair_ex_uk'), `${label}: worst away price 1.75 at the exchange`);
  }
});

t.test('analytics - a sharp\'s move flips the EV bits of exactly the quotes between the old and the new edge threshold', async (t) => {
  // pinnacle 1.95 / 1.95: every method's fair probability is 0.5, so a home price above 2.00 has an edge. Then pinnacle
  // moves home to 1.90: implied 0.526316 + 0.512821 = 1.039137; the highest fair home probability of the six methods
  // is the additive 0.526316 - 0.039137 / 2 = 0.506748, so the edge threshold falls to 1 / 0.506748 = 1.9734: the
  // 1.98 quote turns +EV, the 2.02 to 2.10 quotes stay +EV (nothing sent for them), the 1.90 one stays out. The
  // away side's fair probability falls (0.4935 under the multiplicative method): 1.90 away quotes stay out.
  const { store, put, step } = moneylines();
  const now = 1_800_000_000_000;
  put('pinnacle', 0, 1.95); put('pinnacle', 1, 1.95);
  const soft: [string, number][] = [['draftkings', 1.9], ['fanduel', 1.98], ['betmgm', 2.02], ['williamhill', 2.06], ['bovada', 2.1]];
  for (const [key, home] of soft) { put(key, 0, home); put(key, 1, 1.9); }
  const first = step(now);
  const upserts = (a: typeof first) => {
    const got: string[] = [];
    for (let i = 0; i < a.nEv; i++) {
      const off = i * EVQ.STRIDE;
      got.push(`${BOOKMAKERS[a.ev[off + EVQ.BOOK]].key} ${a.ev[off + EVQ.OUTCOME]} ${a.ev[off + EVQ.KIND] === ROW.UPSERT ? 'on' : 'off'}`);
    }
    return got.sort();
  };
  t.same(upserts(first), ['betmgm 0 on', 'bovada 0 on', 'williamhill 0 on'], 'home quotes above 2.00 are +EV against 1.95 / 1.95');
  put('pinnacle', 0, 1.9);
  const second = step(now + 1);
  t.equal(second.nFair, 1, 'one new no-vig line');
  t.same(upserts(second), ['fanduel 0 on'], 'only the 1.98 quote, between the old threshold 2.00 and the new 1.9734, changes');
  const sets = scratch(store, now + 1);
  t.same([...sets.ev.values()].map((r) => BOOKMAKERS[r[EVR.BOOK]].key).sort(), ['betmgm', 'bovada', 'fanduel', 'williamhill'], 'the from-scratch set agrees');
});

t.test('analytics - through the hub, simulator batches sent in chunks leave the main thread\'s view equal to a from-scratch recomputation', async (t) => {
  // the whole path: hub.ingest (chunks of 512, each batch one batch of the analytics), the shard's analytics, the
  // two-message answer, the main thread's view; against scratch() over a store rebuilt from the read model's quotes
  const t0 = 1_790_000_000_000;
  let clock = t0;
  const hub = new Hub(1, () => clock);
  await hub.start();
  t.teardown(() => hub.close());
  const sim = new Simulator({ seed: 1, now: t0 });
  await hub.ingest(sim.snapshot(t0), clock);
  let chunked = 0;
  for (let i = 1; i <= 100; i++) {
    clock = t0 + i * 100;
    const batch = sim.step(clock, 1000);
    if (batch.prices.length > 512) chunked++;
    await hub.ingest(batch, clock);
  }
  t.ok(chunked > 0, `batches large enough to go in chunks (${chunked})`);
  const { records, count } = hub.readModel.restoreRecords(0);
  const store = new PriceStore(1 << 12);
  store.restore(records, count);
  const want = scratch(store, clock);
  const got = hub.analytics.canonical((e, m, pt, pl, o, b) => hub.readModel.quotePrice(e, m, pt, pl, o, b));
  t.ok(want.cons.size > 0 && want.arb.size > 0 && want.ev.size > 0 && want.mid.size > 0, `every view has rows (${want.cons.size} consensus, ${want.arb.size} arbitrage, ${want.ev.size} EV, ${want.mid.size} middles)`);
  t.equal(sameSets(t, got, want, 'hub'), 0, 'the view equals the recomputation');
});

t.test('analytics - float noise makes no arbitrage and no edge: a zero-margin line, a price at the fair odds', async (t) => {
  // 1/1.08 + 1/13.5 = 25/27 + 2/27 = 1 exactly, but the doubles sum to 0.9999999999999999: a zero-margin line, not an
  // arbitrage at 2.2e-14 %. Pinnacle 1.91 / 1.91 (-110 both ways) is fair at 0.5 a side under every method, but the
  // odds-ratio method's double is 0.5000000000000001: an even-money 2.00 is the fair price, not +EV at 2.2e-14 %.
  const { store, put, step } = moneylines();
  const now = 1_800_000_000_000;
  put('fanduel', 0, 1.08, 0); put('fanduel', 1, 5, 0);
  put('betmgm', 0, 1.05, 0); put('betmgm', 1, 13.5, 0);
  put('pinnacle', 0, 1.91, 1); put('pinnacle', 1, 1.91, 1);
  put('draftkings', 0, 2.0, 1); put('draftkings', 1, 1.8, 1);
  const first = step(now);
  t.equal(first.nArb, 0, 'no arbitrage record for the zero-margin line');
  t.equal(first.nEv, 0, 'no EV record for the price at the fair odds');
  const sets = scratch(store, now);
  t.equal(sets.arb.size, 0, 'from scratch: no arbitrage');
  t.equal(sets.ev.size, 0, 'from scratch: no +EV quote');
  // a cent either way is real: 1.09 / 13.5 is an arbitrage (S = 0.99152), 2.01 against 0.5 an edge of 0.5 %
  put('fanduel', 0, 1.09, 0);
  put('draftkings', 0, 2.01, 1);
  const second = step(now + 1);
  t.equal(second.nArb, 1, 'an arbitrage at 1.09 / 13.5');
  t.same(Array.from({ length: second.nEv }, (_, i) => second.ev[i * EVQ.STRIDE + EVQ.KIND]), [ROW.UPSERT], 'draftkings at 2.01 is +EV');
  const again = scratch(store, now + 1);
  t.equal(again.arb.size, 1, 'from scratch: the arbitrage');
  t.equal(again.ev.size, 1, 'from scratch: the +EV quote (against the one sharp)');
});
