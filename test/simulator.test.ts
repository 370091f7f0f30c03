import t from 'tap';
import { bookByKey, marketByKey, marketsForFamily, sportByKey } from '../engine/catalogue.js';
import { Prng } from '../engine/prng.js';
import { SIM_BOOKS, SIM_FUTURES_SPORTS, SIM_MARKETS, SIM_SPORTS, Simulator } from '../engine/simulator.js';
import type { EventInput, IngestBatch, PriceInput } from '../engine/types.js';

const T0 = Date.UTC(2025, 10, 20, 18, 0, 0);
const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;

const KIND = new Map(SIM_BOOKS.map((b) => [b.key, b.kind]));
const PROP_LEAGUES: Record<string, readonly string[]> = {
  basketball_nba: [
    'player_points', 'player_rebounds', 'player_assists', 'player_three_pointers', 'player_pts_rebs_asts',
  ],
  baseball_mlb: ['player_strikeouts', 'player_hits', 'player_total_bases', 'player_home_runs'],
  americanfootball_nfl: ['player_pass_yds', 'player_rush_yds', 'player_reception_yds', 'player_receptions'],
  icehockey_nhl: ['player_shots_on_goal', 'player_goals', 'player_points'],
};

/** One book's outcome set for (event, market, line, player): the spread's two sides share |point|. */
function setKey(p: PriceInput): string {
  const line = p.point === null || p.point === undefined ? '' : Math.abs(p.point);
  return `${p.book}|${p.event_id}|${p.market}|${line}|${p.player ?? ''}`;
}

function groupSets(prices: readonly PriceInput[]): Map<string, PriceInput[]> {
  const sets = new Map<string, PriceInput[]>();
  for (const p of prices) {
    const k = setKey(p);
    const s = sets.get(k);
    if (s === undefined) sets.set(k, [p]);
    else s.push(p);
  }
  return sets;
}

function overround(set: readonly PriceInput[]): number {
  let s = 0;
  for (const p of set) s += 1 / p.price;
  return s;
}

/** Steps from `from` every `stepMs`, `n` times, asking for `count` observations each time. */
function run(sim: Simulator, from: number, n: number, stepMs: number, count: number,
  visit: (batch: IngestBatch, now: number, i: number) => boolean | void): void {
  for (let i = 1; i <= n; i++) {
    const now = from + i * stepMs;
    if (visit(sim.step(now, count), now, i) === true) return;
  }
}

t.test('prng - deterministic, in range, v4-shaped ids', (t) => {
  const a = new Prng(7);
  const b = new Prng(7);
  const c = new Prng(8);
  const xs = Array.from({ length: 1000 }, () => a.next());
  t.same(Array.from({ length: 1000 }, () => b.next()), xs, 'same seed, same stream');
  t.not(c.next(), xs[0], 'another seed, another stream');
  t.ok(xs.every((x) => x >= 0 && x < 1), 'next() is in [0, 1)');
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  t.ok(Math.abs(mean - 0.5) < 0.05, `uniform mean near 0.5 (${mean})`);
  const ints = Array.from({ length: 1000 }, () => a.int(6));
  t.ok(ints.every((i) => Number.isInteger(i) && i >= 0 && i < 6), 'int(n) in [0, n)');
  const ns = Array.from({ length: 4000 }, () => a.normal());
  const nm = ns.reduce((s, x) => s + x, 0) / ns.length;
  const nv = ns.reduce((s, x) => s + (x - nm) ** 2, 0) / ns.length;
  t.ok(Math.abs(nm) < 0.1 && Math.abs(nv - 1) < 0.1, `normal() has mean 0, variance 1 (${nm}, ${nv})`);
  t.ok(['x', 'y', 'z'].includes(a.pick(['x', 'y', 'z'])), 'pick() returns an element');
  t.match(a.hexId(), /^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/, 'hexId() is 32 hex chars shaped like a v4 UUID');
  t.end();
});

