import t from 'tap';
import { LD, MAX_OUTCOMES, PriceStore, findTuple } from '../engine/price-store.js';
import { ReadModel } from '../engine/read-model.js';
import { CHANGE, CHG, OBS, RESTORE, RecordBuffer } from '../engine/records.js';
import { uniform as mulberry32 } from '../engine/prng.js';

// ---------------------------------------------------------------------------------------------------------------
// Helpers

interface Rec {
  kind: number;
  event: number;
  market: number;
  point: number;
  player: number;
  outcome: number;
  book: number;
  price: number;
  changedAt: number;
  verifiedAt: number;
}

const KIND_NAME: Record<number, string> = { 1: 'NEW', 2: 'PRICE', 3: 'VERIFIED', 4: 'REMOVED' };

/** Decodes (and drains) a change buffer with the CHG offsets. */
function drain(out: RecordBuffer): Rec[] {
  const n = out.length;
  const d = out.take();
  const recs: Rec[] = [];
  for (let i = 0; i < n; i++) {
    const off = i * CHG.STRIDE;
    recs.push({
      kind: d[off + CHG.KIND],
      event: d[off + CHG.EVENT],
      market: d[off + CHG.MARKET],
      point: d[off + CHG.POINT],
      player: d[off + CHG.PLAYER],
      outcome: d[off + CHG.OUTCOME],
      book: d[off + CHG.BOOK],
      price: d[off + CHG.PRICE],
      changedAt: d[off + CHG.LINE_CHANGED_AT],
      verifiedAt: d[off + CHG.VERIFIED_AT],
    });
  }
  return recs;
}

interface Obs {
  event: number;
  market: number;
  point: number;
  player: number;
  outcome: number;
  book: number;
  price: number;
  ts: number;
}

/** Applies observations through the batch entry point (OBS layout), as a shard does. */
function applyObs(store: PriceStore, out: RecordBuffer, list: Obs[]): number {
  const a = new Float64Array(list.length * OBS.STRIDE);
  list.forEach((o, i) => {
    const off = i * OBS.STRIDE;
    a[off + OBS.EVENT] = o.event;
    a[off + OBS.MARKET] = o.market;
    a[off + OBS.POINT] = o.point;
    a[off + OBS.PLAYER] = o.player;
    a[off + OBS.OUTCOME] = o.outcome;
    a[off + OBS.BOOK] = o.book;
    a[off + OBS.PRICE] = o.price;
    a[off + OBS.TS] = o.ts;
  });
  return store.apply(a, list.length, out);
}

const NaN_ = Number.NaN;
/** A moneyline observation (no point, no player): event 1, market 0. */
function ml(book: number, outcome: number, price: number, ts: number, event = 1): Obs {
  return { event, market: 0, point: NaN_, player: -1, outcome, book, price, ts };
}
/** A spread observation: event 1, market 2 at `point`. */
function spread(book: number, point: number, outcome: number, price: number, ts: number): Obs {
  return { event: 1, market: 2, point, player: -1, outcome, book, price, ts };
}

function sameNum(a: number, b: number): boolean {
  return a === b || (a !== a && b !== b);
}

// ---------------------------------------------------------------------------------------------------------------
// Change records

t.test('price store - a first observation is a NEW quote with every field in its change record', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  const applied = applyObs(store, out, [{ event: 7, market: 3, point: 215.5, player: 42, outcome: 1, book: 9, price: 1.87, ts: 1000 }]);
  t.equal(applied, 1, 'one observation applied');
  t.same(drain(out), [{
    kind: CHANGE.NEW, event: 7, market: 3, point: 215.5, player: 42, outcome: 1, book: 9, price: 1.87, changedAt: 1000, verifiedAt: 1000,
  }], 'NEW record carries event, market, point, player, outcome, book, price, line_changed_at and verified_at');
  t.same(store.quote(7, 3, 215.5, 42, 1, 9), { price: 1.87, lineChangedAt: 1000, verifiedAt: 1000, lastUpdate: 1000 }, 'quote readable');
  t.equal(store.quoteCount, 1, 'one live quote');
});

t.test('price store - a quote without point or player carries NaN and -1', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [ml(4, 0, 2.1, 500)]);
  const [r] = drain(out);
  t.ok(Number.isNaN(r.point), 'point is NaN for a moneyline');
  t.equal(r.player, -1, 'player is -1 when none');
  t.equal(r.kind, CHANGE.NEW, 'NEW');
});

t.test('price store - repeated identical price is a verification, not a change', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [ml(3, 0, 1.95, 1000)]);
  drain(out);
  t.equal(applyObs(store, out, [ml(3, 0, 1.95, 4000)]), 1, 'the repeat counts as applied');
  t.same(drain(out), [{
    kind: CHANGE.VERIFIED, event: 1, market: 0, point: NaN_, player: -1, outcome: 0, book: 3, price: 1.95, changedAt: 1000, verifiedAt: 4000,
  }], 'VERIFIED record: verified_at moved to 4000, line_changed_at stays 1000');
  const q = store.quote(1, 0, NaN_, -1, 0, 3)!;
  t.equal(q.lineChangedAt, 1000, 'line_changed_at did not move');
  t.equal(q.verifiedAt, 4000, 'verified_at moved');
  t.equal(q.lastUpdate, 4000, 'last_update = max(line_changed_at, verified_at)');
  t.equal(store.quoteCount, 1, 'still one quote');
});

t.test('price store - a new price is a PRICE change and moves both timestamps', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [ml(3, 1, 1.95, 1000), ml(3, 1, 1.95, 2000)]);
  drain(out);
  applyObs(store, out, [ml(3, 1, 2.05, 3000)]);
  t.same(drain(out), [{
    kind: CHANGE.PRICE, event: 1, market: 0, point: NaN_, player: -1, outcome: 1, book: 3, price: 2.05, changedAt: 3000, verifiedAt: 3000,
  }], 'PRICE record with the new price and both timestamps at 3000');
  t.same(store.quote(1, 0, NaN_, -1, 1, 3), { price: 2.05, lineChangedAt: 3000, verifiedAt: 3000, lastUpdate: 3000 }, 'quote updated');
});

t.test('price store - an observation at the same ts with a new price is a change, with the same price a verification', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [ml(1, 0, 2.0, 1000)]);
  drain(out);
  applyObs(store, out, [ml(1, 0, 2.0, 1000), ml(1, 0, 2.2, 1000)]);
  t.same(drain(out).map((r) => KIND_NAME[r.kind]), ['VERIFIED', 'PRICE'], 'equal ts is not stale');
  t.equal(store.staleIgnored, 0, 'nothing stale');
});

