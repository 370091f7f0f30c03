// Line movers (engine/movers.ts): per quote, from its price when the window opened to its newest; and what the ring
// holds, so that a window reaching back further says so instead of passing off a shorter one as the window asked.

import t from 'tap';
import { MoveLog } from '../engine/movers.js';

t.test('movers - from the price when the window opened to the newest, largest change first', async (t) => {
  const log = new MoveLog(10);
  log.price(1000, 1, 0, -1, 5, 0, Number.NaN, 2.0);
  log.price(2000, 1, 0, -1, 5, 0, Number.NaN, 2.2);
  log.price(3000, 1, 0, -1, 5, 0, Number.NaN, 2.5);
  log.price(3500, 1, 0, -1, 6, 0, Number.NaN, 1.9);
  log.price(4000, 1, 0, -1, 6, 0, Number.NaN, 1.8);
  const all = log.movers(0, 10);
  t.same(all.map((m) => [m.book, m.from, m.to, m.moves]), [[5, 2.0, 2.5, 2], [6, 1.9, 1.8, 1]], 'book 5 moved 2.0 -> 2.5 (-10 points), book 6 1.9 -> 1.8 (+2.9)');
  t.equal(all[0].prob_change_pct, -10, '1/2.5 - 1/2.0 = -0.1: -10 points');
  t.same(log.movers(2500, 10).map((m) => [m.book, m.from, m.to]), [[5, 2.2, 2.5], [6, 1.9, 1.8]], 'a window opening at 2.5 s: book 5 from 2.2');
  t.equal(log.heldSince, 1000, 'every move since the first price is held');
});

t.test('movers - a full ring lets its oldest moves go, and heldSince says from when it holds them', async (t) => {
  const log = new MoveLog(3);
  t.ok(Number.isNaN(log.heldSince), 'nothing known before the first price');
  log.price(1000, 1, 0, -1, 5, 0, Number.NaN, 2.0);
  for (let i = 1; i <= 5; i++) log.price(1000 + i * 1000, 1, 0, -1, 5, 0, Number.NaN, 2.0 + i / 10);
  // moves at 2 s .. 6 s; the ring holds the last three (4, 5, 6 s): the move at 3 s was the newest let go
  t.equal(log.heldSince, 3000, 'held since the newest move let go');
  const m = log.movers(0, 10)[0];
  t.same([m.from, m.to, m.moves], [2.2, 2.5, 3], 'a window reaching further starts at the oldest move held (2.2 at 3 s)');
});

t.test('movers - a book moving to another line at the same price moved its quote (regression: not seen)', async (t) => {
  const log = new MoveLog(10);
  log.price(1000, 1, 2, -1, 5, 0, -4.5, 1.91);
  log.price(2000, 1, 2, -1, 5, 0, -7.5, 1.91);
  log.price(3000, 1, 2, -1, 5, 0, -3.5, 1.91);
  log.price(4000, 1, 2, -1, 5, 0, -3.5, 1.91);
  const [m] = log.movers(0, 10);
  t.same([m?.moves, m?.fromPoint, m?.point, m?.from, m?.to], [2, -4.5, -3.5, 1.91, 1.91], 'two line moves (a verification at -3.5 is none): from -4.5 to -3.5');
});