t.test('simulator - same seed and same calls give identical output, another seed differs', (t) => {
  const calls: readonly (readonly [number, number])[] = [
    [T0 + SEC, 500], [T0 + 1250, 2000], [T0 + 1250, 300], [T0 + MIN, 100], [T0 + 2 * HOUR, 5000],
    [T0 + 2 * HOUR + 500, 50],
  ];
  const a = new Simulator({ seed: 42, now: T0 });
  const b = new Simulator({ seed: 42, now: T0 });
  t.ok(JSON.stringify(a.events()) === JSON.stringify(b.events()), 'same events at construction');
  t.ok(JSON.stringify(a.snapshot(T0)) === JSON.stringify(b.snapshot(T0)), 'same snapshot at construction');
  for (const [now, count] of calls) {
    const x = a.step(now, count);
    b.events();
    b.snapshot(now);
    const y = b.step(now, count);
    t.ok(JSON.stringify(x) === JSON.stringify(y),
      `step(${now - T0}, ${count}) identical (reads in between change nothing)`);
  }
  t.ok(JSON.stringify(a.snapshot(T0 + 3 * HOUR)) === JSON.stringify(b.snapshot(T0 + 3 * HOUR)),
    'snapshots still identical after the run');

  const c = new Simulator({ seed: 43, now: T0 });
  t.not(c.events()[0]!.id, a.events()[0]!.id, 'another seed, other event ids');
  const d = new Simulator({ seed: 42, now: T0 });
  const e = new Simulator({ seed: 43, now: T0 });
  t.ok(JSON.stringify(d.step(T0 + SEC, 1000).prices) !== JSON.stringify(e.step(T0 + SEC, 1000).prices),
    'another seed, other prices');
  t.end();
});

t.test('simulator - events and prices are well formed', (t) => {
  const sim = new Simulator({ seed: 1, now: T0 });
  const known = new Map<string, EventInput>();
  const problems: string[] = [];
  const checkEvent = (e: EventInput): void => {
    if (!/^[0-9a-f]{32}$/.test(e.id)) problems.push(`event id ${e.id}`);
    if (typeof e.commence_time !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(e.commence_time)) {
      problems.push(`commence_time ${String(e.commence_time)}`);
    }
    if (e.kind === 'futures') {
      if (e.home_team !== undefined || e.away_team !== undefined || !(typeof e.title === 'string' && e.title.length > 0)) problems.push(`futures ${e.id}`);
    } else if (e.home_team === e.away_team || e.home_team === '' || e.away_team === '') problems.push(`teams ${e.id}`);
    if (!SIM_SPORTS.includes(e.sport_key) && !(e.kind === 'futures' && SIM_FUTURES_SPORTS.includes(e.sport_key))) problems.push(`sport ${e.sport_key}`);
    known.set(e.id, e);
  };
  const checkPrice = (p: PriceInput, now: number): void => {
    if (!(Number.isFinite(p.price) && p.price > 1.01)) problems.push(`price ${p.price} ${setKey(p)}`);
    if (p.ts !== now) problems.push(`ts ${p.ts} != ${now}`);
    const ev = known.get(p.event_id);
    if (ev === undefined) {
      problems.push(`price for an unreported event ${p.event_id}`);
      return;
    }
    if (ev.status === 'final') problems.push(`price after final ${p.event_id}`);
    if (ev.kind === 'futures') {
      // a sportsbook names the team it quotes to win; a prediction market quotes the team's Yes and No contracts
      const pm = KIND.get(p.book) === 'prediction';
      if (p.market !== 'outrights' || p.point !== null) problems.push(`futures market ${setKey(p)}`);
      if (pm ? !(p.outcome === 'Yes' || p.outcome === 'No') || p.player === null : p.player !== null) problems.push(`futures outcome ${setKey(p)} ${p.outcome}`);
      return;
    }
    const isProp = p.market.startsWith('player_');
    if (isProp !== (p.player !== null)) problems.push(`player field ${setKey(p)}`);
    const moneyline = p.market === 'h2h' || p.market === 'h2h_3_way';
    if (moneyline !== (p.point === null)) problems.push(`point field ${setKey(p)}`);
    if (p.market === 'h2h' || p.market === 'spreads') {
      if (p.outcome !== ev.home_team && p.outcome !== ev.away_team) problems.push(`outcome ${p.outcome}`);
    } else if (p.market === 'h2h_3_way') {
      if (p.outcome !== ev.home_team && p.outcome !== ev.away_team && p.outcome !== 'Draw') {
        problems.push(`outcome ${p.outcome}`);
      }
    } else if (p.outcome !== 'Over' && p.outcome !== 'Under') {
      problems.push(`outcome ${p.outcome}`);
    }
    if (isProp && typeof p.point === 'number' && (p.point < 0 || (p.point * 2) % 2 !== 1)) {
      problems.push(`prop line ${p.point}`);
    }
  };
  const snap = sim.snapshot(T0);
  for (const e of snap.events) checkEvent(e);
  for (const p of snap.prices) checkPrice(p, T0);
  run(sim, T0, 240, 15 * SEC, 3000, (b, now) => {
    for (const e of b.events) checkEvent(e);
    for (const p of b.prices) checkPrice(p, now);
  });
  t.same(problems.slice(0, 10), [], 'no malformed event or price');

  const spreadSets = [...groupSets(sim.snapshot(T0 + HOUR).prices).values()].filter((s) => s[0]!.market === 'spreads');
  t.ok(spreadSets.length > 0, 'spreads are quoted');
  t.ok(spreadSets.every((s) => s.length === 2 && s[0]!.point === -s[1]!.point! && s[0]!.outcome !== s[1]!.outcome),
    'spread home point is minus the away point');
  t.end();
});