t.test('price store - REMOVED records carry the last state of the quote', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [spread(5, -3.5, 0, 1.91, 100), spread(5, -3.5, 0, 1.91, 200)]);
  drain(out);
  t.equal(store.removeEvent(1, out), 1, 'one quote removed');
  t.same(drain(out), [{
    kind: CHANGE.REMOVED, event: 1, market: 2, point: -3.5, player: -1, outcome: 0, book: 5, price: 1.91, changedAt: 100, verifiedAt: 200,
  }], 'REMOVED record with the price and timestamps the quote had');
});

// ---------------------------------------------------------------------------------------------------------------
// Ladders

t.test('price store - ladders are best-first: higher decimal first', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [ml(1, 0, 1.90, 100), ml(2, 0, 2.10, 101), ml(3, 0, 1.80, 102), ml(4, 0, 2.00, 103)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 0), [2, 4, 1, 3], '2.10, 2.00, 1.90, 1.80');
  t.same(store.ladderBooks(1, 0, NaN_, -1, 1), [], 'the other outcome has its own (empty) ladder');
});

t.test('price store - ladder ties: earlier line_changed_at first, then lower book id', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [ml(9, 0, 2.0, 300), ml(7, 0, 2.0, 100), ml(5, 0, 2.0, 100), ml(2, 0, 2.0, 200)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 0), [5, 7, 2, 9], 'at 2.0: ts 100 (book 5 before book 7, whatever the arrival order), then 200, then 300');
  // a verification does not change line_changed_at, so it does not lose its place
  applyObs(store, out, [ml(5, 0, 2.0, 1000)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 0), [5, 7, 2, 9], 'a verification keeps its time priority');
  // a book reposting the same price after a move away loses its time priority
  applyObs(store, out, [ml(5, 0, 1.5, 1100), ml(5, 0, 2.0, 1200)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 0), [7, 2, 9, 5], 'book 5 back at 2.0 with a later line_changed_at goes behind');
});

t.test('price store - ladders re-sort when a price moves up or down', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [ml(1, 1, 1.70, 10), ml(2, 1, 1.80, 10), ml(3, 1, 1.90, 10), ml(4, 1, 2.00, 10), ml(5, 1, 2.10, 10)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 1), [5, 4, 3, 2, 1], 'initial order');
  applyObs(store, out, [ml(1, 1, 2.50, 20)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 1), [1, 5, 4, 3, 2], 'bottom to top');
  applyObs(store, out, [ml(1, 1, 1.50, 30)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 1), [5, 4, 3, 2, 1], 'top to bottom');
  applyObs(store, out, [ml(4, 1, 1.85, 40)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 1), [5, 3, 4, 2, 1], 'middle down one place');
  applyObs(store, out, [ml(2, 1, 1.95, 50)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 1), [5, 2, 3, 4, 1], 'middle up two places');
  applyObs(store, out, [ml(3, 1, 2.10, 60)]);
  t.same(store.ladderBooks(1, 0, NaN_, -1, 1), [5, 3, 2, 4, 1], 'ties the top price but posted later: second');
});

t.test('price store - a quote displaced by other quotes moving past it and leaving above it is still found', async (t) => {
  // each quote's record keeps where its tuple was when it last moved itself, not where others' moves pushed it
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  const books = [1, 2, 3, 4, 5, 6, 7, 8];
  applyObs(store, out, books.map((b) => spread(b, -3.5, 0, 1.7 + b / 100, 10)));
  t.same(store.ladderBooks(1, 2, -3.5, -1, 0), [8, 7, 6, 5, 4, 3, 2, 1], 'initial order');
  // books 2 to 5 jump above everyone: book 1 stays last, every other tuple shifts
  applyObs(store, out, [spread(2, -3.5, 0, 2.2, 20), spread(3, -3.5, 0, 2.3, 20), spread(4, -3.5, 0, 2.4, 20), spread(5, -3.5, 0, 2.5, 20)]);
  t.same(store.ladderBooks(1, 2, -3.5, -1, 0), [5, 4, 3, 2, 8, 7, 6, 1], 'four moved up past four');
  // book 5 (the top) moves to another line: everything below moves up one place
  applyObs(store, out, [spread(5, -4.5, 0, 2.5, 30)]);
  t.same(store.ladderBooks(1, 2, -3.5, -1, 0), [4, 3, 2, 8, 7, 6, 1], 'top removed');
  drain(out);
  // book 7, displaced twice, moves to the top; book 6 goes down past book 1
  applyObs(store, out, [spread(7, -3.5, 0, 3.0, 40), spread(6, -3.5, 0, 1.5, 40)]);
  t.same(store.ladderBooks(1, 2, -3.5, -1, 0), [7, 4, 3, 2, 8, 1, 6], 'displaced quotes moved');
  t.same(drain(out).map((r) => [KIND_NAME[r.kind], r.book, r.price]), [['PRICE', 7, 3.0], ['PRICE', 6, 1.5]], 'their records');
  // book 8 leaves the line: the tuple found is its own, and the rest keep their order
  applyObs(store, out, [spread(8, -5.5, 0, 1.9, 50)]);
  t.same(store.ladderBooks(1, 2, -3.5, -1, 0), [7, 4, 3, 2, 1, 6], 'displaced quote removed');
  t.same(drain(out).filter((r) => r.kind === CHANGE.REMOVED).map((r) => [r.book, r.point, r.price]), [[8, -3.5, 1.7 + 8 / 100]], 'its REMOVED record: the last price it held there');
  let line = -1;
  for (let l = 0; l < store.lineIdLimit; l++) if (store.lineLive(l) && store.linePoint(l) === -3.5) line = l;
  const ladder = store.ladder(line, 0);
  t.equal(ladder.length / LD.STRIDE, 6, 'the line of -3.5');
  for (let k = 0; k < ladder.length; k += LD.STRIDE) t.equal(store.tupleOf(ladder[k + LD.SLOT]), k, `tupleOf finds place ${k / LD.STRIDE}`);
});

t.test('price store - findTuple searches outwards from a stale hint', async (t) => {
  // four tuples with slots 10, 11, 12, 13
  const l: number[] = [];
  for (let s = 10; s < 14; s++) l.push(2, 0, 0, s, 2, 0);
  t.equal(findTuple(l, 12, 2 * LD.STRIDE), 2 * LD.STRIDE, 'exact hint');
  t.equal(findTuple(l, 10, 3 * LD.STRIDE), 0, 'three places below');
  t.equal(findTuple(l, 13, 0), 3 * LD.STRIDE, 'three places above');
  t.equal(findTuple(l, 13, 9 * LD.STRIDE), 3 * LD.STRIDE, 'hint past the end (tuples above it left)');
  t.throws(() => findTuple(l, 99, 0), /not in its ladder/, 'a slot that is not there is an error, not a wrong tuple');
  t.throws(() => findTuple([], 10, 0), /not in its ladder/, 'an empty ladder');
});

