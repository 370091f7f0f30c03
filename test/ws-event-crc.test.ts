import t from 'tap';
import { BOOKMAKERS } from '../engine/catalogue.js';
import { MARKET_INDEX } from '../engine/ingest.js';
import { CHANGE, CHG } from '../engine/records.js';
import { ReadModel } from '../engine/read-model.js';
import { EventCrcs } from '../http/ws/event-crc.js';
import { crcOf, eventItems } from '../http/ws/frames.js';

// The kept CRCs (event-crc.ts) against the reference (frames.ts crcOf over the event's items, the computation a client
// makes over its book) after every step of random changes: prices, new and removed quotes, points that move, teams
// renamed, players with and without a '|' in their name.

const MARKET_KEYS = ['h2h', 'spreads', 'totals', 'player_points', 'player_rebounds'];
const markets = MARKET_KEYS.map((k) => MARKET_INDEX.get(k)!);
const PROPS = new Set(['player_points', 'player_rebounds'].map((k) => MARKET_INDEX.get(k)!));
const players = ['LeBron James', 'Jayson Tatum', 'A|B Odd Name'];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function world(seed: number, withOddPlayer: boolean) {
  const rand = rng(seed);
  const rm = new ReadModel();
  const player = (id: number) => (id < 0 ? null : players[id]);
  const crcs = new EventCrcs(rm, player);
  const ev = rm.upsertEvent(0, 'ev1', 'basketball_nba', 1_800_000_000_000, 'Boston Celtics', 'Los Angeles Lakers', 'upcoming', 0);
  const rec = new Float64Array(CHG.STRIDE);
  const apply = (kind: number, market: number, point: number, playerId: number, o: number, book: number, price: number) => {
    rec[CHG.KIND] = kind; rec[CHG.EVENT] = 0; rec[CHG.MARKET] = market; rec[CHG.POINT] = point; rec[CHG.PLAYER] = playerId;
    rec[CHG.OUTCOME] = o; rec[CHG.BOOK] = book; rec[CHG.PRICE] = price; rec[CHG.LINE_CHANGED_AT] = 1; rec[CHG.VERIFIED_AT] = 1;
    rm.apply(rec, 1);
  };
  const randomChange = () => {
    const market = markets[Math.floor(rand() * markets.length)];
    const prop = PROPS.has(market);
    const playerId = prop ? Math.floor(rand() * (withOddPlayer ? 3 : 2)) : -1;
    const point = market === MARKET_INDEX.get('h2h') ? NaN : prop ? 20.5 + Math.floor(rand() * 3) : -3.5 + Math.floor(rand() * 3);
    const book = Math.floor(rand() * 6);
    const o = Math.floor(rand() * 2);
    if (rand() < 0.15) apply(CHANGE.REMOVED, market, point, playerId, o, book, 0);
    else apply(CHANGE.PRICE, market, point, playerId, o, book, Math.round((1.5 + rand() * 2) * 100) / 100);
  };
  return { rm, ev, crcs, player, randomChange, rand };
}

t.test('event CRCs - equal to the reference after every random change', async (t) => {
  for (const [seed, odd] of [[1, false], [2, false], [3, true]] as const) {
    const w = world(seed, odd);
    let mismatches = 0;
    for (let step = 0; step < 1500; step++) {
      w.randomChange();
      if (step % 300 === 299) w.ev.home = w.ev.home === 'Boston Celtics' ? 'Boston Celtics II' : 'Boston Celtics';
      if (w.crcs.of(w.ev) !== crcOf(eventItems(w.rm, w.ev, w.player))) mismatches++;
    }
    t.equal(mismatches, 0, `seed ${seed}${odd ? ' (a player with | in the name)' : ''}: every step's CRC equals the reference`);
    t.ok(w.ev.quotes > 20, `seed ${seed}: the event holds ${w.ev.quotes} quotes`);
  }
});

t.test('event CRCs - a price change reuses the order, a new quote or a moved point rebuilds it', async (t) => {
  const w = world(4, false);
  for (let i = 0; i < 400; i++) w.randomChange();
  w.crcs.of(w.ev);
  const r = w.ev.records.find((x) => w.rm.price(x, 0) !== 0 && w.rm.market(x) === MARKET_INDEX.get('totals'))!;
  t.ok(r !== undefined, 'a totals quote to move');
  const rec = new Float64Array(CHG.STRIDE);
  const set = (point: number, price: number) => {
    rec[CHG.KIND] = CHANGE.PRICE; rec[CHG.EVENT] = 0; rec[CHG.MARKET] = w.rm.market(r); rec[CHG.POINT] = point; rec[CHG.PLAYER] = -1;
    rec[CHG.OUTCOME] = 0; rec[CHG.BOOK] = w.rm.book(r); rec[CHG.PRICE] = price; rec[CHG.LINE_CHANGED_AT] = 2; rec[CHG.VERIFIED_AT] = 2;
    w.rm.apply(rec, 1);
  };
  const before = w.crcs.rebuilds;
  set(w.rm.point(r), w.rm.price(r, 0) + 0.01);
  t.equal(w.crcs.of(w.ev), crcOf(eventItems(w.rm, w.ev, w.player)), 'a price change: the reference CRC');
  t.equal(w.crcs.rebuilds, before, 'without a rebuild');
  set(w.rm.point(r) + 10, w.rm.price(r, 0));
  t.equal(w.crcs.of(w.ev), crcOf(eventItems(w.rm, w.ev, w.player)), 'a moved point: the reference CRC');
  t.equal(w.crcs.rebuilds, before + 1, 'after a rebuild');
  t.ok(BOOKMAKERS.length >= 6, 'six books to draw from');
});