t.test('simulator - a three-way quote set always includes the Draw', (t) => {
  const sim = new Simulator({ seed: 2, now: T0 });
  let sets = 0;
  let broken = 0;
  const check = (prices: readonly PriceInput[]): void => {
    for (const set of groupSets(prices.filter((p) => p.market === 'h2h_3_way')).values()) {
      sets++;
      const names = new Set(set.map((p) => p.outcome));
      if (set.length !== 3 || names.size !== 3 || !names.has('Draw')) broken++;
    }
  };
  check(sim.snapshot(T0).prices);
  run(sim, T0, 600, 2 * SEC, 2000, (b) => check(b.prices));
  t.ok(sets > 1000, `many 3-way sets seen (${sets})`);
  t.equal(broken, 0, 'every 3-way set in every batch has home, Draw and away');
  const snap = sim.snapshot(T0 + 20 * MIN);
  const soccer = new Set(snap.events.filter((e) => e.sport_key.startsWith('soccer_')).map((e) => e.id));
  const moneylines = snap.prices.filter((p) => p.market === 'h2h' || p.market === 'h2h_3_way');
  t.ok(moneylines.every((p) => (p.market === 'h2h_3_way') === soccer.has(p.event_id)),
    'soccer uses h2h_3_way, other sports h2h');
  t.end();
});

t.test('simulator - sportsbook moneyline margins between 2 % and 9 %, pinnacle the tightest', (t) => {
  const sim = new Simulator({ seed: 3, now: T0 });
  run(sim, T0, 120, 5 * SEC, 3000, () => undefined);
  const byBook = new Map<string, number[]>();
  for (const set of groupSets(sim.snapshot(T0 + 10 * MIN).prices).values()) {
    const m = set[0]!.market;
    if (m !== 'h2h' && m !== 'h2h_3_way') continue;
    const book = set[0]!.book;
    const list = byBook.get(book) ?? [];
    list.push(overround(set));
    byBook.set(book, list);
  }
  const bad: string[] = [];
  for (const [book, list] of byBook) {
    const kind = KIND.get(book);
    for (const s of list) {
      if (kind === 'sportsbook' && !(s >= 1.02 && s <= 1.09)) bad.push(`${book} ${s}`);
      if (kind === 'exchange' && !(s >= 1.004 && s <= 1.03)) bad.push(`${book} ${s}`);
      if (kind === 'prediction' && !(s >= 1.005 && s <= 1.04)) bad.push(`${book} ${s}`);
    }
  }
  t.same(bad.slice(0, 10), [], 'every complete moneyline set has a book-typical overround');
  const mean = (book: string): number => {
    const list = byBook.get(book) ?? [];
    return list.reduce((a, b) => a + b, 0) / list.length;
  };
  t.ok(byBook.get('pinnacle')!.length > 20 && byBook.get('skybet')!.length > 10, 'pinnacle and skybet are quoted');
  t.ok(mean('pinnacle') < 1.03, `pinnacle's mean overround is about 2 % (${mean('pinnacle')})`);
  t.ok(mean('skybet') > mean('draftkings') && mean('draftkings') > mean('pinnacle'),
    'soft books carry more margin than pinnacle');
  const dfs = sim.snapshot(T0 + 10 * MIN).prices.filter((p) => KIND.get(p.book) === 'dfs');
  t.ok(dfs.length > 0 && dfs.every((p) => p.market.startsWith('player_') && p.price === dfs[0]!.price),
    'DFS books quote props only, at one fixed price');
  const pm = sim.snapshot(T0 + 10 * MIN).prices.filter((p) => KIND.get(p.book) === 'prediction');
  t.ok(pm.length > 0 && pm.every((p) => p.market.startsWith('h2h') || p.market === 'outrights'), 'prediction markets quote moneylines and futures only');
  t.ok(pm.every((p) => Math.abs(100 / p.price - Math.round(100 / p.price)) < 1e-9),
    'prediction-market prices are whole-cent contract prices');
  t.end();
});