// ---------------------------------------------------------------------------------------------------------------
// Staleness

t.test('price store - stale observations are ignored, counted and emit nothing', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [ml(1, 0, 2.0, 1000), ml(1, 0, 2.0, 2000)]);
  drain(out);
  const applied = applyObs(store, out, [ml(1, 0, 2.5, 999), ml(1, 0, 2.0, 1500), ml(1, 0, 3.0, 1999)]);
  t.equal(applied, 0, 'none applied');
  t.equal(store.staleIgnored, 3, 'three counted in staleIgnored (older than line_changed_at, or than verified_at)');
  t.same(drain(out), [], 'no change record');
  t.same(store.quote(1, 0, NaN_, -1, 0, 1), { price: 2.0, lineChangedAt: 1000, verifiedAt: 2000, lastUpdate: 2000 }, 'quote untouched');
  t.equal(applyObs(store, out, [ml(1, 0, 2.0, 2000)]), 1, 'an observation at the quote ts is not stale');
});

// ---------------------------------------------------------------------------------------------------------------
// Line moves

t.test('price store - a book quoting a new point moves: its old quotes are REMOVED', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [
    spread(1, -3.5, 0, 1.91, 100), spread(1, -3.5, 1, 1.91, 100),
    spread(2, -3.5, 0, 1.95, 100), spread(2, -3.5, 1, 1.87, 100),
  ]);
  drain(out);
  applyObs(store, out, [spread(1, -4, 0, 1.98, 200)]);
  t.same(drain(out), [
    { kind: CHANGE.REMOVED, event: 1, market: 2, point: -3.5, player: -1, outcome: 0, book: 1, price: 1.91, changedAt: 100, verifiedAt: 100 },
    { kind: CHANGE.REMOVED, event: 1, market: 2, point: -3.5, player: -1, outcome: 1, book: 1, price: 1.91, changedAt: 100, verifiedAt: 100 },
    { kind: CHANGE.NEW, event: 1, market: 2, point: -4, player: -1, outcome: 0, book: 1, price: 1.98, changedAt: 200, verifiedAt: 200 },
  ], 'both old quotes REMOVED, then the NEW quote on the new line');
  t.same(store.ladderBooks(1, 2, -3.5, -1, 0), [2], 'book 2 stays on the old line (home)');
  t.same(store.ladderBooks(1, 2, -3.5, -1, 1), [2], 'book 2 stays on the old line (away)');
  t.same(store.ladderBooks(1, 2, -4, -1, 0), [1], 'book 1 on the new line');
  t.equal(store.quote(1, 2, -3.5, -1, 0, 1), null, 'book 1 has no quote on the old line');
  t.equal(store.quoteCount, 3, 'three live quotes');
  t.equal(store.group(1, 2, -1)!.bookLine.get(1)!.point, -4, 'book 1 current line is -4');
  t.equal(store.group(1, 2, -1)!.bookLine.get(2)!.point, -3.5, 'book 2 current line is -3.5');
  t.same([...store.group(1, 2, -1)!.lines.values()].map((l) => l.point).sort(), [-3.5, -4].sort(), 'two lines');

  applyObs(store, out, [spread(2, -4, 0, 1.90, 300)]);
  t.same(drain(out).map((r) => [KIND_NAME[r.kind], r.point, r.outcome, r.book]), [
    ['REMOVED', -3.5, 0, 2], ['REMOVED', -3.5, 1, 2], ['NEW', -4, 0, 2],
  ], 'book 2 follows');
  t.equal(store.line(1, 2, -3.5, -1), undefined, 'the old line disappears once empty');
  t.same([...store.group(1, 2, -1)!.lines.keys()].length, 1, 'one line left');
  t.same(store.ladderBooks(1, 2, -4, -1, 0), [1, 2], '1.98 before 1.90 on the new line');
});

t.test('price store - line moves are per (event, market, player)', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [
    { event: 1, market: 5, point: 24.5, player: 10, outcome: 0, book: 1, price: 1.9, ts: 100 },
    { event: 1, market: 5, point: 7.5, player: 11, outcome: 0, book: 1, price: 1.9, ts: 100 },
    { event: 1, market: 3, point: 220.5, player: -1, outcome: 0, book: 1, price: 1.9, ts: 100 },
    { event: 2, market: 5, point: 24.5, player: 10, outcome: 0, book: 1, price: 1.9, ts: 100 },
  ]);
  drain(out);
  applyObs(store, out, [{ event: 1, market: 5, point: 25.5, player: 10, outcome: 0, book: 1, price: 1.9, ts: 200 }]);
  t.same(drain(out).map((r) => [KIND_NAME[r.kind], r.event, r.market, r.point, r.player]), [
    ['REMOVED', 1, 5, 24.5, 10], ['NEW', 1, 5, 25.5, 10],
  ], 'only the same player on the same market and event moved');
  t.equal(store.quoteCount, 4, 'other players, markets and events untouched');
});

t.test('price store - an older observation at a new point does not move the book', async (t) => {
  const store = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  applyObs(store, out, [spread(1, -3.5, 0, 1.91, 100), spread(1, -3.5, 1, 1.91, 500)]);
  drain(out);
  t.equal(applyObs(store, out, [spread(1, -4, 0, 1.98, 400)]), 0, 'older than the book\'s newest quote on its line: not applied');
  t.same(drain(out), [], 'nothing emitted');
  t.equal(store.staleIgnored, 1, 'counted as stale');
  t.equal(store.line(1, 2, -4, -1), undefined, 'no new line created');
  t.equal(store.group(1, 2, -1)!.bookLine.get(1)!.point, -3.5, 'book still on -3.5');
  t.equal(store.quoteCount, 2, 'both quotes kept');
  t.equal(applyObs(store, out, [spread(1, -4, 0, 1.98, 500)]), 1, 'at the newest ts it moves');
  t.same(drain(out).map((r) => KIND_NAME[r.kind]), ['REMOVED', 'REMOVED', 'NEW'], 'moved');
});

// ---------------------------------------------------------------------------------------------------------------
// Removal, restore, growth

