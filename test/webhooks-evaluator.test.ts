// The webhook evaluator on its own (engine/webhook-events.ts): change records in, events out, no threads or
// sockets. Edge cases the end-to-end tests do not reach: freshness classes through degraded and stale, the
// parser alarm's re-arming, steam's window and direction, line moves accumulating from the last report.

import t from 'tap';
import { BOOKMAKERS, MARKETS } from '../engine/catalogue.js';
import { CHANGE, CHG } from '../engine/records.js';
import { WebhookEvaluator, cents, type WebhookEvent } from '../engine/webhook-events.js';

const book = (k: string) => BOOKMAKERS.findIndex((b) => b.key === k);
const H2H = MARKETS.findIndex((m) => m.key === 'h2h');
const T0 = 1_800_000_000_000;

function setup(types: string[]) {
  const out: WebhookEvent[] = [];
  const ev = new WebhookEvaluator({
    event: (idx) => (idx === 0 ? { id: 'e0', sport: 'basketball_nba', home: 'H', away: 'A', commence: T0 + 3_600_000, status: 'upcoming' } : undefined),
    player: () => null,
    emit: (e) => out.push(e),
    feed: 'test',
  });
  ev.setWanted(types);
  return { ev, out };
}

/** one CHG record per [kind, book, outcome, price, t] */
function chg(rows: [number, number, number, number, number][]): Float64Array {
  const rec = new Float64Array(rows.length * CHG.STRIDE);
  rows.forEach(([kind, b, o, price, at], i) => {
    const off = i * CHG.STRIDE;
    rec[off + CHG.KIND] = kind;
    rec[off + CHG.EVENT] = 0;
    rec[off + CHG.MARKET] = H2H;
    rec[off + CHG.POINT] = Number.NaN;
    rec[off + CHG.PLAYER] = -1;
    rec[off + CHG.OUTCOME] = o;
    rec[off + CHG.BOOK] = b;
    rec[off + CHG.PRICE] = price;
    rec[off + CHG.LINE_CHANGED_AT] = at;
    rec[off + CHG.VERIFIED_AT] = at;
  });
  return rec;
}

t.test('cents close the gap between -100 and +100', async (t) => {
  t.equal(cents(1 + 100 / 105) - cents(2.05), -10, '-105 to +105 is 10 cents');
  t.equal(cents(1.91) - cents(1.95), -5, '-110 to -105 is 5 cents');
});

t.test('source quality: breach once through degraded and stale, recovery once; a book never ok never breaches', async (t) => {
  const { ev, out } = setup(['source_quality.breach', 'source_quality.recovery']);
  const dk = book('draftkings'); // fast: 15 / 60 / 180 s
  const bov = book('bovada'); // standard: 30 / 120 / 300 s
  const newest: number[] = [];
  const counters = { observations: 0, rejected: 0 };
  newest[dk] = T0;
  newest[bov] = T0 - 200_000; // first seen in breach
  ev.tick(T0, newest, counters);
  ev.tick(T0 + 30_000, newest, counters); // dk degraded
  t.equal(out.length, 0, 'degraded is no breach');
  ev.tick(T0 + 61_000, newest, counters); // dk breach
  ev.tick(T0 + 200_000, newest, counters); // dk stale, bovada stale
  t.same(out.map((e) => [e.type, e.data.book, e.data.to]), [['source_quality.breach', 'draftkings', 'breach']], 'one breach: draftkings (bovada was never ok)');
  newest[dk] = T0 + 205_000;
  ev.tick(T0 + 206_000, newest, counters);
  ev.tick(T0 + 207_000, newest, counters);
  t.same(out.map((e) => e.type), ['source_quality.breach', 'source_quality.recovery'], 'one recovery');
  t.equal(out[1].data.breached_for_s, 145, 'breached for 145 s');
  t.equal(out[0].sport, null, 'no sport: sport filters pass it');
});

t.test('parser.degraded: once above 10 %, re-armed below 5 %', async (t) => {
  const { ev, out } = setup(['parser.degraded']);
  const c = { observations: 0, rejected: 0 };
  ev.tick(T0, [], c);
  c.observations = 100; c.rejected = 5;
  ev.tick(T0 + 1000, [], c);
  t.equal(out.length, 0, '5 % is fine');
  c.observations = 200; c.rejected = 40;
  ev.tick(T0 + 2000, [], c);
  ev.tick(T0 + 3000, [], c);
  t.equal(out.length, 1, '20 % fires once');
  c.observations = 10_200; c.rejected = 40;
  ev.tick(T0 + 70_000, [], c);
  c.observations = 10_300; c.rejected = 80;
  ev.tick(T0 + 71_000, [], c);
  t.equal(out.length, 1, 'a minute without rejections re-arms it; 40 in 10,100 items since is below 10 %');
  c.observations = 10_400; c.rejected = 180;
  ev.tick(T0 + 140_000, [], c);
  t.equal(out.length, 2, 'fires again after re-arming');
});