t.test('simulator - events go live, end, and are replaced so every sport keeps 6 to 12 events', (t) => {
  const sim = new Simulator({ seed: 4, now: T0 });
  const initial = new Set(sim.events().map((e) => e.id));
  const seen = new Map<string, string[]>();
  const bad: string[] = [];
  const note = (e: EventInput): void => {
    const list = seen.get(e.id) ?? [];
    list.push(e.status ?? '');
    seen.set(e.id, list);
  };
  run(sim, T0, 12 * 60, MIN, 200, (b) => {
    for (const e of b.events) note(e);
    const perSport = new Map<string, number>();
    for (const e of sim.events()) perSport.set(e.sport_key, (perSport.get(e.sport_key) ?? 0) + 1);
    for (const s of SIM_SPORTS) {
      const n = perSport.get(s) ?? 0;
      if (n < 6 || n > 12) bad.push(`${s}: ${n}`);
    }
  });
  const histories = [...seen.values()].map((h) => h.join('>'));
  t.same(bad.slice(0, 5), [], 'every sport always has 6 to 12 events');
  t.ok(histories.some((h) => h.startsWith('upcoming>live')), 'an upcoming event went live');
  t.ok(histories.some((h) => h.startsWith('upcoming>live>final')), 'an event went through upcoming, live, final');
  t.ok(histories.filter((h) => h.endsWith('final')).length >= 10, 'events end');
  t.ok([...seen.keys()].some((id) => !initial.has(id)), 'new events appear');
  t.ok(histories.every((h) => !/final>|live>upcoming/.test(h)), 'status only moves forward');
  const live = new Set(sim.events().filter((e) => e.status === 'live').map((e) => e.id));
  t.ok(live.size > 0, 'some events are in play');
  const books = new Set(sim.snapshot(T0 + 12 * HOUR).prices.filter((p) => live.has(p.event_id)).map((p) => p.book));
  t.ok(books.has('pinnacle') && !books.has('prizepicks') && !books.has('kalshi'),
    'in play: sportsbooks keep quoting, DFS and prediction markets stop');
  t.end();
});

t.test('simulator - player props for NBA, MLB, NFL and NHL, with differing lines across books', (t) => {
  const sim = new Simulator({ seed: 5, now: T0 });
  const snap = sim.snapshot(T0);
  const sportOf = new Map(snap.events.map((e) => [e.id, e]));
  for (const [sport, markets] of Object.entries(PROP_LEAGUES)) {
    const props = snap.prices.filter((p) => sportOf.get(p.event_id)?.sport_key === sport && p.player !== null && p.market !== 'outrights');
    t.same([...new Set(props.map((p) => p.market))].sort(), [...markets].sort(), `${sport} carries its prop markets`);
  }
  const nonProp = snap.prices.filter((p) => p.player !== null && p.market !== 'outrights' && !(sportOf.get(p.event_id)!.sport_key in PROP_LEAGUES));
  t.equal(nonProp.length, 0, 'no props for sports without rosters');
  const lines = new Map<string, Set<number>>();
  for (const p of snap.prices) {
    if (p.player === null || p.outcome !== 'Over') continue;
    const k = `${p.event_id}|${p.market}|${p.player}`;
    const s = lines.get(k) ?? new Set<number>();
    s.add(p.point!);
    lines.set(k, s);
  }
  t.ok([...lines.values()].some((s) => s.size > 1), 'some books hang a different line on the same player prop');
  const sets = [...groupSets(snap.prices).values()].filter((s) => s[0]!.player !== null);
  t.ok(sets.every((s) => s.length === 2 && s[0]!.point === s[1]!.point), 'each prop set is Over and Under on one line');
  t.end();
});