t.test('price store - removeEvent emits REMOVED for every quote and frees the slots', async (t) => {
  const store = new PriceStore(64);
  const out = new RecordBuffer(CHG.STRIDE);
  const obs: Obs[] = [];
  for (let b = 0; b < 6; b++) {
    for (let o = 0; o < 3; o++) obs.push({ event: 3, market: 1, point: NaN_, player: -1, outcome: o, book: b, price: 2 + b + o / 10, ts: 10 });
    for (let o = 0; o < 2; o++) obs.push({ event: 3, market: 3, point: 2.5, player: -1, outcome: o, book: b, price: 1.9, ts: 10 });
    obs.push({ event: 4, market: 0, point: NaN_, player: -1, outcome: 0, book: b, price: 1.5, ts: 10 });
  }
  applyObs(store, out, obs);
  drain(out);
  t.equal(store.quoteCount, 36, '36 quotes (30 on event 3, 6 on event 4)');
  const capacity = store.capacity;

  t.equal(store.removeEvent(3, out), 30, 'removeEvent returns 30');
  const recs = drain(out);
  t.equal(recs.length, 30, '30 records');
  t.ok(recs.every((r) => r.kind === CHANGE.REMOVED && r.event === 3), 'all REMOVED, all event 3');
  const keys = new Set(recs.map((r) => `${r.market}|${r.outcome}|${r.book}`));
  t.equal(keys.size, 30, 'one record per quote');
  const r0 = recs.find((r) => r.market === 1 && r.outcome === 2 && r.book === 4)!;
  t.same(r0, { kind: CHANGE.REMOVED, event: 3, market: 1, point: NaN_, player: -1, outcome: 2, book: 4, price: 6.2, changedAt: 10, verifiedAt: 10 },
    'REMOVED carries the quote');
  t.equal(store.quoteCount, 6, 'event 4 untouched');
  t.equal(store.line(3, 1, NaN_, -1), undefined, 'event 3 lines gone');
  t.same(store.ladderBooks(4, 0, NaN_, -1, 0), [0, 1, 2, 3, 4, 5], 'event 4 ladder intact');
  t.equal(store.removeEvent(3, out), 0, 'removing again is a no-op');
  t.equal(drain(out).length, 0, 'and emits nothing');

  t.equal(store.removeEvent(4, out), 6, 'event 4 removed');
  drain(out);
  t.equal(store.quoteCount, 0, 'quoteCount back to 0');
  t.equal(store.eventCount, 0, 'no events');

  for (let round = 0; round < 3; round++) {
    applyObs(store, out, obs.map((o) => ({ ...o, ts: 100 + round })));
    const again = drain(out);
    t.equal(again.length, 36, `round ${round}: 36 NEW records on re-insert`);
    t.ok(again.every((r) => r.kind === CHANGE.NEW), `round ${round}: all NEW (nothing left over from before)`);
    t.equal(store.capacity, capacity, `round ${round}: capacity did not grow: freed slots were reused`);
    store.removeEvent(3, out);
    store.removeEvent(4, out);
    drain(out);
  }
});

t.test('price store - dropBefore removes the quotes last observed before a time; emptied book-lines and events go', async (t) => {
  const store = new PriceStore(64);
  const out = new RecordBuffer(CHG.STRIDE);
  // event 5: book 0 quoted both sides at 10; book 1 at 10, then its side 0 verified at 30; book 2 at 40.
  // event 6: book 0 at 10 (another game, untouched)
  applyObs(store, out, [ml(0, 0, 1.9, 10, 5), ml(0, 1, 2.0, 10, 5), ml(1, 0, 1.95, 10, 5), ml(1, 1, 1.9, 10, 5),
    ml(2, 0, 1.8, 40, 5), ml(2, 1, 2.1, 40, 5), ml(0, 0, 1.9, 10, 6)]);
  applyObs(store, out, [ml(1, 0, 1.95, 30, 5)]);
  drain(out);
  t.equal(store.dropBefore(5, 30, out), 3, 'three quotes observed before 30');
  const recs = drain(out);
  t.same(recs.map((r) => [r.kind, r.event, r.book, r.outcome]).sort(), [[CHANGE.REMOVED, 5, 0, 0], [CHANGE.REMOVED, 5, 0, 1], [CHANGE.REMOVED, 5, 1, 1]].sort(),
    'each emitted as REMOVED');
  t.same(store.ladderBooks(5, 0, NaN_, -1, 0), [1, 2], 'verified at the time itself: kept');
  t.same(store.ladderBooks(5, 0, NaN_, -1, 1), [2], 'side 1 keeps the quote observed after');
  t.equal(store.quote(5, 0, NaN_, -1, 0, 0), null, 'book 0 has no quote left on event 5');
  t.equal(store.quoteCount, 4, 'event 6 untouched');
  t.equal(store.dropBefore(5, 30, out), 0, 'again: nothing');
  t.equal(store.dropBefore(5, 50, out), 3, 'every quote of event 5 is older than 50');
  drain(out);
  t.equal(store.eventCount, 1, 'event 5 emptied and gone');
  applyObs(store, out, [ml(0, 0, 1.7, 60, 5), ml(0, 1, 2.2, 60, 5)]);
  t.same(drain(out).map((r) => r.kind), [CHANGE.NEW, CHANGE.NEW], 'a book quoting again after the drop is NEW');
  t.equal(store.dropBefore(99, 50, out), 0, 'an unknown event: nothing');
});