t.test('steam: 3 books, same direction, within 10 s', async (t) => {
  const { ev, out } = setup(['line_move.steam']);
  const [a, b, c, d] = ['draftkings', 'fanduel', 'betmgm', 'bovada'].map(book);
  ev.changes(chg([[CHANGE.NEW, a, 0, 2.0, T0], [CHANGE.NEW, b, 0, 2.0, T0], [CHANGE.NEW, c, 0, 2.0, T0], [CHANGE.NEW, d, 0, 2.0, T0]]), 4, T0);
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.9, T0 + 1000], [CHANGE.PRICE, b, 0, 2.1, T0 + 2000], [CHANGE.PRICE, c, 0, 1.9, T0 + 3000]]), 3, T0 + 3000);
  t.equal(out.length, 0, 'two shortening, one drifting: no steam');
  ev.changes(chg([[CHANGE.PRICE, d, 0, 1.9, T0 + 15_000]]), 1, T0 + 15_000);
  t.equal(out.length, 0, 'the third shortening came 14 s after the first: outside the window');
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.8, T0 + 16_000], [CHANGE.PRICE, c, 0, 1.85, T0 + 17_000]]), 2, T0 + 17_000);
  t.equal(out.length, 1, 'three books within 10 s');
  t.same((out[0].data.books as { book: string }[]).map((x: { book: string }) => x.book).sort(), ['betmgm', 'bovada', 'draftkings'], 'the books');
  t.equal(out[0].data.direction, 'shortening', 'direction');
});

t.test('line_move accumulates from the last report; no state without subscribers', async (t) => {
  const { ev, out } = setup(['line_move']);
  const a = book('draftkings');
  ev.changes(chg([[CHANGE.NEW, a, 0, 1.91, T0]]), 1, T0);
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.93, T0 + 1]]), 1, T0 + 1);
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.89, T0 + 2]]), 1, T0 + 2);
  t.equal(out.length, 0, '-110, -108, -112: never 5 cents from -110');
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.87, T0 + 3]]), 1, T0 + 3);
  t.same([(out[0].data.from as any).price_american, (out[0].data.to as any).price_american], [-110, -115], '-110 to -115');
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.85, T0 + 4]]), 1, T0 + 4);
  t.equal(out.length, 1, '-118 is 3 cents from the last report');
  ev.setWanted([]);
  t.equal((ev as unknown as { quotes: Map<string, unknown> }).quotes.size, 0, 'state dropped with the last subscriber');
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.5, T0 + 5]]), 1, T0 + 5);
  t.equal(out.length, 1, 'nothing evaluated');
});

t.test('line_move: a quote tracked only for steam or odds_drop so far anchors at its price when line_move is wanted (it was reported from 0)', async (t) => {
  const { ev, out } = setup(['line_move.steam']);
  const a = book('draftkings');
  ev.changes(chg([[CHANGE.NEW, a, 0, 1.95, T0]]), 1, T0);
  ev.setWanted(['line_move.steam', 'line_move']);
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.93, T0 + 1]]), 1, T0 + 1);
  t.equal(out.filter((e) => e.type === 'line_move').length, 0, 'a 3-cent move is no line move (from 0 it read as 8 cents and more)');
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.6, T0 + 2]]), 1, T0 + 2);
  const moves = out.filter((e) => e.type === 'line_move');
  t.same(moves.map((e) => (e.data.from as { price: number }).price), [1.93], 'measured from the anchored price');
});

t.test('odds_drop and parser.degraded percents are served to 12 significant digits', async (t) => {
  const { ev, out } = setup(['odds_drop']);
  const a = book('draftkings');
  ev.changes(chg([[CHANGE.NEW, a, 0, 2.08, T0]]), 1, T0);
  ev.changes(chg([[CHANGE.PRICE, a, 0, 1.85, T0 + 1000]]), 1, T0 + 1000);
  const drop = out.find((e) => e.type === 'odds_drop')!;
  t.equal(drop.data.drop_pct, 11.0576923077, '(1 - 1.85 / 2.08) * 100 is 11.057692307692301 in doubles');
});