t.test('simulator - staleness after a move opens a cross-book moneyline arbitrage within a simulated hour', (t) => {
  const sim = new Simulator({ seed: 6, now: T0 });
  const status = new Map<string, string>();
  /** event|market -> book -> outcome -> price */
  const board = new Map<string, Map<string, Map<string, number>>>();
  const apply = (p: PriceInput): void => {
    if (p.market !== 'h2h' && p.market !== 'h2h_3_way') return;
    const k = `${p.event_id}|${p.market}`;
    let books = board.get(k);
    if (books === undefined) board.set(k, (books = new Map()));
    let outcomes = books.get(p.book);
    if (outcomes === undefined) books.set(p.book, (outcomes = new Map()));
    outcomes.set(p.outcome, p.price);
  };
  const crossed = (k: string): string | null => {
    const best = new Map<string, [number, string]>();
    for (const [book, outcomes] of board.get(k)!) {
      for (const [o, price] of outcomes) {
        const b = best.get(o);
        if (b === undefined || price > b[0]) best.set(o, [price, book]);
      }
    }
    let s = 0;
    for (const [price] of best.values()) s += 1 / price;
    return s < 1 ? `${k} sum ${s.toFixed(4)} via ${[...best.values()].map((b) => b[1]).join(',')}` : null;
  };
  const snap = sim.snapshot(T0);
  for (const e of snap.events) status.set(e.id, e.status ?? '');
  for (const p of snap.prices) apply(p);
  t.same([...board.keys()].map(crossed).filter((x) => x !== null), [],
    'no arbitrage at construction, when every book shares one view');

  let inPlay: string | null = null;
  let preMatch: string | null = null;
  run(sim, T0, 3600, SEC, 2000, (b) => {
    for (const e of b.events) {
      status.set(e.id, e.status ?? '');
      if (e.status === 'final') {
        board.delete(`${e.id}|h2h`);
        board.delete(`${e.id}|h2h_3_way`);
      }
    }
    const touched = new Set<string>();
    for (const p of b.prices) {
      apply(p);
      if (p.market === 'h2h' || p.market === 'h2h_3_way') touched.add(`${p.event_id}|${p.market}`);
    }
    for (const k of touched) {
      if (!board.has(k)) continue;
      const arb = crossed(k);
      if (arb === null) continue;
      if (status.get(k.split('|')[0]!) === 'upcoming') preMatch ??= arb;
      else inPlay ??= arb;
    }
    return preMatch !== null && inPlay !== null;
  });
  t.ok(preMatch !== null, `a pre-match steam move crosses a fast and a lagging book (${String(preMatch)})`);
  t.ok(inPlay !== null, `in play, best prices cross too (${String(inPlay)})`);
  t.end();
});

t.test('simulator - unchanged refreshes are reported as no-change verifications', (t) => {
  const sim = new Simulator({ seed: 7, now: T0 });
  const last = new Map<string, number>();
  let repeats = 0;
  let changes = 0;
  run(sim, T0, 300, SEC, 2000, (b) => {
    for (const p of b.prices) {
      const k = `${setKey(p)}|${p.outcome}|${p.point}`;
      const prev = last.get(k);
      if (prev === p.price) repeats++;
      else if (prev !== undefined) changes++;
      last.set(k, p.price);
    }
  });
  t.ok(repeats > 1000, `identical repeated observations occur (${repeats})`);
  t.ok(changes > 1000, `and so do price changes (${changes})`);
  t.end();
});