t.test('price store - restore rebuilds quotes without emitting and keeps both timestamps', async (t) => {
  const src = new PriceStore();
  const out = new RecordBuffer(CHG.STRIDE);
  const model = new ReadModel();
  for (const e of [1, 2]) model.upsertEvent(e, `ev${e}`, 'basketball_nba', 0, 'A', 'B', 'upcoming', 0);
  applyObs(src, out, [
    ml(1, 0, 2.0, 100), ml(1, 0, 2.0, 900), ml(2, 0, 2.0, 50), ml(3, 0, 2.2, 300), ml(3, 1, 1.7, 300),
    spread(1, -2.5, 0, 1.9, 100), spread(2, -3, 1, 1.95, 120), spread(2, -3, 1, 1.95, 700),
    { event: 2, market: 6, point: 5.5, player: 3, outcome: 1, book: 4, price: 2.3, ts: 400 },
  ]);
  model.apply(out.data, out.length);
  out.take();

  const { records, count } = model.restoreRecords(0);
  t.equal(count, 7, 'seven RESTORE records from the read model');
  t.equal(records.length, count * RESTORE.STRIDE, 'RESTORE stride');

  const dst = new PriceStore(4);
  const before = dst.staleIgnored;
  dst.restore(records, count);
  t.equal(out.length, 0, 'nothing emitted into any buffer');
  t.equal(dst.staleIgnored, before, 'nothing counted stale');
  t.equal(dst.quoteCount, 7, 'seven quotes rebuilt');
  t.same(dst.quote(1, 0, NaN_, -1, 0, 1), { price: 2.0, lineChangedAt: 100, verifiedAt: 900, lastUpdate: 900 }, 'line_changed_at and verified_at kept');
  t.same(dst.quote(1, 2, -3, -1, 1, 2), { price: 1.95, lineChangedAt: 120, verifiedAt: 700, lastUpdate: 700 }, 'spread quote kept');
  t.same(dst.quote(2, 6, 5.5, 3, 1, 4), { price: 2.3, lineChangedAt: 400, verifiedAt: 400, lastUpdate: 400 }, 'prop quote kept');
  t.same(dst.ladderBooks(1, 0, NaN_, -1, 0), src.ladderBooks(1, 0, NaN_, -1, 0), 'ladder order rebuilt (time priority from line_changed_at)');
  t.same(dst.ladderBooks(1, 0, NaN_, -1, 0), [3, 2, 1], '2.2, then 2.0 at ts 50 before 2.0 at ts 100');
  t.equal(dst.group(1, 2, -1)!.bookLine.get(1)!.point, -2.5, 'book lines rebuilt');

  // the restored store behaves like the original afterwards
  applyObs(dst, out, [ml(1, 0, 2.0, 800), ml(1, 0, 2.0, 1000), spread(1, -3, 0, 1.9, 50)]);
  t.same(drain(out).map((r) => KIND_NAME[r.kind]), ['VERIFIED'], 'ts 800 < verified 900 is stale, 1000 verifies, an older move is refused');
  t.equal(dst.staleIgnored, 2, 'two stale after restore');
});

t.test('price store - listener line state: reserved only on an empty store, zero for a new line, kept through growth and freed lines', async (t) => {
  const store = new PriceStore(4);
  const out = new RecordBuffer(CHG.STRIDE, 1);
  store.reserveLineState(3);
  t.equal(store.lineStride, 10, 'seven numbers of identity and holders, then the three reserved');
  // 200 events: the line records grow many times from room for a few lines
  const obs: Obs[] = [];
  for (let e = 0; e < 200; e++) obs.push(ml(1, 0, 1.9, 10, e));
  applyObs(store, out, obs.slice(0, 1));
  t.throws(() => store.reserveLineState(3), /holds lines/, 'not once a line exists');
  const line = store.line(0, 0, NaN_, -1)!.id;
  const at = line * store.lineStride + 7;
  t.same([...store.lineRecords.subarray(at, at + 3)], [0, 0, 0], 'a new line starts with its state zero');
  store.lineRecords[at + 2] = 42;
  applyObs(store, out, obs.slice(1));
  t.equal(store.lineRecords[line * store.lineStride + 7 + 2], 42, 'the state is where it was after the records grew');
  t.equal(store.lineEvent(line), 0, 'and the line identity before it');
  t.ok(store.lineLive(line) && store.lineBooks(line) === 1, 'one book holds the line');
  store.removeEvent(0, out);
  t.notOk(store.lineLive(line), 'its last book gone, the line is freed');
  t.notOk(store.lineLive(store.lineIdLimit + 5), 'an id never used is not live');
});

t.test('price store - listener prefetch: every observation of a group of 64 whose book-line exists and whose price differs is announced before the group is applied', async (t) => {
  const store = new PriceStore(4);
  const out = new RecordBuffer(CHG.STRIDE, 1);
  const calls: string[] = [];
  store.listener = {
    prefetch: (line, outcome) => { calls.push(`prefetch ${line}/${outcome}`); },
    quote: (line, outcome, _slot, kind) => { calls.push(`quote ${line}/${outcome} ${KIND_NAME[kind]}`); },
    lineFreed: (line) => { calls.push(`freed ${line}`); },
  };
  applyObs(store, out, [ml(1, 0, 1.9, 10), ml(1, 1, 2.0, 10)]);
  const line = store.line(1, 0, NaN_, -1)!.id;
  t.same(calls, [`quote ${line}/0 NEW`, `quote ${line}/1 NEW`], 'a book-line made in the group: nothing to load ahead');
  calls.length = 0;
  applyObs(store, out, [ml(1, 0, 1.8, 20), ml(1, 1, 2.1, 20), ml(1, 1, 2.3, 15)]);
  t.same(calls, [
    `prefetch ${line}/0`, `prefetch ${line}/1`, `prefetch ${line}/1`,
    `quote ${line}/0 PRICE`, `quote ${line}/1 PRICE`,
  ], 'all three announced first; the stale one (ts 15 < 20) is found stale when applied, and changes nothing');
  calls.length = 0;
  applyObs(store, out, [ml(1, 0, 1.8, 25), ml(1, 1, 2.2, 25)]);
  t.same(calls, [`prefetch ${line}/1`, `quote ${line}/0 VERIFIED`, `quote ${line}/1 PRICE`],
    'a verification (the price the quote holds) is not announced: it reads neither the ladder nor the line state');
  calls.length = 0;
  const many: Obs[] = [];
  for (let i = 0; i < 70; i++) many.push(ml(1, 0, i % 2 === 0 ? 1.7 : 1.75, 30 + i));
  applyObs(store, out, many);
  const expected = [
    ...Array.from({ length: 64 }, () => `prefetch ${line}/0`), ...Array.from({ length: 64 }, () => `quote ${line}/0 PRICE`),
    // the price held when the second group is loaded is the 64th's, 1.75: its three at 1.75 are not announced
    // (the load is a guess made before the group is applied), though each moves the price from 1.7 when applied
    ...Array.from({ length: 3 }, () => `prefetch ${line}/0`), ...Array.from({ length: 6 }, () => `quote ${line}/0 PRICE`),
  ];
  t.same(calls, expected, '70 observations: a group of 64 announced and applied, then the other 6, announced by the price held before them');
});

