// The period's last credits buy the rows they pay for: a JSON export priced above the balance is cut to 1,000 rows a
// credit left, says so (X-Export-Rows, X-Export-Credits, x-result-has-more: true) and charges them; read from the
// database or from the export cache alike. Before, 2 credits bought a complete 200,512-row export (201 credits).

import t from 'tap';
import { startTestApp } from './helpers/app.js';
import { seedClosingDay } from './helpers/db.js';

interface Export {
  row_count: number;
  rows: { player_name: string }[];
}

t.test('exports - the last credits of a period buy 1,000 rows each, not the whole export', async (t) => {
  const app = await startTestApp(t);
  await seedClosingDay(app.app.services.db, 2500);
  const cache = app.app.services.exports!.cache;
  const path = (k: string, q = '') => `/v1/historical/closing-lines.json?date=2026-11-19${q}&apiKey=${k}`;

  // from the database: 2 credits left for a 3-credit export
  const poor = await app.key('business', 2);
  const cut = await app.get(path(poor, '&limit=2400'));
  t.equal(cut.status, 200, '200');
  t.same([cut.headers.get('x-export-rows'), cut.headers.get('x-export-credits'), cut.headers.get('x-result-has-more')], ['2000', '2', 'true'],
    'X-Export-Rows 2000, X-Export-Credits 2, x-result-has-more: true');
  t.same([cut.headers.get('x-requests-last'), cut.headers.get('x-ratelimit-remaining')], ['2', '0'], '2 credits charged, none left');
  const body = (await cut.json()) as Export;
  t.same([body.row_count, body.rows.length], [2000, 2000], 'the body holds the 2,000 rows paid for, and says so');
  t.equal(cache.size.entries, 0, 'a body cut to one account\'s credits is not cached');
  const out = await app.get(path(poor, '&limit=2400'));
  t.equal(((await out.json()) as { error_code: string }).error_code, 'OUT_OF_USAGE_CREDITS', 'then the account is out of credits');

  // the whole export, cached; then cut from the cache for an account with 2 credits
  const rich = await app.key('business', 1000);
  const whole = await app.get(path(rich));
  t.same([whole.headers.get('x-export-rows'), whole.headers.get('x-result-has-more')], ['2500', 'false'], 'the whole export: 2,500 rows, no more');
  const all = (await whole.json()) as Export;
  t.equal(cache.size.entries, 1, 'cached');
  const other = await app.key('business', 2);
  const head = await fetch(app.base + path(other), { method: 'HEAD' });
  t.same([head.headers.get('x-export-rows'), head.headers.get('x-export-credits'), head.headers.get('x-result-has-more'), head.headers.get('x-requests-last')],
    ['2000', '2', 'true', '0'], 'HEAD answers what its GET would deliver, free');
  const hit = await app.get(path(other));
  t.ok(hit.headers.get('age') !== null, 'served from the cache');
  t.same([hit.headers.get('x-export-rows'), hit.headers.get('x-export-credits'), hit.headers.get('x-result-has-more')], ['2000', '2', 'true'],
    'cut from the cache: X-Export-Rows 2000, x-result-has-more: true');
  t.same([hit.headers.get('x-requests-last'), hit.headers.get('x-ratelimit-remaining')], ['2', '0'], '2 credits charged');
  const part = (await hit.json()) as Export;
  t.equal(part.row_count, 2000, 'row_count 2000');
  t.same(part.rows, all.rows.slice(0, 2000), 'the first 2,000 rows of the cached export');
  const again = await app.get(path(rich));
  t.ok(again.headers.get('age') !== null, 'the entry is served again');
  t.same(((await again.json()) as Export).rows, all.rows, 'whole for everyone else');
});