t.test('simulator - prices are the doubles nearest to what each book quotes: +122 is 2.22, not 2.2199999999999998', (t) => {
  // the rounding each simulated book applies (engine/simulator.ts BOOK_ROWS); a price built as 1 + 122 / 100 is one
  // unit in the last place below 2.22 and is served as 2.2199999999999998
  const american = new Set(['draftkings', 'fanduel', 'betmgm', 'williamhill_us', 'espnbet', 'betrivers', 'fanatics', 'bovada',
    'betonlineag', 'lowvig']);
  const cents = new Set(['kalshi', 'polymarket']);
  const sim = new Simulator({ seed: 3, now: T0 });
  const bad: string[] = [];
  let checked = 0;
  const check = (p: PriceInput): void => {
    const d = p.price;
    let want: number;
    if (american.has(p.book)) {
      if (d >= 2) want = Math.round(d * 100) / 100;
      else {
        const x = Math.round(100 / (d - 1));
        want = (x + 100) / x;
      }
    } else if (cents.has(p.book)) want = 100 / Math.round(100 / d);
    else if (KIND.get(p.book) === 'dfs') want = Math.sqrt(3);
    else want = Math.round(d * 1000) / 1000;
    checked++;
    if (d !== want && bad.length < 5) bad.push(`${p.book} ${d} (want ${want})`);
  };
  for (const p of sim.snapshot(T0).prices) check(p);
  run(sim, T0, 60, 15 * SEC, 3000, (b) => { for (const p of b.prices) check(p); });
  t.ok(checked > 10_000, `prices checked (${checked})`);
  t.same(bad, [], 'every price is the nearest double to the quoted decimal, American or cents price');
  t.end();
});

t.test('simulator - the count budget is honoured within 10 %', (t) => {
  const sim = new Simulator({ seed: 8, now: T0 });
  let now = T0;
  const calls = [[100, 50], [100, 500], [1000, 5000], [10 * SEC, 100], [HOUR, 1000], [200, 100_000], [1, 20_000]] as const;
  for (const [dt, count] of calls) {
    now += dt;
    const n = sim.step(now, count).prices.length;
    t.ok(n >= count * 0.9 && n <= count * 1.1, `step(+${dt} ms, ${count}) gave ${n}`);
  }
  t.equal(sim.step(now + SEC, 0).prices.length, 0, 'a zero budget gives no prices');
  const t0 = performance.now();
  const big = sim.step(now + 2 * SEC, 100_000).prices.length;
  const ms = performance.now() - t0;
  t.comment(`100k-observation step: ${ms.toFixed(1)} ms (${Math.round(big / ms * 1000)} observations/s)`);
  t.end();
});

t.test('simulator - every emitted sport, book and market key exists in the catalogue', (t) => {
  const sim = new Simulator({ seed: 9, now: T0 });
  const sports = new Map<string, string>();
  const books = new Set<string>();
  const pairs = new Set<string>();
  const collect = (b: IngestBatch): void => {
    for (const e of b.events) sports.set(e.id, e.sport_key);
    for (const p of b.prices) {
      books.add(p.book);
      pairs.add(`${sports.get(p.event_id)}|${p.market}`);
    }
  };
  collect(sim.snapshot(T0));
  run(sim, T0, 60, MIN, 3000, collect);
  t.same([...new Set(sports.values())].sort(), [...new Set([...SIM_SPORTS, ...SIM_FUTURES_SPORTS])].sort(), 'every simulated sport is emitted, and the futures sports');
  t.same([...books].sort(), SIM_BOOKS.map((b) => b.key).sort(), 'every simulated book is emitted');
  for (const s of SIM_SPORTS) t.ok(sportByKey(s), `sport ${s} is in the catalogue`);
  for (const m of SIM_MARKETS) t.ok(marketByKey(m), `market ${m} is in the catalogue`);
  for (const b of SIM_BOOKS) {
    const def = bookByKey(b.key);
    t.ok(def !== undefined && def.status === 'active', `book ${b.key} is an active catalogue book`);
    t.equal(def?.kind, b.kind, `book ${b.key} has the catalogue's kind`);
  }
  for (const pair of pairs) {
    const [sport, market] = pair.split('|') as [string, string];
    const def = sportByKey(sport);
    t.ok(def !== undefined && marketsForFamily(def.family).some((m) => m.key === market),
      `${market} is a catalogue market of ${sport}`);
    if (def !== undefined && market.startsWith('h2h')) {
      t.equal(market === 'h2h_3_way', def.three_way, `${sport} moneyline shape matches the catalogue`);
    }
  }
  const dfsPrice = sim.snapshot(T0 + HOUR).prices.find((p) => p.book === 'prizepicks')?.price;
  t.equal(dfsPrice, Math.sqrt(bookByKey('prizepicks')!.dfs_two_leg_payout),
    'the DFS leg price is the square root of the catalogue 2-leg payout');
  t.end();
});