t.test('price store - growth past the initial capacity keeps data intact (capacity 4, 1000 quotes)', async (t) => {
  const store = new PriceStore(4);
  const out = new RecordBuffer(CHG.STRIDE, 1);
  const obs: Obs[] = [];
  // 25 events x 5 books x 2 outcomes x 4 players = 1000 distinct quotes on one prop market
  for (let e = 0; e < 25; e++) for (let b = 0; b < 5; b++) for (let o = 0; o < 2; o++) for (let p = 0; p < 4; p++) {
    obs.push({ event: e, market: 8, point: 0.5 + p, player: p, outcome: o, book: b, price: 1.5 + ((e * 7 + b * 3 + o + p) % 20) / 10, ts: 10 + e });
  }
  t.equal(applyObs(store, out, obs), 1000, '1000 applied');
  t.equal(store.quoteCount, 1000, '1000 live');
  t.equal(out.length, 1000, 'one NEW record each (the change buffer grew from 1 record too)');
  const recs = drain(out);
  t.ok(recs.every((r, i) => r.kind === CHANGE.NEW && r.book === obs[i].book && r.price === obs[i].price && r.point === obs[i].point), 'records in input order');
  t.ok(store.capacity >= 1000, `capacity grew from 4 to ${store.capacity} slots`);
  let bad = 0;
  for (const o of obs) {
    const q = store.quote(o.event, o.market, o.point, o.player, o.outcome, o.book);
    if (q === null || q.price !== o.price || q.lineChangedAt !== o.ts || q.verifiedAt !== o.ts) bad++;
  }
  t.equal(bad, 0, 'all 1000 quotes intact');
  let laddersSorted = true;
  for (let e = 0; e < 25; e++) for (let o = 0; o < 2; o++) for (let p = 0; p < 4; p++) {
    const books = store.ladderBooks(e, 8, 0.5 + p, p, o);
    const prices = books.map((b) => store.quote(e, 8, 0.5 + p, p, o, b)!.price);
    for (let k = 1; k < prices.length; k++) if (prices[k] > prices[k - 1]) laddersSorted = false;
    if (books.length !== 5) laddersSorted = false;
  }
  t.ok(laddersSorted, 'every ladder holds 5 books best-first after growth');
});

// ---------------------------------------------------------------------------------------------------------------
// Property test: incremental store + replayed read model == from-scratch reference


interface RefQuote {
  price: number;
  changedAt: number;
  verifiedAt: number;
}
interface RefLine {
  event: number;
  market: number;
  player: number;
  book: number;
  point: number;
  q: (RefQuote | null)[];
}

/** From-scratch model of the rules: one line per (event, market, player, book); per-quote staleness; a move to a
 *  new point is refused when older than the book's newest quote on its line, else removes every old quote. */
class Reference {
  readonly lines = new Map<string, RefLine>();
  stale = 0;

  static key(event: number, market: number, player: number, book: number): string {
    return `${event}|${market}|${player}|${book}`;
  }

  observe(o: Obs, emit: Rec[]): boolean {
    const key = Reference.key(o.event, o.market, o.player, o.book);
    let line = this.lines.get(key);
    if (line !== undefined && !sameNum(line.point, o.point)) {
      let newest = 0;
      for (const q of line.q) if (q !== null) newest = Math.max(newest, q.changedAt, q.verifiedAt);
      if (o.ts < newest) {
        this.stale++;
        return false;
      }
      line.q.forEach((q, k) => {
        if (q !== null) emit.push(this.rec(CHANGE.REMOVED, line!, k, q));
      });
      this.lines.delete(key);
      line = undefined;
    }
    if (line === undefined) {
      line = { event: o.event, market: o.market, player: o.player, book: o.book, point: o.point, q: [null, null, null] };
      this.lines.set(key, line);
    }
    const q = line.q[o.outcome];
    if (q === null) {
      const nq = { price: o.price, changedAt: o.ts, verifiedAt: o.ts };
      line.q[o.outcome] = nq;
      emit.push(this.rec(CHANGE.NEW, line, o.outcome, nq));
      return true;
    }
    if (o.ts < q.changedAt || o.ts < q.verifiedAt) {
      this.stale++;
      return false;
    }
    q.verifiedAt = o.ts;
    if (q.price === o.price) {
      emit.push(this.rec(CHANGE.VERIFIED, line, o.outcome, q));
    } else {
      q.price = o.price;
      q.changedAt = o.ts;
      emit.push(this.rec(CHANGE.PRICE, line, o.outcome, q));
    }
    return true;
  }

  removeEvent(event: number, emit: Rec[]): number {
    let n = 0;
    for (const [key, line] of this.lines) {
      if (line.event !== event) continue;
      line.q.forEach((q, k) => {
        if (q !== null) {
          emit.push(this.rec(CHANGE.REMOVED, line, k, q));
          n++;
        }
      });
      this.lines.delete(key);
    }
    return n;
  }

  rec(kind: number, line: RefLine, outcome: number, q: RefQuote): Rec {
    return {
      kind, event: line.event, market: line.market, point: line.point, player: line.player, outcome, book: line.book,
      price: q.price, changedAt: q.changedAt, verifiedAt: q.verifiedAt,
    };
  }

  count(): number {
    let n = 0;
    for (const line of this.lines.values()) for (const q of line.q) if (q !== null) n++;
    return n;
  }
}

const EVENTS = 5;
const BOOKS = 7;
/** market -> points a book may quote (NaN: no point), outcomes, players */
const MKT = [
  { points: [NaN_], outcomes: 2, players: [-1] },
  { points: [NaN_], outcomes: 3, players: [-1] },
  { points: [-3.5, -3, -2.5, 0, 2.5], outcomes: 2, players: [-1] },
  { points: [210.5, 211, 211.5], outcomes: 2, players: [-1] },
  { points: [0.5, 1.5, 24.5], outcomes: 2, players: [0, 1, 2] },
];
const PRICES = [1.5, 1.8, 1.87, 1.9, 1.91, 1.95, 2.0, 2.05, 2.1, 2.5, 3.4];

function recKey(r: Rec): string {
  return `${r.kind}|${r.event}|${r.market}|${r.point}|${r.player}|${r.outcome}|${r.book}|${r.price}|${r.changedAt}|${r.verifiedAt}`;
}

/** The assertions the property check uses (a tap Test satisfies it). */
interface Asserts {
  equal(found: unknown, wanted: unknown, message: string): boolean;
  ok(value: unknown, message: string): boolean;
}

