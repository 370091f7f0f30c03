// Tier table and billing-period arithmetic (engine/tiers.ts): calendar months in UTC, clamped at month ends.

import t from 'tap';
import { TIER_CREDITS, TIERS, addMonths, periodAt } from '../engine/tiers.js';

t.test('tiers - DESIGN.md allowances, the free cap, WebSocket from business', async (t) => {
  t.same(TIER_CREDITS, { free: 1_000, starter: 20_000, pro: 100_000, business: 1_000_000, enterprise: 5_000_000, scale: 50_000_000 }, 'monthly credits');
  t.same(TIERS.filter((x) => x.requestsPerSecond > 0).map((x) => [x.tier, x.requestsPerSecond]), [['free', 60]], 'only free has a per-second cap');
  t.same(TIERS.filter((x) => x.wsWindowMs !== null).map((x) => [x.tier, x.wsWindowMs]), [['business', 1000], ['enterprise', 500], ['scale', 0]], 'WebSocket windows');
  t.same(TIERS.map((x) => [x.tier, x.wsStreams]), [['free', null], ['starter', null], ['pro', null], ['business', 50], ['enterprise', 200], ['scale', 1000]],
    'open streams per account: none below business, more with each tier above');
});

t.test('periods - calendar months, clamped, landing on the period that holds now', async (t) => {
  const iso = (ms: number) => new Date(ms).toISOString();
  t.equal(iso(addMonths(Date.UTC(2031, 0, 31, 12), 1)), '2031-02-28T12:00:00.000Z', 'Jan 31 + 1 month = Feb 28');
  t.equal(iso(addMonths(Date.UTC(2032, 0, 31), 1)), '2032-02-29T00:00:00.000Z', 'leap year');
  t.equal(iso(addMonths(Date.UTC(2031, 10, 15), 2)), '2032-01-15T00:00:00.000Z', 'across a year');
  const end = Date.UTC(2031, 1, 28, 12);
  t.equal(periodAt(end, end - 1), null, 'before the end: no new period');
  const p = periodAt(end, end)!;
  t.same([iso(p.start), iso(p.end)], ['2031-02-28T12:00:00.000Z', '2031-03-28T12:00:00.000Z'], 'at the end: the next month');
  const q = periodAt(end, Date.UTC(2031, 5, 1))!;
  t.same([iso(q.start), iso(q.end)], ['2031-05-28T12:00:00.000Z', '2031-06-28T12:00:00.000Z'], 'months later: the period holding now');
});