t.test('simulator - a season-long futures board per team league: sportsbooks quote every team to win, prediction markets Yes and No', (t) => {
  const sim = new Simulator({ seed: 10, now: T0 });
  const snap = sim.snapshot(T0);
  const futures = snap.events.filter((e) => e.kind === 'futures');
  t.same(futures.map((e) => e.sport_key).sort(),
    ['americanfootball_nfl_super_bowl_winner', 'baseball_mlb_world_series_winner', 'basketball_nba_championship_winner', 'icehockey_nhl_championship_winner',
      'soccer_epl', 'soccer_spain_la_liga'], 'one board per team league, under The Odds API\'s futures sport where the catalogue has one');
  const nba = futures.find((e) => e.sport_key === 'basketball_nba_championship_winner')!;
  // T0 is in November 2025: the 2025-26 season
  t.same([nba.title, nba.home_team, nba.away_team], ['NBA Championship 2025-26', undefined, undefined], 'named by its title, no teams');
  t.ok(Date.parse(nba.commence_time as string) > T0 + 100 * 24 * HOUR, 'settled months ahead');
  const board = snap.prices.filter((p) => p.event_id === nba.id);
  const books = new Map<string, PriceInput[]>();
  for (const p of board) books.set(p.book, [...(books.get(p.book) ?? []), p]);
  const sportsbooks = [...books.entries()].filter(([b]) => KIND.get(b) === 'sportsbook');
  t.ok(sportsbooks.length >= 10, `sportsbooks quote it (${sportsbooks.length})`);
  const bad: string[] = [];
  for (const [book, quotes] of sportsbooks) {
    if (quotes.length !== 30 || new Set(quotes.map((q) => q.outcome)).size !== 30) bad.push(`${book}: ${quotes.length} teams`);
    // a futures book: 15 to 30 % over the field (8 % plus three times its game margin, a bias and rounding)
    const over = quotes.reduce((s, q) => s + 1 / q.price, 0);
    if (!(over > 1.1 && over < 1.45)) bad.push(`${book}: overround ${over}`);
  }
  t.same(bad, [], 'every sportsbook quotes all 30 teams with a futures overround');
  const pm = board.filter((p) => KIND.get(p.book) === 'prediction');
  t.ok(pm.length > 0, 'prediction markets quote it');
  const pair = new Map<string, number>();
  for (const p of pm) pair.set(`${p.book}|${p.player}`, (pair.get(`${p.book}|${p.player}`) ?? 0) + 1 / p.price);
  t.ok([...pair.values()].every((s) => s >= 1 - 1e-9 && s < 1.05), 'a venue\'s Yes and No sum to 1 or a little more (whole cents)');
  // no cross-book arbitrage while the books share a view: the best Yes anywhere and the best No anywhere cost 1 or more
  const cheapest = new Map<string, { yes: number; no: number }>();
  for (const p of board) {
    const team = p.player ?? p.outcome;
    const c = cheapest.get(team) ?? { yes: Infinity, no: Infinity };
    if (p.outcome === 'No') c.no = Math.min(c.no, 1 / p.price);
    else c.yes = Math.min(c.yes, 1 / p.price);
    cheapest.set(team, c);
  }
  t.ok([...cheapest.values()].every((c) => c.no === Infinity || c.yes + c.no >= 1), 'the best Yes and the best No never cross at one instant');
  // the chances move: within two simulated hours, prices of every board changed, though the games' due quotes alone
  // would take the whole budget (the boards share a tenth of it in turn)
  const first = new Map(snap.prices.map((p) => [`${p.event_id}|${p.book}|${p.outcome}|${p.player}`, p.price]));
  const moved = new Map<string, number>();
  run(sim, T0, 120, MIN, 500, (b) => {
    for (const p of b.prices) {
      if (first.has(`${p.event_id}|${p.book}|${p.outcome}|${p.player}`) && first.get(`${p.event_id}|${p.book}|${p.outcome}|${p.player}`) !== p.price) {
        moved.set(p.event_id, (moved.get(p.event_id) ?? 0) + 1);
      }
    }
  });
  const counts = futures.map((e) => moved.get(e.id) ?? 0);
  t.ok(counts.every((n) => n > 10), `every board moves (changed prices in two hours: ${counts.join(', ')})`);
  t.end();
});