function runProperty(t: Asserts, seed: number, ops: number): void {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const store = new PriceStore(16);
  const model = new ReadModel();
  const ref = new Reference();
  const out = new RecordBuffer(CHG.STRIDE, 4);
  for (let e = 0; e < EVENTS; e++) model.upsertEvent(e, `ev${e}`, 'basketball_nba', 0, `H${e}`, `A${e}`, 'upcoming', 0);

  let clock = 1_700_000_000_000;
  const history: Obs[] = [];
  let pending: Obs[] = [];
  let mismatches = 0;
  let firstMismatch = '';
  const kinds = [0, 0, 0, 0, 0];
  let staleOps = 0;

  const note = (what: string): void => {
    mismatches++;
    if (firstMismatch === '') firstMismatch = what;
  };

  /** Ladder order must equal a sort of the reference quotes: price desc, line_changed_at asc, book asc. */
  const lad = { checked: 0, bad: 0, firstBad: '', deepest: 0, ties: 0, indexed: 0, badIndex: 0 };
  const checkLadders = (): Map<string, { book: number; q: RefQuote }[]> => {
    const ladders = new Map<string, { book: number; q: RefQuote }[]>();
    for (const rl of ref.lines.values()) {
      rl.q.forEach((q, o) => {
        if (q === null) return;
        const lk = `${rl.event}|${rl.market}|${rl.point}|${rl.player}|${o}`;
        let l = ladders.get(lk);
        if (l === undefined) ladders.set(lk, (l = []));
        l.push({ book: rl.book, q });
      });
    }
    for (const [lk, entries] of ladders) {
      entries.sort((a, b) => b.q.price - a.q.price || a.q.changedAt - b.q.changedAt || a.book - b.book);
      const [e, m, pt, pl, o] = lk.split('|').map(Number);
      const got = store.ladderBooks(e, m, pt, pl, o);
      const want = entries.map((x) => x.book);
      lad.checked++;
      if (got.join(',') !== want.join(',')) {
        lad.bad++;
        if (lad.firstBad === '') lad.firstBad = `${lk}: store [${got}] reference [${want}]`;
      }
      lad.deepest = Math.max(lad.deepest, entries.length);
      for (let k = 1; k < entries.length; k++) {
        if (entries[k].q.price === entries[k - 1].q.price && entries[k].q.changedAt === entries[k - 1].q.changedAt) lad.ties++;
      }
    }
    // every quote knows where its tuple is (moves, removals and line moves keep the index)
    for (let line = 0; line < store.lineIdLimit; line++) {
      if (!store.lineLive(line)) continue;
      for (let o = 0; o < MAX_OUTCOMES; o++) {
        const l = store.ladder(line, o);
        for (let k = 0; k < l.length; k += LD.STRIDE) {
          lad.indexed++;
          if (store.tupleOf(l[k + LD.SLOT]) !== k) lad.badIndex++;
        }
      }
    }
    return ladders;
  };

  const flush = (): void => {
    if (pending.length === 0) return;
    const expected: Rec[] = [];
    let refApplied = 0;
    for (const o of pending) if (ref.observe(o, expected)) refApplied++;
    const applied = applyObs(store, out, pending);
    if (applied !== refApplied) note(`batch applied ${applied}, reference ${refApplied}`);
    const n = out.length;
    model.apply(out.data, n);
    const got = drain(out);
    const a = got.map(recKey);
    const b = expected.map(recKey);
    if (a.join('\n') !== b.join('\n')) note(`records differ: store [${a.slice(0, 6).join(', ')}] reference [${b.slice(0, 6).join(', ')}]`);
    for (const r of got) kinds[r.kind]++;
    pending = [];
    checkLadders();
  };

  for (let i = 0; i < ops; i++) {
    const r = rnd();
    if (rnd() < 0.3) clock += 1 + Math.floor(rnd() * 3); // runs of equal timestamps: ties on line_changed_at
    if (r < 0.01) {
      flush();
      const e = Math.floor(rnd() * EVENTS);
      const expected: Rec[] = [];
      const nRef = ref.removeEvent(e, expected);
      const nStore = store.removeEvent(e, out);
      if (nRef !== nStore) note(`removeEvent(${e}) removed ${nStore}, reference ${nRef}`);
      model.apply(out.data, out.length);
      const got = drain(out);
      const a = got.map(recKey).sort();
      const b = expected.map(recKey).sort();
      if (a.join('\n') !== b.join('\n')) note(`removeEvent(${e}) records differ`);
      for (const rr of got) kinds[rr.kind]++;
      continue;
    }
    let o: Obs;
    if (r < 0.25 && history.length > 0) {
      // repeat a past observation: same key and price, now (a verification) or at its old ts (stale, or equal)
      const h = pick(history);
      o = { ...h, ts: rnd() < 0.7 ? clock : h.ts };
    } else if (r < 0.35 && history.length > 0) {
      // older timestamp on a known key, possibly a new price
      const h = pick(history);
      o = { ...h, price: rnd() < 0.5 ? h.price : pick(PRICES), ts: clock - 1 - Math.floor(rnd() * 40) };
      staleOps++;
    } else if (r < 0.5 && history.length > 0) {
      // line move: same (event, market, player, book), another point, sometimes older
      const h = pick(history);
      const m = MKT[h.market];
      o = { ...h, point: pick(m.points), outcome: Math.floor(rnd() * m.outcomes), price: pick(PRICES), ts: rnd() < 0.8 ? clock : clock - Math.floor(rnd() * 30) };
    } else {
      // a fresh observation: mostly on the book's current line so ladders get deep, sometimes anywhere
      const market = Math.floor(rnd() * MKT.length);
      const m = MKT[market];
      const event = Math.floor(rnd() * EVENTS);
      const player = pick(m.players);
      const book = Math.floor(rnd() * BOOKS);
      const current = ref.lines.get(Reference.key(event, market, player, book));
      const point = current !== undefined && rnd() < 0.85 ? current.point : pick(m.points);
      o = { event, market, point, player, outcome: Math.floor(rnd() * m.outcomes), book, price: pick(PRICES), ts: clock };
    }
    history.push(o);
    if (history.length > 400) history.shift();
    pending.push(o);
    if (pending.length >= 1 + Math.floor(rnd() * 64)) flush();
  }
  flush();

  t.equal(mismatches, 0, `seed ${seed}: every batch's records and counts match the reference${firstMismatch ? ` (first: ${firstMismatch})` : ''}`);
  t.equal(store.staleIgnored, ref.stale, `seed ${seed}: staleIgnored = reference stale count (${ref.stale})`);
  t.equal(store.quoteCount, ref.count(), `seed ${seed}: quoteCount = reference (${ref.count()})`);
  t.ok(kinds[CHANGE.NEW] > 0 && kinds[CHANGE.PRICE] > 0 && kinds[CHANGE.VERIFIED] > 0 && kinds[CHANGE.REMOVED] > 0 && ref.stale > 0,
    `seed ${seed}: the run exercised NEW ${kinds[1]}, PRICE ${kinds[2]}, VERIFIED ${kinds[3]}, REMOVED ${kinds[4]}, stale ${ref.stale} (${staleOps} older-ts ops)`);

  // 1. every store quote is in the reference with the same state, and the counts agree
  let storeQuotes = 0;
  let badStore = 0;
  let emptyLines = 0;
  for (let e = 0; e < EVENTS; e++) {
    const seenLines = new Set<number>();
    store.forEachQuote(e, (line, outcome, slot) => {
      storeQuotes++;
      const book = store.bookOf(slot);
      const rl = ref.lines.get(Reference.key(e, line.market, line.player, book));
      const rq = rl?.q[outcome] ?? null;
      if (rl === undefined || rq === null || !sameNum(rl.point, line.point) || rq.price !== store.priceOf(slot) ||
        rq.changedAt !== store.changedAtOf(slot) || rq.verifiedAt !== store.verifiedAtOf(slot)) badStore++;
      if (!seenLines.has(line.id)) {
        seenLines.add(line.id);
        if (line.quotes === 0) emptyLines++;
      }
    });
  }
  t.equal(badStore, 0, `seed ${seed}: every store quote (forEachQuote) equals the reference`);
  t.equal(storeQuotes, ref.count(), `seed ${seed}: forEachQuote visits as many quotes as the reference holds`);
  t.equal(emptyLines, 0, `seed ${seed}: no empty line is kept`);

  // 2. every reference line is a store group's current line for that book, and groups hold only live points
  let badLines = 0;
  const pointsByGroup = new Map<string, Set<string>>();
  for (const rl of ref.lines.values()) {
    const g = store.group(rl.event, rl.market, rl.player);
    const bl = g?.bookLine.get(rl.book);
    if (bl === undefined || !sameNum(bl.point, rl.point)) badLines++;
    const gk = `${rl.event}|${rl.market}|${rl.player}`;
    let set = pointsByGroup.get(gk);
    if (set === undefined) pointsByGroup.set(gk, (set = new Set()));
    set.add(String(rl.point));
  }
  t.equal(badLines, 0, `seed ${seed}: each book's current line matches the reference point`);
  // every line the store can find exists in the reference with as many quotes, and no other (old lines go)
  const refLineQuotes = new Map<string, number>();
  for (const rl of ref.lines.values()) {
    const lk = `${rl.event}|${rl.market}|${rl.point}|${rl.player}`;
    refLineQuotes.set(lk, (refLineQuotes.get(lk) ?? 0) + rl.q.filter((q) => q !== null).length);
  }
  let badGroups = 0;
  for (let e = 0; e < EVENTS; e++) {
    MKT.forEach((m, market) => {
      for (const player of m.players) {
        for (const point of m.points) {
          const line = store.line(e, market, point, player);
          const want = refLineQuotes.get(`${e}|${market}|${point}|${player}`);
          if ((line === undefined) !== (want === undefined) || (line !== undefined && line.quotes !== want)) badGroups++;
        }
      }
    });
  }
  t.equal(badGroups, 0, `seed ${seed}: the store has a line exactly where the reference has quotes, with as many quotes (old lines disappear when empty)`);
  t.ok(pointsByGroup.size > 0, `seed ${seed}: ${pointsByGroup.size} groups hold quotes at the end`);

  // 3. ladders (checked after every batch as well, see checkLadders)
  const ladders = checkLadders();
  t.ok(lad.deepest >= 4, `seed ${seed}: some ladders are deep (deepest ${lad.deepest})`);
  t.ok(lad.ties > 0, `seed ${seed}: ${lad.ties} times neighbours tied on price and line_changed_at (book id decides)`);
  t.equal(lad.bad, 0, `seed ${seed}: ${lad.checked} ladder checks, all in reference order${lad.firstBad ? ` (first: ${lad.firstBad})` : ''}`);
  t.equal(lad.badIndex, 0, `seed ${seed}: ${lad.indexed} tuple positions looked up, each where its tuple is`);

  // 4. the read model replayed from the change records equals the reference
  let badModel = 0;
  let modelQuotes = 0;
  let evQuotes = 0;
  for (let e = 0; e < EVENTS; e++) {
    const ev = model.event(e)!;
    evQuotes += ev.quotes;
    for (const r of ev.records) {
      const rl = ref.lines.get(Reference.key(e, model.market(r), model.player(r), model.book(r)));
      for (let o = 0; o < MAX_OUTCOMES; o++) {
        const p = model.price(r, o);
        const rq = rl?.q[o] ?? null;
        if (p === 0) {
          if (rq !== null) badModel++;
          continue;
        }
        modelQuotes++;
        if (rl === undefined || rq === null || !sameNum(rl.point, model.point(r)) || rq.price !== p ||
          rq.changedAt !== model.changedAt(r, o) || rq.verifiedAt !== model.verifiedAt(r, o)) badModel++;
      }
    }
  }
  for (const rl of ref.lines.values()) if (model.find(rl.event, rl.market, rl.player, rl.book) < 0) badModel++;
  t.equal(badModel, 0, `seed ${seed}: every read-model quote equals the reference (point, price, line_changed_at, verified_at) and every reference book-line is in the read model`);
  t.equal(modelQuotes, ref.count(), `seed ${seed}: read model holds as many quotes as the reference`);
  t.equal(evQuotes, ref.count(), `seed ${seed}: EventView.quotes sums to the reference count`);

  // 5. a store restored from the read model equals the original
  const restored = new PriceStore(4);
  const { records, count } = model.restoreRecords(0);
  restored.restore(records, count);
  let badRestore = 0;
  for (const [lk] of ladders) {
    const [e, m, pt, pl, o] = lk.split('|').map(Number);
    const a = store.ladderBooks(e, m, pt, pl, o);
    const b = restored.ladderBooks(e, m, pt, pl, o);
    if (a.join(',') !== b.join(',')) badRestore++;
    for (const book of a) {
      const qa = store.quote(e, m, pt, pl, o, book)!;
      const qb = restored.quote(e, m, pt, pl, o, book);
      if (qb === null || qa.price !== qb.price || qa.lineChangedAt !== qb.lineChangedAt || qa.verifiedAt !== qb.verifiedAt) badRestore++;
    }
  }
  t.equal(restored.quoteCount, store.quoteCount, `seed ${seed}: restored store holds as many quotes`);
  t.equal(badRestore, 0, `seed ${seed}: restored ladders and quotes equal the original`);
}

t.test('price store - property: incremental store and replayed read model equal a from-scratch reference', async (t) => {
  for (const seed of [1, 2, 3, 42, 1337, 20260101]) {
    t.test(`seed ${seed}`, async (t) => runProperty(t, seed, 5000));
  }
});
