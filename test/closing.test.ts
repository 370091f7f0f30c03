// engine/closing.ts: which pregame quotes make a closing row.

import t from 'tap';
import { BOOK_INDEX, MARKET_INDEX } from '../engine/ingest.js';
import { PregameEvent, lineKey, type PregameQuote } from '../engine/closing.js';

const SPREADS = MARKET_INDEX.get('spreads')!;
const PIN = BOOK_INDEX.get('pinnacle')!;
const C = 1_800_000_000_000;
const meta = { id: 'cl_u1', sport: 'basketball_nba', commence: C, home: 'H', away: 'A' };
const key = lineKey(SPREADS, -1, PIN);
const noName = () => '';

function spreads(pe: PregameEvent, outcome: number, point: number, price: number, ts: number): boolean {
  return pe.observe(key, SPREADS, -1, noName, PIN, outcome, point, price, ts);
}

/** home -4.5 / away +4.5 at 1.90 / 1.91, then home -5 at 1.85 (the book moves: its -4.5 quotes go); with `back`,
 *  home -4.5 again at 1.95 */
function moved(back: boolean): PregameEvent {
  const pe = new PregameEvent(meta);
  spreads(pe, 0, -4.5, 1.9, C - 3000);
  spreads(pe, 1, -4.5, 1.91, C - 3000);
  spreads(pe, 0, -5, 1.85, C - 2000);
  if (back) spreads(pe, 0, -4.5, 1.95, C - 1000);
  return pe;
}

t.test('closing - a side quoted before a line move never pairs with one quoted after it', async (t) => {
  // regression: to -5 and back to -4.5 with the home side only: the row paired the new home 1.95 with the away
  // 1.91 withdrawn at the move
  const pe = moved(true);
  t.same(pe.closingRows().map((r) => [r.line, r.over_price, r.under_price, r.snapshot_time]), [[-4.5, 1.95, null, C - 1000]],
    'home -4.5 at 1.95, away null');
  // the plain move, and both sides quoted again after it
  const pe2 = moved(false);
  t.same(pe2.closingRows().map((r) => [r.line, r.over_price, r.under_price]), [[-5, 1.85, null]], 'a move: the new line, its other side null');
  spreads(pe2, 1, -5, 1.95, C - 1500);
  t.same(pe2.closingRows().map((r) => [r.line, r.over_price, r.under_price]), [[-5, 1.85, 1.95]], 'both sides at the new line');
  t.notOk(spreads(pe2, 1, -4.5, 1.8, C - 2500), 'a late-arriving quote at the line the book left is not kept');
});

t.test('closing - the withdrawal is persisted and read back in any order', async (t) => {
  const pe = moved(true);
  const saved: PregameQuote[] = pe.takeDirty();
  t.same(saved.map((q) => [q.outcome, q.price]).sort(), [[0, 1.95], [1, 0]], 'the away side is saved withdrawn (price 0)');
  for (const order of [saved, [...saved].reverse()]) {
    const back = new PregameEvent(meta);
    for (const q of order) back.observe(key, q.market, -1, noName, q.book, q.outcome, q.point, q.price, q.ts);
    t.same(back.closingRows().map((r) => [r.line, r.over_price, r.under_price]), [[-4.5, 1.95, null]], 'after a restart: the same row');
  }
});

t.test('closing - a quote that left before the start is withdrawn; a removal of a point no longer held changes nothing', async (t) => {
  // the store's REMOVED records carry the removed quote's own point and last write: a withdrawn market goes, the
  // old point of a moved line (its removal seen after the new quote) leaves the new one alone
  const pe = new PregameEvent(meta);
  spreads(pe, 0, -4.5, 1.9, C - 3000);
  spreads(pe, 1, -4.5, 1.91, C - 3000);
  spreads(pe, 0, -5, 1.85, C - 2000);
  pe.withdraw(key, 0, -4.5, C - 3000);
  t.same(pe.closingRows().map((r) => [r.line, r.over_price, r.under_price]), [[-5, 1.85, null]], 'the old point\'s removal after the move: the new home side stays');
  pe.withdraw(key, 0, -5, C - 2000);
  t.same(pe.closingRows(), [], 'the book withdraws its spread: no closing row');
  t.same(pe.takeDirty().map((q) => [q.outcome, q.price]).sort(), [[0, 0], [1, 0]], 'persisted withdrawn (price 0), as a move\'s withdrawal is');
  spreads(pe, 0, -5, 1.87, C - 1000);
  t.same(pe.closingRows().map((r) => [r.line, r.over_price]), [[-5, 1.87]], 'quoted again after the withdrawal: it closes');
  pe.withdraw(key, 0, -5, C - 2000);
  t.same(pe.closingRows().map((r) => [r.line, r.over_price]), [[-5, 1.87]], 'a removal older than the held quote changes nothing');
});
